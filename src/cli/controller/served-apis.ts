import { ClusterTrustBundleKind } from '../../api/cluster-trust-bundle.js';
import type { Logger } from '../../api/logger.js';
import type { ResourceKind } from '../../api/meta.js';
import { PodCertificateRequestKind } from '../../api/pod-certificate-request.js';
import { POD_CERTIFICATE_SIGNER } from '../../issuer/podcertificaterequests/pod-certificate-signer.js';
import { TRUST_BUNDLE_PUBLISHER } from '../../issuer/podcertificaterequests/trust-bundle-publisher.js';
import { isStoreError } from '../../store/errors.js';
import { resourceNameOf } from '../../store/object-rules.js';
import type { ResourceStore } from '../../store/resource-store.js';

// Controllers of APIs a cluster may not serve: PodCertificateRequests and ClusterTrustBundles
// are beta and off by default in 1.35 and 1.36 (gates PodCertificateRequest, ClusterTrustBundle).
const OPTIONAL_APIS: ReadonlyArray<{ controller: string; kind: ResourceKind }> = [
  { controller: POD_CERTIFICATE_SIGNER, kind: PodCertificateRequestKind },
  { controller: TRUST_BUNDLE_PUBLISHER, kind: ClusterTrustBundleKind },
];

/**
 * The enabled controllers minus those whose API the cluster does not serve (a list answered
 * 404), each dropped with one log line: a controller waiting for a cache that can never
 * sync would keep every other controller from starting. Any other answer keeps it.
 */
export async function servedControllers(
  store: ResourceStore,
  enabled: ReadonlySet<string>,
  logger: Logger,
): Promise<Set<string>> {
  const served = new Set(enabled);
  for (const { controller, kind } of OPTIONAL_APIS) {
    if (!enabled.has(controller)) continue;
    try {
      // A selection no object has: the probe reads nothing, and lists no signer's requests.
      await store.list(kind, { fieldSelector: 'spec.signerName=cert-csi.io/api-probe' });
    } catch (err) {
      if (!isStoreError(err, 'NotFound')) continue;
      served.delete(controller);
      logger.info(
        { controller, resource: `${resourceNameOf(kind)}/${kind.version}` },
        'the cluster does not serve this API: controller not started',
      );
    }
  }
  return served;
}
