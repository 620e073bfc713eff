import type { ClusterTrustBundle } from '../../api/cluster-trust-bundle.js';
import { ClusterTrustBundleKind } from '../../api/cluster-trust-bundle.js';
import { type ConfigMap, ConfigMapKind } from '../../api/config-map.js';
import type { KubeObject, ResourceKind } from '../../api/meta.js';
import {
  describeTrustBundleSource,
  type TrustBundleSource,
} from '../../api/trust-bundle-source.js';
import { type TrustManagerBundle, TrustManagerBundleKind } from '../../api/trust-manager-bundle.js';
import type { Clock } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import { trustBundlePem } from '../../pki/trust-bundle.js';
import { escapeFieldValue } from '../../store/field-selector.js';
import { Informer, type InformerOptions } from '../../store/informer.js';
import type { ResourceStore } from '../../store/resource-store.js';

/** A source's bundle as a CA file, or why it has none now. */
export type TrustBundleResolution = { ok: true; pem: string } | { ok: false; problem: string };

/** One list+watch a source needs: what it lists, and the informer once created. */
interface WatchSpec {
  key: string;
  kind: ResourceKind;
  options: InformerOptions;
}

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
    for (const spec of watchesOf(source)) this.watch(spec).users.add(user);
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
      return { ok: true, pem: this.bundleOf(source, informers) };
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
        ...(this.options.clock ? { clock: this.options.clock } : {}),
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

  private bundleOf(source: TrustBundleSource, informers: Array<Informer<KubeObject>>): string {
    const [first, second] = informers as [Informer<KubeObject>, Informer<KubeObject> | undefined];
    switch (source.kind) {
      case 'configmap':
        return configMapBundle(first, source.namespace, source.name, source.key);
      case 'clustertrustbundle': {
        const bundle = first.get(source.name) as ClusterTrustBundle | undefined;
        if (!bundle) throw new Error(`ClusterTrustBundle "${source.name}" not found`);
        return trustBundlePem(
          [{ name: `ClusterTrustBundle "${source.name}"`, pem: bundle.spec.trustBundle }],
          'given',
        );
      }
      case 'clustertrustbundle-signer': {
        const bundles = first.list() as ClusterTrustBundle[];
        if (bundles.length === 0) {
          throw new Error(
            `no ClusterTrustBundle of signer "${source.signerName}"${source.labelSelector ? ` selected by "${source.labelSelector}"` : ''}`,
          );
        }
        return trustBundlePem(
          bundles.map((b) => ({
            name: `ClusterTrustBundle "${b.metadata.name}"`,
            pem: b.spec.trustBundle,
          })),
          'sorted',
        );
      }
      case 'bundle': {
        if (source.key !== undefined) {
          return configMapBundle(first, source.namespace, source.name, source.key);
        }
        const bundle = first.get(source.name) as TrustManagerBundle | undefined;
        if (!bundle) throw new Error(`Bundle "${source.name}" not found`);
        const key = bundle.spec?.target?.configMap?.key;
        if (!key) {
          throw new Error(`Bundle "${source.name}" has no spec.target.configMap.key`);
        }
        return configMapBundle(second as Informer<KubeObject>, source.namespace, source.name, key);
      }
    }
  }
}

function configMapBundle(
  informer: Informer<KubeObject>,
  namespace: string,
  name: string,
  key: string,
): string {
  const configMap = informer.get(name, namespace) as ConfigMap | undefined;
  const what = `ConfigMap "${namespace}/${name}"`;
  if (!configMap) throw new Error(`${what} not found`);
  const text = configMap.data?.[key];
  const binary = configMap.binaryData?.[key];
  if (text === undefined && binary === undefined) {
    throw new Error(`${what} has no key "${key}"`);
  }
  const pem = text ?? Buffer.from(binary as string, 'base64').toString('latin1');
  return trustBundlePem([{ name: `${what} key "${key}"`, pem }], 'given');
}

const byName = (name: string) => `metadata.name=${escapeFieldValue(name)}`;

/** The list+watches a source needs, each under a key shared by every source that needs it. */
function watchesOf(source: TrustBundleSource): WatchSpec[] {
  const configMap = (namespace: string, name: string): WatchSpec => ({
    key: `configmaps/${namespace}/${name}`,
    kind: ConfigMapKind,
    options: { namespace, fieldSelector: byName(name) },
  });
  switch (source.kind) {
    case 'configmap':
      return [configMap(source.namespace, source.name)];
    case 'clustertrustbundle':
      return [
        {
          key: `clustertrustbundles/${source.name}`,
          kind: ClusterTrustBundleKind,
          options: { fieldSelector: byName(source.name) },
        },
      ];
    case 'clustertrustbundle-signer':
      return [
        {
          key: `clustertrustbundles;${source.signerName};${source.labelSelector}`,
          kind: ClusterTrustBundleKind,
          options: {
            fieldSelector: `spec.signerName=${escapeFieldValue(source.signerName)}`,
            ...(source.labelSelector ? { labelSelector: source.labelSelector } : {}),
          },
        },
      ];
    case 'bundle':
      return source.key !== undefined
        ? [configMap(source.namespace, source.name)]
        : [
            {
              key: `bundles/${source.name}`,
              kind: TrustManagerBundleKind,
              options: { fieldSelector: byName(source.name) },
            },
            configMap(source.namespace, source.name),
          ];
  }
}
