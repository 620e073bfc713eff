import type { KubeObject } from '../../api/meta.js';
import {
  describeTrustBundleSource,
  type TrustBundleSource,
} from '../../api/trust-bundle-source.js';
import { type Clock, systemClock } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import { Informer } from '../../store/informer.js';
import type { ResourceStore } from '../../store/resource-store.js';
import { bundleFrom, type WatchSpec, watchesOf } from './source-watches.js';

/** A source's bundle as a CA file, or why it has none now. */
export type TrustBundleResolution = { ok: true; pem: string } | { ok: false; problem: string };

interface RunningWatch {
  informer: Informer<KubeObject>;
  users: Set<string>;
  removals: Array<() => void>;
  /** Why the last list or watch failed (an API that is not served, a missing permission). */
  lastError?: string;
}

export interface TrustBundleSourcesOptions {
  clock?: Clock;
  /** Told about list/watch failures (retried anyway). */
  onError?: (err: Error) => void;
  /** Told, after the cache changed, which users' sources may have a new bundle. */
  onChange: (users: string[]) => void;
}

/**
 * The trust bundles volumes follow, watched once per distinct object (or signer and label
 * selector) that some volume uses: a ConfigMap by name in its namespace, a ClusterTrustBundle
 * by name, the ClusterTrustBundles of a signer, a trust-manager Bundle. Never a list of every
 * ConfigMap, never a read per volume: each watch is started by its first user and stopped
 * with its last. A change to a watched object tells the users of that watch.
 */
export class TrustBundleSources {
  private readonly watches = new Map<string, RunningWatch>();
  private readonly usersSources = new Map<string, TrustBundleSource>();
  private readonly waiters = new Set<() => void>();
  private stopped = false;

  constructor(
    private readonly store: ResourceStore,
    private readonly options: TrustBundleSourcesOptions,
  ) {}

  /** Starts (or joins) the watches of source for user; a user has one source at a time. */
  use(user: string, source: TrustBundleSource): void {
    const previous = this.usersSources.get(user);
    if (previous && describeTrustBundleSource(previous) === describeTrustBundleSource(source)) {
      return;
    }
    if (previous) this.release(user);
    if (this.stopped) return;
    this.usersSources.set(user, source);
    let listedBefore = true;
    for (const spec of watchesOf(source)) {
      const running = this.watch(spec);
      running.users.add(user);
      listedBefore &&= running.informer.hasSynced();
    }
    // A user joining watches that have already listed missed their events: what they hold may
    // differ from what the user last wrote (a change while the plugin was down), so it is
    // told now, as it would be of a change. A watch that lists later tells its users then.
    if (listedBefore) queueMicrotask(() => this.options.onChange([user]));
  }

  /** Leaves user's watches; a watch nobody uses any more is stopped. */
  release(user: string): void {
    const source = this.usersSources.get(user);
    if (!source) return;
    this.usersSources.delete(user);
    for (const { key } of watchesOf(source)) {
      // A watch lives while it has users, and user is one of them.
      const running = this.watches.get(key) as RunningWatch;
      running.users.delete(user);
      if (running.users.size > 0) continue;
      this.watches.delete(key);
      for (const remove of running.removals) remove();
      running.informer.stop();
    }
  }

  /** How many list+watches run (one per distinct watched object or signer selection). */
  get watchCount(): number {
    return this.watches.size;
  }

  /** The bundle of source from the caches, or why there is none (not listed yet, missing, unusable). */
  resolve(source: TrustBundleSource): TrustBundleResolution {
    const informers: Array<Informer<KubeObject>> = [];
    for (const { key } of watchesOf(source)) {
      const running = this.watches.get(key);
      if (!running) return { ok: false, problem: 'no volume uses this source' };
      if (!running.informer.hasSynced()) {
        const why = running.lastError === undefined ? '' : `: ${running.lastError}`;
        return { ok: false, problem: `not listed from the API yet${why}` };
      }
      informers.push(running.informer);
    }
    try {
      return { ok: true, pem: bundleFrom(source, informers) };
    } catch (err) {
      return { ok: false, problem: errorMessage(err) };
    }
  }

  /**
   * The bundle of source as soon as it is usable (user must use it); rejects with the last
   * problem when signal aborts first. Waits on the watches' events, never polls.
   */
  async waitUsable(source: TrustBundleSource, signal: AbortSignal): Promise<string> {
    for (;;) {
      const resolved = this.resolve(source);
      if (resolved.ok) return resolved.pem;
      if (signal.aborted || this.stopped) {
        throw new Error(`${describeTrustBundleSource(source)}: ${resolved.problem}`);
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiters.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** Stops every watch; later uses start none. */
  stop(): void {
    this.stopped = true;
    for (const user of [...this.usersSources.keys()]) this.release(user);
    this.wakeWaiters();
  }

  private watch(spec: WatchSpec): RunningWatch {
    const existing = this.watches.get(spec.key);
    if (existing) return existing;
    const running: RunningWatch = {
      informer: new Informer<KubeObject>(this.store, spec.kind, {
        ...spec.options,
        clock: this.options.clock ?? systemClock,
        onError: (err) => {
          running.lastError = err.message;
          this.options.onError?.(err);
        },
      }),
      users: new Set(),
      removals: [],
    };
    const { informer } = running;
    const changed = () => {
      this.wakeWaiters();
      this.options.onChange([...running.users]);
    };
    running.removals.push(
      informer.on('add', changed),
      informer.on('update', changed),
      informer.on('delete', changed),
    );
    this.watches.set(spec.key, running);
    informer.start();
    // An empty list fires no event: the waits learn of the sync here.
    informer.waitForSync().then(
      () => this.wakeWaiters(),
      () => undefined,
    );
    return running;
  }

  private wakeWaiters(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
