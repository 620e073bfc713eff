import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../api/labels.js';
import { objectKey, splitObjectKey } from '../api/meta.js';
import type { Clock } from '../base/clock.js';
import { Informer } from '../store/informer.js';
import type { ResourceStore } from '../store/resource-store.js';
import { type RequestProgress, requestProgress } from './request-progress.js';

/** Thrown when a wait ends without a final answer; carries the last known progress. */
export class RequestWaitError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'aborted' | 'deleted',
  ) {
    super(message);
    this.name = 'RequestWaitError';
  }
}

type Waiter = (request: CertificateRequest | undefined) => void;

/**
 * This node's CertificateRequests, from one informer scoped by the node-id-hash label:
 * the node never lists or watches other nodes' requests, and learns of every change
 * from the watch instead of polling.
 */
export class RequestTracker {
  private readonly informer: Informer<CertificateRequest>;
  private readonly waiters = new Map<string, Set<Waiter>>();
  // Request keys by volume-id-hash label: a publish looks up its volume's requests without
  // scanning (and sorting) every request of the node.
  private readonly byVolumeHash = new Map<string, Set<string>>();

  constructor(store: ResourceStore, nodeId: string, clock?: Clock) {
    this.informer = new Informer<CertificateRequest>(store, CertificateRequestKind, {
      labelSelector: `${NODE_ID_HASH_LABEL}=${hashIdentifier(nodeId)}`,
      ...(clock ? { clock } : {}),
    });
    const notify = (request: CertificateRequest, gone = false) => {
      const key = objectKey(request.metadata.namespace, request.metadata.name);
      for (const waiter of this.waiters.get(key) ?? []) waiter(gone ? undefined : request);
    };
    this.informer.on('add', (request) => {
      this.index(request, true);
      notify(request);
    });
    this.informer.on('update', (old, request) => {
      this.index(old, false);
      this.index(request, true);
      notify(request);
    });
    this.informer.on('delete', (request) => {
      this.index(request, false);
      notify(request, true);
    });
  }

  /** Starts the informer and resolves once its cache is filled. */
  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  /** Stops the informer. */
  stop(): void {
    this.informer.stop();
  }

  /** The cached request, if this node has it. */
  get(namespace: string, name: string): CertificateRequest | undefined {
    return this.informer.get(name, namespace);
  }

  private index(request: CertificateRequest, present: boolean): void {
    const hash = request.metadata.labels?.[VOLUME_ID_HASH_LABEL];
    if (hash === undefined) return;
    const key = objectKey(request.metadata.namespace, request.metadata.name);
    let keys = this.byVolumeHash.get(hash);
    if (present) {
      if (!keys) {
        keys = new Set();
        this.byVolumeHash.set(hash, keys);
      }
      keys.add(key);
    } else if (keys?.delete(key) && keys.size === 0) {
      this.byVolumeHash.delete(hash);
    }
  }

  /** Every cached request of one volume, newest first. */
  requestsOfVolume(volumeId: string): CertificateRequest[] {
    const keys = this.byVolumeHash.get(hashIdentifier(volumeId)) ?? [];
    return [...keys]
      .map((key) => {
        const { namespace, name } = splitObjectKey(key);
        return this.informer.get(name, namespace);
      })
      .filter((request) => request !== undefined)
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
