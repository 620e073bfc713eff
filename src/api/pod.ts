import type { KubeObject, ResourceKind } from './meta.js';

export const PodKind: ResourceKind = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  namespaced: true,
};

/** The part of a Pod cert-csi reads: its identity (events and ownerReferences name it) and placement. */
export interface Pod extends KubeObject {
  spec?: { nodeName?: string; serviceAccountName?: string };
}
