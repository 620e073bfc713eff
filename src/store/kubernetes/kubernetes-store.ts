import type { ConfigurationOptions, CoreV1Event, V1Secret } from '@kubernetes/client-node';
import { type Logger, silentLogger } from '../../api/logger.js';
import { apiVersionOf, type KubeObject, type ResourceKind } from '../../api/meta.js';
import { type Clock, systemClock, type TimerHandle } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import { StoreError } from '../errors.js';
import { resourceNameOf } from '../object-rules.js';
import type {
  ListOptions,
  ListResult,
  ResourceStore,
  Watch,
  WatchEventType,
  WatchHandlers,
  WatchOptions,
} from '../resource-store.js';
import {
  callWithin,
  DEFAULT_REQUEST_TIMEOUT_MS,
  isResourceNotServed,
  reasonOf,
  toStoreError,
} from './api-call.js';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, Watch as KubeWatch } from './client-node.js';
import { KubernetesDiscovery } from './kubernetes-discovery.js';
import { RateLimiter } from './rate-limiter.js';
import { RequestObservation } from './request-telemetry.js';
import { ServedVersions, type VersionDiscovery } from './served-versions.js';

export { callWithin, DEFAULT_REQUEST_TIMEOUT_MS, toStoreError } from './api-call.js';

export interface KubernetesStoreOptions {
  kubeConfig: KubeConfig;
  /** Client-side limit: sustained requests per second and the burst above it. */
  qps?: number;
  burst?: number;
  /** Sent as fieldManager on writes, so managedFields say who wrote. */
  fieldManager?: string;
  clock?: Clock;
  /**
   * How long one request (get, list, create, update, delete) may take before it is
   * cancelled and fails; client-node sets no limit, and a hung API server would hang it
   * until the TCP connection breaks. Default DEFAULT_REQUEST_TIMEOUT_MS.
   */
  requestTimeoutMs?: number;
  /**
   * How long a watch connection may deliver nothing (no event, no bookmark) before it is
   * taken for half-open, closed and reopened from its last resourceVersion. Default
   * DEFAULT_WATCH_IDLE_TIMEOUT_MS.
   */
  watchIdleTimeoutMs?: number;
  /** Where a change of a kind's served version is told (`served version changed`). */
  logger?: Logger;
  /** How served versions are discovered; default: the API server's discovery documents. */
  discovery?: VersionDiscovery;
  /** The least and most time between two discovery checks of one kind (default 1 s, 60 s). */
  rediscoveryBaseDelayMs?: number;
  rediscoveryMaxDelayMs?: number;
}

/** The default limit of a silent watch connection. */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 5 * 60_000;

// A watch the server ends cleanly (its timeout) is reopened from the last resourceVersion
// after this pause, so a server that closes at once cannot make us spin.
const REWATCH_DELAY_MS = 200;

/**
 * The timeoutSeconds a watch asks for: four fifths of the idle limit, so a healthy server
 * ends the watch (and the watch is reopened) before the idle watchdog would fire, as
 * client-go's reflector bounds its watches too.
 */
export function watchTimeoutSeconds(idleTimeoutMs: number): number {
  return Math.max(1, Math.floor((idleTimeoutMs * 0.8) / 1000));
}

type Json = Record<string, unknown>;

/** Typed core-group models carry Date objects; the store hands out API JSON (RFC 3339 strings). */
function plain<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * Our objects as the typed models' parameters: the models declare Date fields, but their
 * serializer passes RFC 3339 strings through unchanged, which is what the server wants.
 */
function asModel<M>(body: KubeObject): M {
  return body as unknown as M;
}

/**
 * The object with its apiVersion and kind set. Only the core group's REST answers are typed
 * models that need converting; custom objects and watch events already are parsed JSON
 * nobody else holds, so they are not copied again (a watch delivers every change).
 */
function withKind<T extends KubeObject>(
  kind: ResourceKind,
  version: string,
  obj: unknown,
  typedModel = kind.group === '',
): T {
  const object = typedModel ? plain<T>(obj) : (obj as T);
  object.apiVersion = apiVersionOf(kind, version);
  object.kind = kind.kind;
  return object;
}

/** The REST path of a kind's collection at version (default its own), as list and watch use it. */
export function collectionPath(
  kind: ResourceKind,
  namespace?: string,
  version = kind.version,
): string {
  const base = kind.group === '' ? `/api/${version}` : `/apis/${kind.group}/${version}`;
  return kind.namespaced && namespace
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${kind.plural}`
    : `${base}/${kind.plural}`;
}

/**
 * A ResourceStore over a Kubernetes API server through @kubernetes/client-node: custom
 * resources (cert-manager.io, coordination.k8s.io) through CustomObjectsApi, core Secrets,
 * Pods, Namespaces, Events and (listed only) ConfigMaps through CoreV1Api. Every request waits for the client-side
 * rate limit.
 * A watch reopens itself from its last resourceVersion when the server closes it; an
 * expired resourceVersion (410) or a failed connection is reported to the caller, whose
 * informer relists or retries with backoff.
 *
 * A kind that declares several versions (PodCertificateRequests, ClusterTrustBundles) is
 * spoken in the one the server serves, preferred first, found through discovery
 * (ServedVersions): URLs, bodies and the apiVersion of what is returned all use it, and a
 * request answered "not served" makes the store look again and switch, without a restart.
 */
export class KubernetesStore implements ResourceStore {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly limiter: RateLimiter;
  private readonly fieldManager: string | undefined;
  private readonly clock: Clock;
  private readonly requestTimeoutMs: number;
  /** The idle limit of a watch connection; read by KubernetesWatch. */
  readonly watchIdleTimeoutMs: number;
  readonly kubeConfig: KubeConfig;
  private readonly versions: ServedVersions;

  constructor(options: KubernetesStoreOptions) {
    this.kubeConfig = options.kubeConfig;
    this.custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.clock = options.clock ?? systemClock;
    this.limiter = new RateLimiter(options.qps ?? 20, options.burst ?? 40, this.clock);
    this.fieldManager = options.fieldManager;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.watchIdleTimeoutMs = options.watchIdleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
    this.versions = new ServedVersions({
      discovery:
        options.discovery ??
        new KubernetesDiscovery(options.kubeConfig, this.requestTimeoutMs, this.clock),
      clock: this.clock,
      logger: options.logger ?? silentLogger,
      ...(options.rediscoveryBaseDelayMs === undefined
        ? {}
        : { baseDelayMs: options.rediscoveryBaseDelayMs }),
      ...(options.rediscoveryMaxDelayMs === undefined
        ? {}
        : { maxDelayMs: options.rediscoveryMaxDelayMs }),
    });
  }

  /**
   * The version in which the server serves kind (for a kind with several, the first served
   * of them, found through discovery); undefined when it serves none.
   */
  servedVersion(kind: ResourceKind): Promise<string | undefined> {
    return this.versions.servedVersion(kind);
  }

  /** The version requests of kind use now; resolved (and re-resolved) by ServedVersions. */
  versionOf(kind: ResourceKind): Promise<string> {
    return this.versions.versionOf(kind);
  }

  /** A request of kind at version was answered "not served": look again before the next. */
  notServed(kind: ResourceKind, version: string): void {
    this.versions.notServed(kind, version);
  }

  async get<T extends KubeObject>(
    kind: ResourceKind,
    name: string,
    namespace?: string,
  ): Promise<T> {
    const version = await this.versionOf(kind);
    return this.call(`get ${describe(kind, name, namespace)}`, kind, version, async (call) => {
      if (kind.group !== '') {
        const params = { ...this.customParams(kind, version), name };
        return kind.namespaced
          ? this.custom.getNamespacedCustomObject(
              { ...params, namespace: need(namespace, kind) },
              call,
            )
          : this.custom.getClusterCustomObject(params, call);
      }
      // The one cluster-scoped core kind read: a Namespace, for its labels.
      if (kind.plural === 'namespaces') return this.core.readNamespace({ name }, call);
      const ns = need(namespace, kind);
      switch (kind.plural) {
        case 'secrets':
          return this.core.readNamespacedSecret({ name, namespace: ns }, call);
        case 'pods':
          return this.core.readNamespacedPod({ name, namespace: ns }, call);
        default:
          throw unsupported('get', kind);
      }
    }).then((obj) => withKind<T>(kind, version, obj));
  }

  async list<T extends KubeObject>(
    kind: ResourceKind,
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    const { namespace, labelSelector, fieldSelector } = options;
    const selector = {
      ...(labelSelector ? { labelSelector } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
    };
    const version = await this.versionOf(kind);
    const body = (await this.call(`list ${resourceNameOf(kind)}`, kind, version, async (call) => {
      if (kind.group !== '') {
        const params = { ...this.customParams(kind, version), ...selector };
        return kind.namespaced && namespace
          ? this.custom.listNamespacedCustomObject({ ...params, namespace }, call)
          : this.custom.listClusterCustomObject(params, call);
      }
      switch (kind.plural) {
        case 'secrets':
          return namespace
            ? this.core.listNamespacedSecret({ namespace, ...selector }, call)
            : this.core.listSecretForAllNamespaces(selector, call);
        case 'pods':
          return namespace
            ? this.core.listNamespacedPod({ namespace, ...selector }, call)
            : this.core.listPodForAllNamespaces(selector, call);
        case 'namespaces':
          return this.core.listNamespace(selector, call);
        case 'configmaps':
          // The trust bundles volumes follow: always one namespace, one name.
          return this.core.listNamespacedConfigMap(
            { namespace: need(namespace, kind), ...selector },
            call,
          );
        default:
          throw unsupported('list', kind);
      }
    })) as { metadata?: { resourceVersion?: string }; items?: unknown[] };
    return {
      items: (body.items ?? []).map((item) => withKind<T>(kind, version, item)),
      resourceVersion: body.metadata?.resourceVersion ?? '',
    };
  }

  async create<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    const { name, generateName, namespace } = obj.metadata;
    const version = await this.versionOf(kind);
    const body = { ...obj, apiVersion: apiVersionOf(kind, version), kind: kind.kind };
    const manager = this.fieldManager ? { fieldManager: this.fieldManager } : {};
    const created = await this.call(
      `create ${describe(kind, name || `${generateName ?? ''}*`, namespace)}`,
      kind,
      version,
      async (call) => {
        if (kind.group !== '') {
          const params = { ...this.customParams(kind, version), body, ...manager };
          return kind.namespaced
            ? this.custom.createNamespacedCustomObject(
                {
                  ...params,
                  namespace: need(namespace, kind),
                },
                call,
              )
            : this.custom.createClusterCustomObject(params, call);
        }
        const ns = need(namespace, kind);
        switch (kind.plural) {
          case 'secrets':
            return this.core.createNamespacedSecret(
              {
                namespace: ns,
                body: asModel<V1Secret>(body),
                ...manager,
              },
              call,
            );
          case 'events':
            return this.core.createNamespacedEvent(
              {
                namespace: ns,
                body: asModel<CoreV1Event>(body),
                ...manager,
              },
              call,
            );
          default:
            throw unsupported('create', kind);
        }
      },
    );
    return withKind<T>(kind, version, created);
  }

  async update<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.replace(kind, obj, false);
  }

  async updateStatus<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.replace(kind, obj, true);
  }

  async delete(kind: ResourceKind, name: string, namespace?: string): Promise<void> {
    const version = await this.versionOf(kind);
    await this.call(`delete ${describe(kind, name, namespace)}`, kind, version, async (call) => {
      if (kind.group !== '') {
        const params = { ...this.customParams(kind, version), name };
        return kind.namespaced
          ? this.custom.deleteNamespacedCustomObject(
              {
                ...params,
                namespace: need(namespace, kind),
              },
              call,
            )
          : this.custom.deleteClusterCustomObject(params, call);
      }
      if (kind.plural !== 'secrets') throw unsupported('delete', kind);
      return this.core.deleteNamespacedSecret({ name, namespace: need(namespace, kind) }, call);
    });
  }

  watch<T extends KubeObject>(
    kind: ResourceKind,
    options: WatchOptions,
    handlers: WatchHandlers<T>,
  ): Watch {
    return new KubernetesWatch<T>(this, kind, options, handlers, this.clock);
  }

  /** Opens one watch connection after the rate limit; used by KubernetesWatch. */
  async openWatch(
    path: string,
    query: Record<string, string>,
    onLine: (type: string, object: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    await this.limiter.take();
    const observation = RequestObservation.ifObserved();
    if (!observation) return new KubeWatch(this.kubeConfig).watch(path, query, onLine, onDone);
    // client-node reports a refused watch through onDone before its promise resolves.
    let opening = true;
    const watch = new KubeWatch(this.kubeConfig);
    observation.sent('GET', `${this.kubeConfig.getCurrentCluster()?.server ?? ''}${path}`);
    const controller = await watch.watch(path, query, onLine, (err: unknown) => {
      if (opening) {
        const status = (err as { statusCode?: unknown } | null)?.statusCode;
        if (typeof status === 'number') observation.answered(status);
      }
      onDone(err);
    });
    opening = false;
    if (!controller.signal.aborted) observation.answered(200);
    observation.finish();
    return controller;
  }

  private async replace<T extends KubeObject>(
    kind: ResourceKind,
    obj: T,
    status: boolean,
  ): Promise<T> {
    const { name, namespace } = obj.metadata;
    const version = await this.versionOf(kind);
    const body = { ...obj, apiVersion: apiVersionOf(kind, version), kind: kind.kind };
    const manager = this.fieldManager ? { fieldManager: this.fieldManager } : {};
    const what = `${status ? 'update status of' : 'update'} ${describe(kind, name, namespace)}`;
    const replaced = await this.call(what, kind, version, async (call) => {
      if (kind.group !== '') {
        const params = { ...this.customParams(kind, version), name, body, ...manager };
        if (kind.namespaced) {
          const namespaced = { ...params, namespace: need(namespace, kind) };
          return status
            ? this.custom.replaceNamespacedCustomObjectStatus(namespaced, call)
            : this.custom.replaceNamespacedCustomObject(namespaced, call);
        }
        return status
          ? this.custom.replaceClusterCustomObjectStatus(params, call)
          : this.custom.replaceClusterCustomObject(params, call);
      }
      if (kind.plural !== 'secrets' || status) {
        throw unsupported(status ? 'update status of' : 'update', kind);
      }
      return this.core.replaceNamespacedSecret(
        {
          name,
          namespace: need(namespace, kind),
          body: asModel<V1Secret>(body),
          ...manager,
        },
        call,
      );
    });
    return withKind<T>(kind, version, replaced);
  }

  private customParams(kind: ResourceKind, version: string) {
    return { group: kind.group, version, plural: kind.plural };
  }

  /**
   * Runs one request of kind at version after the rate limit, within requestTimeoutMs (see
   * callWithin); an answer that the resource is not served there is told to ServedVersions.
   */
  private async call<R>(
    what: string,
    kind: ResourceKind,
    version: string,
    request: (options: ConfigurationOptions) => Promise<R>,
  ): Promise<R> {
    await this.limiter.take();
    let notServed = false;
    try {
      const result = await callWithin(this.clock, this.requestTimeoutMs, what, (options) =>
        request(options).catch((err: unknown) => {
          notServed = isResourceNotServed(err);
          throw err;
        }),
      );
      if (kind.versions) this.versions.confirmed(kind);
      return result;
    } catch (err) {
      if (notServed) this.versions.notServed(kind, version);
      throw err;
    }
  }
}

function describe(kind: ResourceKind, name: string, namespace: string | undefined): string {
  return `${resourceNameOf(kind)} ${namespace ? `${namespace}/` : ''}${name}`;
}

function need(namespace: string | undefined, kind: ResourceKind): string {
  if (!namespace) throw new StoreError('Invalid', `${resourceNameOf(kind)} needs a namespace`);
  return namespace;
}

function unsupported(verb: string, kind: ResourceKind): StoreError {
  return new StoreError(
    'Invalid',
    `the Kubernetes store does not ${verb} ${resourceNameOf(kind)}: cert-csi never needs to`,
  );
}

/**
 * One logical watch over reconnecting HTTP watch streams. Bookmarks and events advance the
 * resourceVersion it resumes from; the server's clean close reopens it; a 410 or a broken
 * connection ends it with an error, as the ResourceStore contract says. A connection that
 * delivers nothing for the store's watchIdleTimeoutMs (half-open: the server stopped
 * sending without closing) is closed and reopened like a clean close; each connection asks
 * the server to end it sooner (timeoutSeconds), so a healthy one never trips the watchdog.
 */
class KubernetesWatch<T extends KubeObject> implements Watch {
  private stopped = false;
  private resourceVersion: string | undefined;
  private controller: AbortController | undefined;
  private timer: TimerHandle | undefined;
  private watchdog: TimerHandle | undefined;
  // Which connection is current; lines and ends of a superseded one are ignored.
  private connection = 0;

  constructor(
    private readonly store: KubernetesStore,
    private readonly kind: ResourceKind,
    private readonly options: WatchOptions,
    private readonly handlers: WatchHandlers<T>,
    private readonly clock: Clock,
  ) {
    this.resourceVersion = options.resourceVersion;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.disarm();
    this.controller?.abort();
  }

  private open(): void {
    const connection = ++this.connection;
    this.controller = undefined;
    const query: Record<string, string> = {
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(watchTimeoutSeconds(this.store.watchIdleTimeoutMs)),
    };
    if (this.resourceVersion) query.resourceVersion = this.resourceVersion;
    if (this.options.labelSelector) query.labelSelector = this.options.labelSelector;
    if (this.options.fieldSelector) query.fieldSelector = this.options.fieldSelector;
    const current = () => connection === this.connection && !this.stopped;
    // Whatever a connection reports once it is stopped, failed or superseded is ignored.
    const whileCurrent =
      <A extends unknown[]>(report: (...args: A) => void) =>
      (...args: A) => {
        if (current()) report(...args);
      };
    const fail = (err: Error) => {
      this.stop();
      this.handlers.onError(err);
    };
    this.arm();
    // The version is resolved for each connection: a reopened watch follows a switch.
    let version = this.kind.version;
    this.store
      .versionOf(this.kind)
      .then((resolved) => {
        version = resolved;
        return this.store.openWatch(
          collectionPath(this.kind, this.options.namespace, version),
          query,
          whileCurrent((type: string, object: unknown) => {
            this.arm();
            if (type === 'ERROR') {
              fail(watchStatusError(object, this.kind));
              return;
            }
            const rv = (object as { metadata?: { resourceVersion?: string } })?.metadata
              ?.resourceVersion;
            if (rv) this.resourceVersion = rv;
            if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
              this.handlers.onEvent({
                type: type as WatchEventType,
                object: withKind<T>(this.kind, version, object, false),
              });
            }
          }),
          whileCurrent((err: unknown) => {
            if (err) {
              const code = (err as { statusCode?: unknown }).statusCode;
              // A watch has no Status body to tell a missing object from a resource not served;
              // a collection's watch is refused 404 only for the latter.
              if (code === 404) this.store.notServed(this.kind, version);
              fail(
                typeof code === 'number'
                  ? watchRefused(code, err, this.kind)
                  : toStoreError(err, `watch ${resourceNameOf(this.kind)}`),
              );
              return;
            }
            this.reopenLater();
          }),
        );
      })
      .then(
        (controller) => {
          // A connection superseded (by the watchdog) or stopped before it was open is closed
          // as soon as there is something to close.
          if (current()) this.controller = controller;
          else controller.abort();
        },
        whileCurrent((err: unknown) =>
          fail(toStoreError(err, `watch ${resourceNameOf(this.kind)}`)),
        ),
      );
  }

  /** (Re)starts the idle watchdog of the current connection. */
  private arm(): void {
    this.disarm();
    this.watchdog = this.clock.setTimeout(() => {
      // stop() disarms, so the watch is still running. Half-open: leave this connection
      // behind (abort it now if it is open, else once it opens) and resume from the last
      // resourceVersion, as after a clean close.
      this.watchdog = undefined;
      this.connection++;
      this.controller?.abort();
      this.controller = undefined;
      this.reopenLater();
    }, this.store.watchIdleTimeoutMs);
  }

  private disarm(): void {
    if (this.watchdog) this.clock.clearTimeout(this.watchdog);
    this.watchdog = undefined;
  }

  private reopenLater(): void {
    this.disarm();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) this.open();
    }, REWATCH_DELAY_MS);
  }
}

/**
 * A watch the server refused with an HTTP status before streaming (a bad selector is 400,
 * RBAC 403, an expired resourceVersion 410); client-node keeps only the status code.
 */
function watchRefused(code: number, err: unknown, kind: ResourceKind): StoreError {
  const detail = code === 410 ? 'resource version expired' : `HTTP ${code} ${errorMessage(err)}`;
  return new StoreError(reasonOf(code, undefined), `watch ${resourceNameOf(kind)}: ${detail}`);
}

function watchStatusError(object: unknown, kind: ResourceKind): StoreError {
  const status = (object ?? {}) as Json;
  const code = typeof status.code === 'number' ? status.code : 500;
  const message = typeof status.message === 'string' ? status.message : `HTTP ${code}`;
  const reason = reasonOf(code, typeof status.reason === 'string' ? status.reason : undefined);
  return new StoreError(reason, `watch ${resourceNameOf(kind)}: ${message}`);
}
