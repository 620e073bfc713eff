import { CertificateKind } from '../../api/certificate.js';
import { CertificateRequestKind } from '../../api/certificate-request.js';
import { ClusterIssuerKind, IssuerKind } from '../../api/issuer.js';
import type { ResourceKind } from '../../api/meta.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import type { ResourceStore } from '../../store/resource-store.js';

// What `cert-csi check api` asks of a cluster: that the API server serves cert-manager.io/v1
// for the kinds cert-csi uses, and that this user can list CertificateRequests through it. cmctl
// also makes a dry-run create to reach the webhooks; our store makes no dry-run requests, so
// the webhook is not exercised (the help says so).

/** The kinds whose API must be served, in the order they are checked. */
export const CHECKED_KINDS: readonly ResourceKind[] = [
  CertificateKind,
  CertificateRequestKind,
  IssuerKind,
  ClusterIssuerKind,
];

/** What the check reads of a cluster. */
export interface ApiCheckStore extends Pick<ResourceStore, 'list'> {
  /** The served version of kind, undefined when none (KubernetesStore's discovery). */
  servedVersion(kind: ResourceKind): Promise<string | undefined>;
}

/** The API not ready: what is missing. */
export class ApiNotReadyError extends Error {
  readonly errorKind: ErrorKind = 'CERT_CSI_API_REQUEST_FAILED';
  override readonly name = 'ApiNotReadyError';
}

/** Resolves when the cluster serves the cert-manager API to this user; throws saying why not. */
export async function checkClusterApi(store: ApiCheckStore, namespace: string): Promise<void> {
  for (const kind of CHECKED_KINDS) {
    const served = await store.servedVersion(kind);
    if (served !== kind.version) {
      throw new ApiNotReadyError(
        `${kind.plural}.${kind.group}/${kind.version} is not served${served === undefined ? '' : ` (only ${served})`}: are the CRDs installed (deploy/manifests/crds.yaml)?`,
      );
    }
  }
  await store.list(CertificateRequestKind, { namespace });
}

/** How to wait for readiness: --wait and --interval, and the clock to do it with. */
export interface Polling {
  waitMs: number;
  intervalMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

/**
 * Runs check until it resolves, as cmctl check api --wait does: once when waitMs is 0, else
 * again every intervalMs until waitMs has passed since the first try; throws the last failure.
 */
export async function pollUntilReady(check: () => Promise<void>, polling: Polling): Promise<void> {
  const started = polling.now();
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      const left = started + polling.waitMs - polling.now();
      if (left <= 0) throw err;
      await polling.sleep(Math.min(polling.intervalMs, left));
    }
  }
}
