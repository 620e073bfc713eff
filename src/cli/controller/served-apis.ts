import { ClusterTrustBundleKind } from '../../api/cluster-trust-bundle.js';
import type { Logger } from '../../api/logger.js';
import type { ResourceKind } from '../../api/meta.js';
import { PodCertificateRequestKind } from '../../api/pod-certificate-request.js';
import { POD_CERTIFICATE_SIGNER } from '../../issuer/podcertificaterequests/pod-certificate-signer.js';
import { TRUST_BUNDLE_PUBLISHER } from '../../issuer/podcertificaterequests/trust-bundle-publisher.js';
import { wantedVersions } from '../../store/kubernetes/served-version-policy.js';
import { resourceNameOf } from '../../store/object-rules.js';

// Controllers of APIs a cluster may not serve: PodCertificateRequests and ClusterTrustBundles
// are served as v1 from 1.37, and as v1beta1 in 1.35 and 1.36 only where enabled (feature
// gates PodCertificateRequest, ClusterTrustBundle, and --runtime-config).
const OPTIONAL_APIS: ReadonlyArray<{ controller: string; kind: ResourceKind }> = [
  { controller: POD_CERTIFICATE_SIGNER, kind: PodCertificateRequestKind },
  { controller: TRUST_BUNDLE_PUBLISHER, kind: ClusterTrustBundleKind },
];

/** The version a cluster serves a kind in (KubernetesStore.servedVersion), undefined for none. */
export type ServedVersionLookup = (kind: ResourceKind) => Promise<string | undefined>;

/**
 * The enabled controllers minus those whose API the cluster serves in none of the versions
 * cert-csi speaks, as discovery says: a controller waiting for a cache that can never sync
 * would keep every other controller from starting. With a logger, each dropped controller is
 * told in one line naming the resource. A failed discovery keeps the controller (its informer
 * retries with backoff).
 */
export async function servedControllers(
  servedVersion: ServedVersionLookup,
  enabled: ReadonlySet<string>,
  logger?: Logger,
): Promise<Set<string>> {
  const served = new Set(enabled);
  for (const { controller, kind } of OPTIONAL_APIS) {
    if (!enabled.has(controller)) continue;
    let version: string | undefined;
    try {
      version = await servedVersion(kind);
    } catch {
      continue;
    }
    if (version !== undefined) continue;
    served.delete(controller);
    logger?.info(
      {
        controller,
        resource: resourceNameOf(kind),
        versions: wantedVersions(kind).join(', '),
      },
      'the cluster does not serve this API: controller not started',
    );
  }
  return served;
}
