import type { KubeObject, ResourceKind } from './meta.js';

/** Kubernetes' ClusterTrustBundle as served in 1.35 and 1.36 (k8s.io/api certificates/v1beta1). */
export const ClusterTrustBundleKind: ResourceKind = {
  group: 'certificates.k8s.io',
  version: 'v1beta1',
  kind: 'ClusterTrustBundle',
  plural: 'clustertrustbundles',
  namespaced: false,
};

export interface ClusterTrustBundle extends KubeObject {
  spec: {
    /** Set for a signer-linked bundle, whose name must start with `<signerName, / as :>:`. */
    signerName?: string;
    /** PEM CERTIFICATE blocks of CA certificates, no headers, no duplicates. */
    trustBundle: string;
  };
}

/** The name prefix a bundle linked to signerName must have (`example.com/x` → `example.com:x:`). */
export function trustBundleNamePrefix(signerName: string): string {
  return `${signerName.replaceAll('/', ':')}:`;
}
