import type { KubeObject, ResourceKind } from './meta.js';

export const ConfigMapKind: ResourceKind = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  /** Values base64-encoded, as in the API. */
  binaryData?: Record<string, string>;
}
