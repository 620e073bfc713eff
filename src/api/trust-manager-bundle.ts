import type { KubeObject, ResourceKind } from './meta.js';

/** trust-manager's Bundle (trust.cert-manager.io/v1alpha1, cluster-scoped). */
export const TrustManagerBundleKind: ResourceKind = {
  group: 'trust.cert-manager.io',
  version: 'v1alpha1',
  kind: 'Bundle',
  plural: 'bundles',
  namespaced: false,
};

/** The part of a Bundle cert-csi reads: where its target ConfigMap keeps the bundle. */
export interface TrustManagerBundle extends KubeObject {
  spec?: {
    target?: {
      /** The key of the ConfigMap named after the Bundle, in every selected namespace. */
      configMap?: { key?: string };
    };
  };
}
