import type { KubeObject, ResourceKind } from './meta.js';

export const NamespaceKind: ResourceKind = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
};

/** A Namespace: cert-csi reads only its labels (the pod-certificate namespace selector). */
export type Namespace = KubeObject;
