import { type KubeObject, objectKey, type ResourceKind } from '../api/meta.js';
import { type Clock, systemClock, type TimerHandle } from '../base/clock.js';
import { asError } from '../base/error-message.js';
import { isStoreError } from './errors.js';
import { byNamespaceAndName } from './object-order.js';
import type { ListOptions, ResourceStore, Watch, WatchEvent } from './resource-store.js';
import { isNewerResourceVersion } from './resource-version.js';

export interface InformerOptions {
  /** Watch one namespace; omitted watches all of them. */
  namespace?: string;
  labelSelector?: string;
  /**
   * List and watch only the objects this selects (`spec.signerName=x`): an object that stops
   * matching leaves the cache (delete), one that starts matching enters it (add).
   */
  fieldSelector?: string;
  /** Every resyncMs, fire update(obj, obj) for every cached object; omitted: never. */
  resyncMs?: number;
  clock?: Clock;
  /** First retry delay after a failed list or watch (default 1 s); doubles on each failure. */
  relistBackoffMs?: number;
  /** Cap of the retry delay (default 30 s). */
  maxRelistBackoffMs?: number;
  /**
   * Told about list and watch failures (retried anyway) and handler exceptions. Without it a
   * handler exception is rethrown outside the informer, so bugs are not swallowed.
   */
  onError?: (err: Error) => void;
}

/**
 * A secondary index of an informer's cache: the values an object is found under (an owner's
 * UID, a label's value, the issuer or Secret it references). Registered once per name; every
 * user of a shared informer registers the same definition object.
 */
export interface IndexDefinition<T> {
  name: string;
  values(obj: T): readonly string[];
}

/** The handlers an informer calls, by event name. */
export interface InformerHandlers<T> {
  add: (obj: T) => void;
  update: (oldObj: T, newObj: T) => void;
  delete: (obj: T) => void;
}

const DEFAULT_RELIST_BACKOFF_MS = 1_000;
const DEFAULT_MAX_RELIST_BACKOFF_MS = 30_000;

/**
 * A list+watch cache of one kind, built only on the ResourceStore interface. It lists, fires
 * add for each object, then watches from the list's resourceVersion. A Gone watch relists at
 * once and turns the difference into add/update/delete; any other failure retries after an
 * exponential backoff. Handlers never see an object older than one they already saw.
 *
 * Cached objects (from get, list and handler arguments) are deeply frozen and shared:
 * callers must not mutate them (in strict mode it throws). Copy before changing.
 */
export class Informer<T extends KubeObject> {
  private readonly cache = new Map<string, T>();
  private readonly indexes = new Map<
    string,
    { definition: IndexDefinition<T>; keys: Map<string, Set<string>> }
  >();
  private readonly handlers: { [E in keyof InformerHandlers<T>]: Set<InformerHandlers<T>[E]> } = {
    add: new Set(),
    update: new Set(),
    delete: new Set(),
  };
  private readonly clock: Clock;
  private readonly listOptions: ListOptions;
  private running = false;
  private synced = false;
  private syncWaiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  // Bumped by every list+watch attempt and by stop, so late callbacks of an old attempt
  // are recognised and ignored.
  private attempt = 0;
  private watch: Watch | undefined;
  private retryTimer: TimerHandle | undefined;
  private resyncTimer: TimerHandle | undefined;
  private failures = 0;

  constructor(
    private readonly store: ResourceStore,
    private readonly kind: ResourceKind,
    private readonly options: InformerOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.listOptions = {
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}),
      ...(options.fieldSelector !== undefined ? { fieldSelector: options.fieldSelector } : {}),
    };
  }

  /** Registers a handler (before start, to see the initial adds); returns its removal. */
  on<E extends keyof InformerHandlers<T>>(event: E, handler: InformerHandlers<T>[E]): () => void {
    const set = this.handlers[event] as Set<InformerHandlers<T>[E]>;
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Starts listing and watching in the background; see waitForSync. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.listAndWatch();
  }

  /** Stops watching and retrying; the cache keeps its content and start() may resume. */
  stop(): void {
    this.running = false;
    this.attempt++;
    this.watch?.stop();
    this.watch = undefined;
    this.cancelTimer('retryTimer');
    this.cancelTimer('resyncTimer');
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const waiter of waiters) {
      waiter.reject(new Error(`informer for ${this.kind.kind} stopped before its cache synced`));
    }
  }

  /** True once the first list has filled the cache. */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Resolves once the first list has filled the cache; rejects if stopped before that. A cache
   * that cannot sync (API down, RBAC missing) retries forever: aborting signal stops the
   * informer, which rejects the wait.
   */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    const waiting = new Promise<void>((resolve, reject) =>
      this.syncWaiters.push({ resolve, reject }),
    );
    if (signal) {
      const giveUp = () => this.stop();
      if (signal.aborted) giveUp();
      else {
        signal.addEventListener('abort', giveUp, { once: true });
        const done = () => signal.removeEventListener('abort', giveUp);
        waiting.then(done, done);
      }
    }
    return waiting;
  }

  /** The cached object under a `namespace/name` (or `name`) key, as work queues carry them. */
  getByKey(key: string): T | undefined {
    return this.cache.get(key);
  }

  /** The cached object (frozen; do not mutate), or undefined. */
  get(name: string, namespace?: string): T | undefined {
    return this.cache.get(objectKey(namespace, name));
  }

  /**
   * Adds an index over the cache (also over what it already holds). Adding the same
   * definition again is a no-op; another definition under a taken name is a bug and throws.
   */
  addIndex(definition: IndexDefinition<T>): void {
    const existing = this.indexes.get(definition.name);
    if (existing) {
      if (existing.definition !== definition) {
        throw new Error(
          `informer for ${this.kind.kind}: index "${definition.name}" is already defined`,
        );
      }
      return;
    }
    const index = { definition, keys: new Map<string, Set<string>>() };
    this.indexes.set(definition.name, index);
    for (const [key, obj] of this.cache) indexObject(index, key, obj, true);
  }

  /** The cached objects (frozen) an index finds under value, by namespace and name. */
  byIndex(definition: IndexDefinition<T>, value: string): T[] {
    const index = this.indexes.get(definition.name);
    if (index?.definition !== definition) {
      throw new Error(`informer for ${this.kind.kind}: index "${definition.name}" was not added`);
    }
    const items: T[] = [];
    for (const key of index.keys.get(value) ?? []) {
      const item = this.cache.get(key);
      if (item) items.push(item);
    }
    return items.sort(byNamespaceAndName);
  }

  /** The cached objects (frozen; do not mutate) of one namespace or all, by namespace and name. */
  list(namespace?: string): T[] {
    const items: T[] = [];
    for (const item of this.cache.values()) {
      if (namespace === undefined || item.metadata.namespace === namespace) items.push(item);
    }
    return items.sort(byNamespaceAndName);
  }

  private async listAndWatch(): Promise<void> {
    const attempt = ++this.attempt;
    let listed: { items: T[]; resourceVersion: string };
    try {
      listed = await this.store.list<T>(this.kind, this.listOptions);
    } catch (err) {
      if (attempt === this.attempt) this.retryLater(err as Error);
      return;
    }
    if (attempt !== this.attempt) return;
    this.replace(listed.items);
    this.markSynced();
    const watchStarted = this.clock.now();
    this.watch = this.store.watch<T>(
      this.kind,
      { ...this.listOptions, resourceVersion: listed.resourceVersion },
      {
        onEvent: (event) => {
          if (attempt !== this.attempt) return;
          this.failures = 0;
          this.handleEvent(event);
        },
        onError: (err) => {
          if (attempt !== this.attempt) return;
          this.watch = undefined;
          if (isStoreError(err, 'Gone')) {
            // The cache missed changes it can no longer replay: relist and diff.
            void this.listAndWatch();
            return;
          }
          // A watch that stayed healthy for a while was not part of a failing streak.
          const maxBackoff = this.options.maxRelistBackoffMs ?? DEFAULT_MAX_RELIST_BACKOFF_MS;
          if (this.clock.now() - watchStarted >= maxBackoff) this.failures = 0;
          this.retryLater(err);
        },
      },
    );
  }

  private retryLater(err: Error): void {
    this.options.onError?.(err);
    const base = this.options.relistBackoffMs ?? DEFAULT_RELIST_BACKOFF_MS;
    const max = this.options.maxRelistBackoffMs ?? DEFAULT_MAX_RELIST_BACKOFF_MS;
    const delay = Math.min(max, base * 2 ** this.failures);
    this.failures++;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      void this.listAndWatch();
    }, delay);
  }

  private markSynced(): void {
    if (!this.synced) {
      this.synced = true;
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const waiter of waiters) waiter.resolve();
    }
    if (this.options.resyncMs !== undefined && this.resyncTimer === undefined)
      this.scheduleResync();
  }

  private scheduleResync(): void {
    const period = this.options.resyncMs ?? 0;
    this.resyncTimer = this.clock.setTimeout(() => {
      this.scheduleResync();
      for (const item of this.cache.values()) this.emit('update', item, item);
    }, period);
  }

  /** Makes the cache equal to a fresh list, firing the differences. */
  private replace(items: T[]): void {
    const listed = new Set<string>();
    for (const item of items) {
      const key = objectKey(item.metadata.namespace, item.metadata.name);
      listed.add(key);
      this.upsert(key, item);
    }
    for (const [key, item] of [...this.cache]) {
      if (listed.has(key)) continue;
      this.remove(key, item);
      this.emit('delete', item);
    }
  }

  private handleEvent(event: WatchEvent<T>): void {
    const key = objectKey(event.object.metadata.namespace, event.object.metadata.name);
    if (event.type !== 'DELETED') {
      this.upsert(key, event.object);
      return;
    }
    const cached = this.cache.get(key);
    if (!cached || !isNewer(event.object, cached)) return;
    this.remove(key, cached);
    this.emit('delete', deepFreeze(event.object));
  }

  private upsert(key: string, item: T): void {
    const cached = this.cache.get(key);
    if (cached && !isNewer(item, cached)) return;
    const frozen = deepFreeze(item);
    for (const index of this.indexes.values()) {
      if (cached) indexObject(index, key, cached, false);
      indexObject(index, key, frozen, true);
    }
    this.cache.set(key, frozen);
    if (cached) this.emit('update', cached, frozen);
    else this.emit('add', frozen);
  }

  private remove(key: string, cached: T): void {
    for (const index of this.indexes.values()) indexObject(index, key, cached, false);
    this.cache.delete(key);
  }

  private emit<E extends keyof InformerHandlers<T>>(
    event: E,
    ...args: Parameters<InformerHandlers<T>[E]>
  ): void {
    for (const handler of this.handlers[event]) {
      try {
        (handler as (...a: Parameters<InformerHandlers<T>[E]>) => void)(...args);
      } catch (err) {
        this.reportHandlerError(err);
      }
    }
  }

  private reportHandlerError(err: unknown): void {
    const error = asError(err);
    if (this.options.onError) this.options.onError(error);
    else
      queueMicrotask(() => {
        throw error;
      });
  }

  private cancelTimer(which: 'retryTimer' | 'resyncTimer'): void {
    const timer = this[which];
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this[which] = undefined;
  }
}

/** Adds (present) or removes the key under each of the object's index values. */
function indexObject<T>(
  index: { definition: IndexDefinition<T>; keys: Map<string, Set<string>> },
  key: string,
  obj: T,
  present: boolean,
): void {
  for (const value of index.definition.values(obj)) {
    let keys = index.keys.get(value);
    if (present) {
      if (!keys) {
        keys = new Set();
        index.keys.set(value, keys);
      }
      keys.add(key);
    } else if (keys?.delete(key) && keys.size === 0) {
      index.keys.delete(value);
    }
  }
}

function isNewer(candidate: KubeObject, current: KubeObject): boolean {
  return isNewerResourceVersion(
    candidate.metadata.resourceVersion,
    current.metadata.resourceVersion,
  );
}

function deepFreeze<V>(value: V): V {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
