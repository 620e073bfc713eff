import type { KubeObject, ResourceKind } from '../api/meta.js';
import type { Clock } from '../base/clock.js';
import { Informer } from '../store/informer.js';
import { resourceNameOf } from '../store/object-rules.js';
import type { ListOptions, ResourceStore } from '../store/resource-store.js';

export interface SharedInformersOptions {
  clock?: Clock;
  /**
   * What this process lists of a kind, by `plural.group`: a namespace, a label and a field
   * selector (e.g. a node plugin lists only its own node's CertificateRequests and pods); kinds
   * not named are listed whole. A scope is one selector for the whole process: users that
   * need a subset each (a signer's requests, an issuer's CSRs) add an index instead.
   */
  scopes?: ReadonlyMap<string, ListOptions>;
  /** Told about list/watch failures (retried anyway) and handler exceptions. */
  onError?: (err: Error) => void;
}

/**
 * One informer per kind for the whole process, whoever asks for it: a kind is listed and
 * watched once, however many controllers (and the node plugin) use it. An informer asked
 * for after start() starts at once.
 */
export class SharedInformers {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private started = false;

  constructor(
    readonly store: ResourceStore,
    private readonly options: SharedInformersOptions = {},
  ) {}

  /** The process's informer of kind, created on first use. */
  informer<T extends KubeObject>(kind: ResourceKind): Informer<T> {
    const resource = resourceNameOf(kind);
    let informer = this.informers.get(resource);
    if (!informer) {
      const scope = this.options.scopes?.get(resource);
      informer = new Informer<KubeObject>(this.store, kind, {
        ...scope,
        ...(this.options.clock ? { clock: this.options.clock } : {}),
        ...(this.options.onError ? { onError: this.options.onError } : {}),
      });
      this.informers.set(resource, informer);
      if (this.started) informer.start();
    }
    return informer as unknown as Informer<T>;
  }

  /**
   * The cached objects of kind when this process runs an informer of it, else [] (without
   * creating one: a reader such as a metrics scrape must not start a list and watch).
   */
  cached<T extends KubeObject>(kind: ResourceKind): T[] {
    return (this.informers.get(resourceNameOf(kind))?.list() ?? []) as T[];
  }

  /** Starts every informer created so far and any created later. */
  start(): void {
    this.started = true;
    for (const informer of this.informers.values()) informer.start();
  }

  /**
   * Resolves once every informer has filled its cache. A cache that cannot sync (API down,
   * RBAC missing) retries forever: aborting signal stops the informers and rejects.
   */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
  }

  /** True once every informer created so far has synced. */
  hasSynced(): boolean {
    return [...this.informers.values()].every((informer) => informer.hasSynced());
  }

  /** Stops every informer (their caches stay readable). */
  stop(): void {
    this.started = false;
    for (const informer of this.informers.values()) informer.stop();
  }
}
