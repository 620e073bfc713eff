import type { KubeObject, ResourceKind } from './meta.js';

/** Kubernetes' ClusterTrustBundle: `v1` from 1.37, `v1beta1` (off by default) in 1.35 and 1.36; same fields. */
export const ClusterTrustBundleKind: ResourceKind = {
  group: 'certificates.k8s.io',
  version: 'v1',
  versions: ['v1', 'v1beta1'],
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
