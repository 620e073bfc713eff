import { type CertificateRequest, CertificateRequestKind } from '../../api/certificate-request.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../../api/labels.js';
import { objectKey } from '../../api/meta.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import { keyOf } from '../../controller/controller-definition.js';
import { byLabel } from '../../controller/indexes.js';
import type { Informer } from '../../store/informer.js';
import { resourceNameOf } from '../../store/object-rules.js';
import type { ListOptions } from '../../store/resource-store.js';
import { type RequestProgress, requestProgress } from './request-progress.js';

const byVolumeHash = byLabel(VOLUME_ID_HASH_LABEL);

/** Thrown when a wait ends without a final answer; carries the last known progress. */
export class RequestWaitError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'aborted' | 'deleted',
  ) {
    super(message);
    this.name = 'RequestWaitError';
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_REQUEST_WAIT_ENDED';
  }
}

type Waiter = (request: CertificateRequest | undefined) => void;

/**
 * The informer scope of a node plugin that runs alone (Kubernetes mode): its node's requests
 * only, by the node-id-hash label, so the node never lists or watches other nodes' requests.
 */
export function nodeRequestScope(nodeId: string): ReadonlyMap<string, ListOptions> {
  return new Map([
    [
      resourceNameOf(CertificateRequestKind),
      { labelSelector: `${NODE_ID_HASH_LABEL}=${hashIdentifier(nodeId)}` },
    ],
  ]);
}

/**
 * This node's CertificateRequests, from the process's CertificateRequest informer: scoped to
 * the node by nodeRequestScope in Kubernetes mode, shared with the controllers in embedded
 * mode. It learns of every change from the watch instead of polling, and finds a volume's
 * requests through an index by the volume-id-hash label.
 */
export class RequestTracker {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly nodeHash: string;

  constructor(
    private readonly informer: Informer<CertificateRequest>,
    nodeId: string,
  ) {
    this.nodeHash = hashIdentifier(nodeId);
    informer.addIndex(byVolumeHash);
    const notify = (request: CertificateRequest, gone = false) => {
      const waiters = this.waiters.get(keyOf(request));
      for (const waiter of waiters ?? []) waiter(gone ? undefined : request);
    };
    informer.on('add', (request) => notify(request));
    informer.on('update', (_old, request) => notify(request));
    informer.on('delete', (request) => notify(request, true));
  }

  /**
   * Starts the informer (if nobody has) and resolves once its cache is filled; aborting
   * signal stops it and rejects, for a start that cannot finish (API down).
   */
  async start(signal?: AbortSignal): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync(signal);
  }

  /** The cached request, if this node has it. */
  get(namespace: string, name: string): CertificateRequest | undefined {
    return this.informer.get(name, namespace);
  }

  /** Every cached request of one volume, newest first. */
  requestsOfVolume(volumeId: string): CertificateRequest[] {
    // The informer may hold other nodes' requests too (embedded mode shares the controllers').
    return this.informer
      .byIndex(byVolumeHash, hashIdentifier(volumeId))
      .filter((request) => request.metadata.labels?.[NODE_ID_HASH_LABEL] === this.nodeHash)
      .sort((a, b) =>
        (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
      );
  }

  /**
   * Resolves with the request once it reaches a final state (issued, denied or failed).
   * Rejects with RequestWaitError when the signal aborts or the request is deleted; the
   * message then says what the request was last waiting for.
   */
  waitForFinal(
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<{ request: CertificateRequest; progress: RequestProgress }> {
    const key = objectKey(namespace, name);
    return new Promise((resolve, reject) => {
      let lastWait = `request "${name}" has not been seen by this node yet`;
      const waiters = this.waiters.get(key) ?? new Set<Waiter>();
      this.waiters.set(key, waiters);
      const finish = () => {
        waiters.delete(waiter);
        if (waiters.size === 0) this.waiters.delete(key);
        signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = (request) => {
        if (!request) {
          finish();
          reject(new RequestWaitError(`request "${name}" was deleted`, 'deleted'));
          return;
        }
        const progress = requestProgress(request);
        if (progress.state === 'waiting') {
          lastWait = progress.message;
          return;
        }
        finish();
        resolve({ request, progress });
      };
      const onAbort = () => {
        finish();
        const timedOut = signal.reason instanceof Error && signal.reason.name === 'TimeoutError';
        reject(
          new RequestWaitError(
            `waiting for request: ${lastWait}`,
            timedOut ? 'timeout' : 'aborted',
          ),
        );
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort);
      waiters.add(waiter);
      const cached = this.informer.get(name, namespace);
      if (cached) waiter(cached);
    });
  }
}
