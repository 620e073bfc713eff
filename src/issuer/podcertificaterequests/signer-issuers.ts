import type { Issuer } from '../../api/issuer.js';
import { issuerOfSignerName, signerNameOfIssuer } from '../../api/issuer-signer-name.js';
import { objectKey } from '../../api/meta.js';
import type { Secret } from '../../api/secret.js';
import type { SharedInformers } from '../../controller/shared-informers.js';
import { issuersByCASecret } from '../indexes.js';
import { issuerCaches } from '../issuer-lookup.js';

/**
 * The issuers behind Kubernetes signer names, read from the process's issuer caches: the
 * issuer a signer name designates, and the signer names whose CA a Secret holds.
 */
export function signerIssuers(informers: SharedInformers, clusterResourceNamespace: string) {
  const { issuers, clusterIssuers } = issuerCaches(informers);
  issuers.addIndex(issuersByCASecret);
  clusterIssuers.addIndex(issuersByCASecret);
  return {
    issuers,
    clusterIssuers,
    /** The issuer signerName designates, when it exists in the cache. */
    issuerOf(signerName: string): Issuer | undefined {
      const ref = issuerOfSignerName(signerName);
      if (!ref) return undefined;
      return ref.kind === 'ClusterIssuer'
        ? clusterIssuers.get(ref.name)
        : issuers.get(ref.name, ref.namespace);
    },
    /** The signer names of the issuers whose CA Secret this is (a ClusterIssuer's lives in the cluster resource namespace). */
    signersOfSecret(secret: Secret): string[] {
      const { namespace, name } = secret.metadata;
      const namespaced = issuers.byIndex(issuersByCASecret, objectKey(namespace, name));
      const clusterScoped =
        namespace === clusterResourceNamespace
          ? clusterIssuers.byIndex(issuersByCASecret, name)
          : [];
      return [...namespaced, ...clusterScoped].map(signerNameOfIssuer);
    },
  };
}
