import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { stringify as toYaml } from 'yaml';
import {
  SIGNERS_RESOURCE,
  signerAuthorizationNames,
} from '../../src/admission/signer-authorization.js';
import type { AdmissionOperation } from '../../src/api/admission-review.js';
import { apiVersionOf, type KubeObject } from '../../src/api/meta.js';
import { StoreError } from '../../src/store/errors.js';
import { parseLabelSelector } from '../../src/store/label-selector.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { conflict as storeConflict } from '../../src/store/object-rules.js';
import { subjectAccessReviewKind } from './access-review.js';
import { type AdmissionAttributes, writeAttributes } from './admission-review.js';
import { discoveryDocument } from './discovery.js';
import { type FieldSelector, parseFieldSelector } from './field-selector.js';
import { certCsiKinds, type ServedKind, type WriteContext } from './kinds.js';
import {
  applyJsonPatch,
  applyMergePatch,
  JSON_PATCH,
  MERGE_PATCH,
  type PatchApplyError,
  PatchFormatError,
} from './patch.js';
import type { RbacAuthorizer, UserInfo } from './rbac-authorizer.js';
import { type ApiPath, parseApiPath } from './routes.js';
import {
  ApiStatusError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  failure,
  forbidden,
  internalError,
  invalid,
  notFound,
  type Status,
  success,
} from './status.js';
import { WatchStream } from './watch.js';
import { webhookConfigurationKinds } from './webhook-configurations.js';
import {
  type ServiceEndpoint,
  type WebhookCall,
  WebhookDispatcher,
  warningHeaders,
} from './webhooks.js';

export { serviceAccountUser, type UserInfo } from './rbac-authorizer.js';

/** A bearer token's identity; admin identities skip RBAC (for test setup and inspection). */
export interface Identity extends UserInfo {
  /** The user's uid and extra attributes: CSRs record them and admission webhooks see them; RBAC decides without them. */
  uid?: string;
  extra?: Record<string, string[]>;
  admin?: boolean;
  /** Tells apart clients that share one user (two replicas of one ServiceAccount) in the log. */
  client?: string;
}

export interface FakeApiServerOptions {
  /** The store to serve; a new MemoryStore by default (closed with the server). */
  store?: MemoryStore;
  /** historySize of the default store: how far back a watch can resume before 410. */
  historySize?: number;
  /** When set, every request of a non-admin identity must be allowed by it. */
  rbac?: RbacAuthorizer;
  /** The kinds served; the ones cert-csi uses by default. */
  kinds?: readonly ServedKind[];
  /** The server's clock in epoch milliseconds (PodCertificateRequest status checks); Date.now by default. */
  now?: () => number;
  /**
   * The versions served of kinds that have several (ServedKind versions), by resource
   * (`podcertificaterequests`); a kind not named is served in all of its versions. `[]` serves
   * it in none. Change it later with setServedVersions.
   */
  servedVersions?: Readonly<Record<string, readonly string[]>>;
}

/** One request as the server saw it. */
export interface RequestLogEntry {
  /** Date.now() at arrival. */
  time: number;
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  /** The RBAC verb (get, list, watch, create, update, patch, delete, deletecollection). */
  verb: string;
  apiGroup: string | undefined;
  resource: string | undefined;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  watch: boolean;
  /** The authenticated username; undefined when authentication failed. */
  user: string | undefined;
  /** The identity's client label, when its token was registered with one. */
  client: string | undefined;
  /** The HTTP status answered; 0 until the response starts (200 for a watch once it streams). */
  status: number;
  /** The admission webhooks' warnings, answered as `Warning` headers. */
  warnings: string[];
}

/** Which requests fail, how, and for how long. */
export interface FaultOptions {
  /** HTTP status to answer (default 500, InternalError). */
  status?: number;
  /**
   * Accept the request and never answer it, as a hung API server does (status is then
   * unused); the connection stays open until the client gives up or the server closes.
   */
  hang?: boolean;
  /** How long the fault lasts (default: until cancelled). */
  forMs?: number;
  /** How many matching requests fail before the fault ends by itself (default: no limit). */
  times?: number;
  /** Which requests fail (default: all). Decided after authentication and authorization. */
  match?: (request: RequestLogEntry) => boolean;
}

/** A plain kubeconfig for KubeConfig.loadFromOptions. */
export interface KubeConfigOptions {
  clusters: Array<{ name: string; server: string; skipTLSVerify: boolean }>;
  users: Array<{ name: string; token: string }>;
  contexts: Array<{ name: string; cluster: string; user: string }>;
  currentContext: string;
}

interface Fault {
  status: number;
  hang: boolean;
  until: number;
  remaining: number;
  match: ((request: RequestLogEntry) => boolean) | undefined;
}

interface Route {
  served: ServedKind;
  path: ApiPath;
}

/** The version a route's client speaks (its URL's). */
function versionOf(route: Route): string {
  return route.path.version;
}

const ADMIN_TOKEN = 'fake-api-server-admin';
const PATCH_RETRIES = 5;
// strconv.ParseBool's spellings of true, which the API server accepts for `watch`.
const TRUE_VALUES = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const NOT_FOUND_MESSAGE = 'the server could not find the requested resource';
// What each kind of path answers; a watch on one name is the legacy form of a name selector.
const COLLECTION_VERBS = new Set(['list', 'watch', 'create']);
const OBJECT_VERBS = new Set(['get', 'watch', 'update', 'patch', 'delete']);
const STATUS_VERBS = new Set(['get', 'update', 'patch']);
// What the server keeps whatever a write says; a strategy sees them as stored.
const SERVER_OWNED_METADATA = [
  'uid',
  'creationTimestamp',
  'generation',
  'resourceVersion',
] as const;

/**
 * An HTTP server with the Kubernetes API semantics of the kinds cert-csi uses, backed by a
 * MemoryStore: get, list, watch, create, update, status, merge and JSON patches, delete;
 * bearer-token authentication; optional RBAC; a request log; and fault injection.
 */
export class FakeApiServer {
  /** The store behind the API; seed and inspect it directly. */
  readonly store: MemoryStore;
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: RequestLogEntry[] = [];
  /** A token that bypasses RBAC, registered at start. */
  readonly adminToken = ADMIN_TOKEN;
  /** Checked for every non-admin request when set; replace it to change permissions live. */
  rbac: RbacAuthorizer | undefined;

  private readonly tokens = new Map<string, Identity>();
  private readonly kinds = new Map<string, ServedKind>();
  private readonly watches = new Set<WatchStream>();
  /** The resource and version each open watch streams. */
  private readonly watchVersions = new Map<WatchStream, { resource: string; version: string }>();
  /** The versions served now of each kind that has several, by resource. */
  private readonly servedVersions = new Map<string, readonly string[]>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly requestWaiters = new Set<(entry: RequestLogEntry) => void>();
  private readonly webhooks: WebhookDispatcher;
  private readonly now: () => number;
  private faults: Fault[] = [];
  private latencyMs = 0;
  private statusConflicts = 0;
  /** Watch expiries still to give, per resource (plural) or for any ('*'). */
  private readonly watchExpiries = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    private readonly ownsStore: boolean,
    store: MemoryStore,
    options: FakeApiServerOptions,
  ) {
    this.store = store;
    this.webhooks = new WebhookDispatcher(store);
    this.rbac = options.rbac;
    this.now = options.now ?? Date.now;
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    // Every API server answers SubjectAccessReviews and serves webhook configurations,
    // whatever else it serves.
    for (const served of [
      ...(options.kinds ?? certCsiKinds),
      subjectAccessReviewKind,
      ...webhookConfigurationKinds,
    ]) {
      for (const version of served.versions ?? [served.kind.version]) {
        this.kinds.set(kindKey(served.kind.group, version, served.kind.plural), served);
      }
      if (served.versions) {
        const given = options.servedVersions?.[served.kind.plural];
        this.servedVersions.set(served.kind.plural, checkedVersions(served, given));
      }
    }
    this.tokens.set(ADMIN_TOKEN, {
      username: 'fake-api-server-admin',
      groups: ['system:masters', 'system:authenticated'],
      admin: true,
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      /* c8 ignore start */
      this.handle(req, res).catch((err: unknown) => {
        // handle answers every error itself, so this is a bug in the fake: make it loud.
        console.error('fake API server: unhandled error', err);
        res.destroy();
      });
      /* c8 ignore stop */
    });
  }

  /** Starts a server on 127.0.0.1 and an ephemeral port. */
  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const ownsStore = options.store === undefined;
    const store =
      options.store ??
      new MemoryStore(
        options.historySize === undefined ? {} : { historySize: options.historySize },
      );
    try {
      return new FakeApiServer(server, ownsStore, store, options);
    } catch (err) {
      // Options it cannot serve: nothing is left listening.
      server.close();
      if (ownsStore) await store.close();
      throw err;
    }
  }

  /** Registers a bearer token; `system:authenticated` is added to its groups as upstream does. */
  addToken(token: string, identity: Identity): void {
    const groups = [...(identity.groups ?? [])];
    if (!groups.includes('system:authenticated')) groups.push('system:authenticated');
    this.tokens.set(token, { ...identity, groups });
  }

  /** Forgets a token: later requests with it get 401. */
  removeToken(token: string): void {
    this.tokens.delete(token);
  }

  /**
   * A config for KubeConfig.loadFromOptions pointing at this server with token. skipTLSVerify
   * is set because client-node 1.x refuses a plain http server without it.
   */
  kubeConfig(token: string = this.adminToken): KubeConfigOptions {
    return {
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'fake-user', token }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake-user' }],
      currentContext: 'fake',
    };
  }

  /** The same config as a kubeconfig file's text (for `--kubeconfig` or $KUBECONFIG). */
  kubeConfigYaml(token: string = this.adminToken): string {
    return toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node 1.x refuses plain http unless TLS verification is explicitly skipped.
      clusters: [{ name: 'fake', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'fake-user', user: { token } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake-user' } }],
      'current-context': 'fake',
    });
  }

  /** Empties the request log and the webhook call log. */
  clearLog(): void {
    this.requests.length = 0;
    this.webhooks.calls.length = 0;
  }

  /** Every admission webhook call, in the order they ended. */
  get webhookCalls(): readonly WebhookCall[] {
    return this.webhooks.calls;
  }

  /**
   * Routes a webhook configuration's `clientConfig.service` (namespace, name, port) to where
   * its webhook really listens, as the cluster's Service would; the call still names and
   * verifies `<name>.<namespace>.svc`. Without a route the call fails as for a missing
   * Service; undefined removes the route.
   */
  setServiceEndpoint(
    namespace: string,
    name: string,
    port: number,
    endpoint: ServiceEndpoint | undefined,
  ): void {
    this.webhooks.setServiceEndpoint(namespace, name, port, endpoint);
  }

  /**
   * Resolves with the first request answered from now on that matches, once its response
   * starts (for a watch: once it streams), so its log entry is complete. An abort of signal
   * ends the wait (rejecting), so a wait nobody needs any more holds no timer.
   */
  waitForRequest(
    match: (request: RequestLogEntry) => boolean,
    timeoutMs = 5000,
    signal?: AbortSignal,
  ): Promise<RequestLogEntry> {
    return new Promise((resolve, reject) => {
      const end = () => {
        clearTimeout(timer);
        this.requestWaiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      const timer = setTimeout(() => {
        end();
        reject(new Error(`no matching request within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (entry: RequestLogEntry) => {
        if (!match(entry)) return;
        end();
        resolve(entry);
      };
      const onAbort = () => {
        end();
        reject(signal?.reason);
      };
      this.requestWaiters.add(waiter);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort);
    });
  }

  /** Fails matching requests with a Status of the given code; returns a function that ends it. */
  failRequests(options: FaultOptions = {}): () => void {
    const fault: Fault = {
      status: options.status ?? 500,
      hang: options.hang ?? false,
      until: options.forMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.forMs,
      remaining: options.times ?? Number.POSITIVE_INFINITY,
      match: options.match,
    };
    this.faults.push(fault);
    return () => {
      this.faults = this.faults.filter((f) => f !== fault);
    };
  }

  /** Ends every fault injected with failRequests. */
  clearFaults(): void {
    this.faults = [];
  }

  /** Delays every later request by ms before it is handled. */
  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  /** The next n status writes (PUT or PATCH on /status) get 409 Conflict. */
  conflictOnNextStatusUpdates(n: number): void {
    this.statusConflicts = n;
  }

  /**
   * The next n watches that pass a resourceVersion (other than "0") get the 410 ERROR event:
   * of resource (a plural, e.g. certificaterequests) when given, of any resource otherwise.
   */
  expireWatches(n = 1, resource = '*'): void {
    this.watchExpiries.set(resource, n);
  }

  /**
   * Serves resource (a kind with several versions) in exactly versions from now on, as a
   * control plane upgraded or reconfigured (`--runtime-config`) serves it after its restart:
   * every request and discovery sees the change at once, and open watches of a version no
   * longer served are torn down as the restart breaks them. The objects stay (one storage).
   */
  setServedVersions(resource: string, versions: readonly string[]): void {
    const served = [...this.kinds.values()].find((s) => s.kind.plural === resource && s.versions);
    if (!served)
      throw new Error(`fake API server: ${resource} is not a kind with several versions`);
    const now = checkedVersions(served, versions);
    this.servedVersions.set(resource, now);
    for (const [stream, watched] of [...this.watchVersions]) {
      if (watched.resource === resource && !now.includes(watched.version)) stream.destroy();
    }
  }

  /** The versions resource is served in now (a kind with one version: that one). */
  servedVersionsOf(resource: string): readonly string[] {
    const versioned = this.servedVersions.get(resource);
    if (versioned) return versioned;
    const served = [...this.kinds.values()].find((s) => s.kind.plural === resource);
    return served ? [served.kind.version] : [];
  }

  /** How many requests a hang fault holds unanswered (their clients have not given up yet). */
  get hangingRequests(): number {
    return this.hanging.size;
  }

  /** How many watch responses are open. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** Tears down every open watch connection (clients see an aborted stream); returns how many. */
  dropWatches(): number {
    const open = [...this.watches];
    for (const stream of open) stream.destroy();
    return open.length;
  }

  /** Ends every open watch cleanly, as the API server does at its request timeout. */
  endWatches(): number {
    const open = [...this.watches];
    for (const stream of open) stream.end();
    return open.length;
  }

  /**
   * Makes every open watch go silent, as over a half-open connection: no more events,
   * bookmarks or clean end at its timeoutSeconds, while the connection stays open.
   * Returns how many.
   */
  silenceWatches(): number {
    const open = [...this.watches];
    for (const stream of open) stream.silence();
    return open.length;
  }

  /** Sends a BOOKMARK with the store's resourceVersion to every watch that allows them. */
  sendBookmarks(): void {
    for (const stream of this.watches) stream.bookmark(this.store.resourceVersion);
  }

  /** Closes watches, connections and the listener (and the store, if the server made it). */
  async close(): Promise<void> {
    for (const stream of [...this.watches]) stream.destroy();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    if (this.ownsStore) await this.store.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A request a server receives always has a url and a method.
    const url = new URL(req.url as string, 'http://fake-api-server');
    const method = req.method as string;
    const apiPath = parseApiPath(url.pathname);
    const watch = TRUE_VALUES.has(url.searchParams.get('watch') ?? '');
    const entry: RequestLogEntry = {
      time: Date.now(),
      method,
      path: url.pathname,
      query: url.searchParams,
      contentType: req.headers['content-type'],
      verb: apiPath ? verbOf(method, apiPath, watch) : method.toLowerCase(),
      apiGroup: apiPath?.group,
      resource: apiPath?.resource,
      subresource: apiPath?.subresource,
      namespace: apiPath?.namespace,
      name: apiPath?.name,
      labelSelector: url.searchParams.get('labelSelector') ?? undefined,
      fieldSelector: url.searchParams.get('fieldSelector') ?? undefined,
      watch,
      user: undefined,
      client: undefined,
      status: 0,
      warnings: [],
    };
    this.requests.push(entry);
    try {
      const body = await readBody(req);
      if (this.latencyMs > 0) await delay(this.latencyMs);
      const identity = this.authenticate(req);
      entry.user = identity.username;
      entry.client = identity.client;
      // Discovery: readable by every authenticated user (system:discovery), no RBAC check.
      const discovery =
        method === 'GET' ? discoveryDocument(url.pathname, this.servedViews()) : undefined;
      if (!discovery) {
        if (!apiPath) throw new ApiStatusError(failure(404, NOT_FOUND_MESSAGE, 'NotFound'));
        this.authorize(identity, entry, apiPath);
      }
      if (this.injectFault(entry) === 'hang') {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
        return;
      }
      if (discovery) return this.sendJson(res, entry, 200, discovery);
      if (!apiPath) throw new ApiStatusError(failure(404, NOT_FOUND_MESSAGE, 'NotFound'));
      const route = this.route(apiPath, entry.verb);
      await this.serve(route, entry, body, req, res, identity);
    } catch (err) {
      this.sendStatus(res, entry, statusOf(err));
    }
  }

  private authenticate(req: IncomingMessage): Identity {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const identity = match ? this.tokens.get((match[1] as string).trim()) : undefined;
    if (!identity) throw new ApiStatusError(failure(401, 'Unauthorized', 'Unauthorized'));
    return identity;
  }

  private authorize(identity: Identity, entry: RequestLogEntry, apiPath: ApiPath): void {
    if (!this.rbac || identity.admin) return;
    const attributes = {
      user: identity,
      verb: entry.verb,
      apiGroup: apiPath.group,
      resource: apiPath.resource,
      subresource: apiPath.subresource,
      namespace: apiPath.namespace,
      name: apiPath.name ?? namePinnedBy(entry.fieldSelector),
    };
    if (!this.rbac.authorize(attributes).allowed) {
      throw forbidden({ ...attributes, user: identity.username });
    }
  }

  /** Fails the request if a fault matches it; 'hang' when it must go unanswered. */
  private injectFault(entry: RequestLogEntry): 'hang' | undefined {
    const now = Date.now();
    this.faults = this.faults.filter((f) => f.until > now && f.remaining > 0);
    const fault = this.faults.find((f) => f.match === undefined || f.match(entry));
    if (!fault) return undefined;
    fault.remaining--;
    if (fault.hang) return 'hang';
    if (fault.status === 500) throw internalError('injected fault');
    throw new ApiStatusError(failure(fault.status, `injected fault (HTTP ${fault.status})`));
  }

  /** Each served kind once per version served now, with that version: what discovery lists. */
  private servedViews(): ServedKind[] {
    const views: ServedKind[] = [];
    const seen = new Set<ServedKind>();
    for (const served of this.kinds.values()) {
      if (seen.has(served)) continue;
      seen.add(served);
      const versions = this.servedVersions.get(served.kind.plural) ?? [served.kind.version];
      for (const version of versions) views.push({ ...served, kind: { ...served.kind, version } });
    }
    return views;
  }

  /** object as the route's client reads it: converted to its version, with that apiVersion. */
  private view<T>(route: Route, object: T): T {
    const { served } = route;
    if (!served.versions || !isRecord(object) || object.kind === 'Status') return object;
    const version = versionOf(route);
    const converted = served.toVersion
      ? served.toVersion(object as unknown as KubeObject, version)
      : object;
    return { ...converted, apiVersion: apiVersionOf(served.kind, version) } as T;
  }

  /** An object the route's client wrote, converted to storage (stored: the one it replaces). */
  private stored(route: Route, object: KubeObject, stored: KubeObject | undefined): KubeObject {
    const { served } = route;
    if (!served.versions) return object;
    const converted = served.fromVersion
      ? served.fromVersion(object, versionOf(route), stored)
      : object;
    return { ...converted, apiVersion: apiVersionOf(served.kind) };
  }

  private route(path: ApiPath, verb: string): Route {
    const served = this.kinds.get(kindKey(path.group, path.version, path.resource));
    const notServed = () => new ApiStatusError(failure(404, NOT_FOUND_MESSAGE, 'NotFound'));
    if (!served) throw notServed();
    if (served.versions && !this.servedVersionsOf(served.kind.plural).includes(path.version)) {
      throw notServed();
    }
    if (!served.kind.namespaced && path.namespace !== undefined) throw notServed();
    if (served.kind.namespaced && path.namespace === undefined && path.name !== undefined) {
      throw notServed();
    }
    if (path.subresource !== undefined) {
      const status = path.subresource === 'status' && served.statusSubresource;
      const approval = path.subresource === 'approval' && served.strategy?.updateApproval;
      if (!status && !approval) throw notServed();
    }
    const allowed =
      path.subresource !== undefined
        ? STATUS_VERBS
        : path.name !== undefined
          ? OBJECT_VERBS
          : COLLECTION_VERBS;
    if (!allowed.has(verb) || (served.createOnly && verb !== 'create')) throw methodNotAllowed();
    if (verb === 'create' && served.kind.namespaced && path.namespace === undefined) {
      throw methodNotAllowed();
    }
    return { served, path };
  }

  private async serve(
    route: Route,
    entry: RequestLogEntry,
    body: unknown,
    req: IncomingMessage,
    res: ServerResponse,
    identity: Identity,
  ): Promise<void> {
    const { served, path } = route;
    const name = path.name ?? '';
    try {
      switch (entry.verb) {
        case 'get':
          return this.sendJson(
            res,
            entry,
            200,
            this.view(route, await this.store.get(served.kind, name, path.namespace)),
          );
        case 'list':
          return this.sendJson(res, entry, 200, await this.list(route, entry));
        case 'watch':
          return await this.watch(route, entry, res);
        case 'create':
          return this.sendJson(
            res,
            entry,
            201,
            this.view(route, await this.create(route, body, identity, entry)),
          );
        case 'update':
          return this.sendJson(
            res,
            entry,
            200,
            this.view(route, await this.update(route, body, identity, entry)),
          );
        case 'patch':
          return this.sendJson(
            res,
            entry,
            200,
            this.view(route, await this.patch(route, body, req, identity, entry)),
          );
        default: // delete: route lets no other verb through
          return this.sendJson(
            res,
            entry,
            200,
            this.view(route, await this.remove(route, body, identity, entry)),
          );
      }
    } catch (err) {
      throw fromStoreError(err, served, name);
    }
  }

  private async list(route: Route, entry: RequestLogEntry): Promise<unknown> {
    const { served, path } = route;
    const fields = parseFieldSelector(entry.fieldSelector ?? '', served.fieldLabels);
    const labelSelector = checkedLabelSelector(entry.labelSelector);
    const result = await this.store.list(served.kind, {
      ...(path.namespace === undefined ? {} : { namespace: path.namespace }),
      labelSelector,
    });
    return {
      apiVersion: apiVersionOf(served.kind, versionOf(route)),
      kind: `${served.kind.kind}List`,
      metadata: { resourceVersion: result.resourceVersion },
      items: result.items
        .filter((item) => fields.matches(item))
        .map((item) => this.view(route, item)),
    };
  }

  private async watch(route: Route, entry: RequestLogEntry, res: ServerResponse): Promise<void> {
    const { served, path } = route;
    const query = entry.query;
    const fieldText = [entry.fieldSelector ?? '', path.name ? `metadata.name=${path.name}` : '']
      .filter((part) => part !== '')
      .join(',');
    const fields: FieldSelector = parseFieldSelector(fieldText, served.fieldLabels);
    const labelSelector = checkedLabelSelector(entry.labelSelector);
    const resourceVersion = query.get('resourceVersion') ?? '';
    if (resourceVersion !== '' && !/^(0|[1-9][0-9]*)$/.test(resourceVersion)) {
      throw badRequest(`invalid resource version "${resourceVersion}"`);
    }
    const timeoutText = query.get('timeoutSeconds');
    const timeoutSeconds = timeoutText === null ? undefined : Number(timeoutText);
    if (
      timeoutSeconds !== undefined &&
      !(Number.isInteger(timeoutSeconds) && timeoutSeconds >= 0)
    ) {
      throw badRequest(`invalid timeoutSeconds "${timeoutText}"`);
    }
    // Without a resourceVersion a watch starts from the current state; with "0" (any) the
    // store starts wherever it can. Neither is ever too old.
    const fresh = resourceVersion === '';
    const resumes = !fresh && resourceVersion !== '0';

    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    this.answered(entry, 200);
    const stream = new WatchStream(
      res,
      fields,
      { apiVersion: apiVersionOf(served.kind, versionOf(route)), kind: served.kind.kind },
      TRUE_VALUES.has(query.get('allowWatchBookmarks') ?? ''),
      (closed) => {
        this.watches.delete(closed);
        this.watchVersions.delete(closed);
      },
    );
    this.watches.add(stream);
    this.watchVersions.set(stream, { resource: served.kind.plural, version: versionOf(route) });
    if (timeoutSeconds) stream.endAfter(timeoutSeconds);

    const expiry = [served.kind.plural, '*'].find((key) => (this.watchExpiries.get(key) ?? 0) > 0);
    if (resumes && expiry !== undefined) {
      this.watchExpiries.set(expiry, (this.watchExpiries.get(expiry) ?? 0) - 1);
      stream.fail(
        expired(`too old resource version: ${resourceVersion} (${this.store.resourceVersion})`),
      );
      return;
    }
    const scope = path.namespace === undefined ? {} : { namespace: path.namespace };
    // The store starts the watch as the API server does: a fresh one with the current state
    // as ADDED events, a resumed one with the changes after its resourceVersion. The stream
    // adds the field selector.
    const upstream = this.store.watch(
      served.kind,
      { ...scope, labelSelector, ...(fresh ? {} : { resourceVersion }) },
      {
        onEvent: (event) => stream.offer({ ...event, object: this.view(route, event.object) }),
        onError: (err) => stream.fail(statusOf(fromStoreError(err, served, ''))),
      },
    );
    stream.attach(upstream);
    if (!resumes) {
      // Every object comes with an ADDED event first: nothing to know beforehand.
      stream.start([]);
      return;
    }
    // Objects unchanged since the resourceVersion are listed as they were then, which tells
    // the stream whether they passed the field selector; events wait meanwhile.
    const current = await this.store.list(served.kind, { ...scope, labelSelector });
    const since = Number(resourceVersion);
    stream.start(current.items.filter((item) => Number(item.metadata.resourceVersion) <= since));
  }

  private async create(
    route: Route,
    body: unknown,
    identity: Identity,
    entry: RequestLogEntry,
  ): Promise<KubeObject> {
    const { served, path } = route;
    const object = this.stored(route, checkObject(body), undefined);
    matchRequestNamespace(served, path, object);
    const normalized = served.normalize(object);
    try {
      // kube-apiserver's order: mutating webhooks, the strategy (defaulting, validation),
      // validating webhooks, storage.
      const mutated = served.normalize(
        (await this.webhooks.mutate(
          this.admission(route, entry, identity, 'CREATE', normalized, undefined),
          entry.warnings,
        )) as KubeObject,
      );
      const admitted = served.strategy
        ? await served.strategy.create(mutated, this.writeContext(identity, versionOf(route)))
        : mutated;
      // A review is validated as sent; anything else as the store will keep it (no status).
      const kept = served.createOnly ? mutated : withStatusOf(admitted, undefined);
      await this.webhooks.validate(
        this.admission(route, entry, identity, 'CREATE', kept, undefined),
        entry.warnings,
      );
      if (served.createOnly) return admitted;
      return await this.store.create(served.kind, admitted);
    } catch (err) {
      throw fromStoreError(err, served, object.metadata.name ?? '');
    }
  }

  private async update(
    route: Route,
    body: unknown,
    identity: Identity,
    entry: RequestLogEntry,
  ): Promise<KubeObject> {
    const { served, path } = route;
    const name = path.name as string;
    const object = this.checkTarget(route, checkObject(body));
    if (served.requireResourceVersionOnUpdate && !object.metadata.resourceVersion) {
      throw invalid(
        served.kind,
        name,
        'metadata.resourceVersion',
        'Invalid value: 0x0: must be specified for an update',
      );
    }
    if (path.subresource === 'status') this.takeStatusConflict(route);
    if (path.subresource === 'status' || path.subresource === 'approval') {
      return this.write(route, object, identity, path.subresource, entry);
    }
    return this.write(route, served.normalize(object), identity, 'object', entry);
  }

  /**
   * Stores an update or a status write, in kube-apiserver's order: the mutating webhooks see
   * the written object; then a resourceVersion other than the stored one is a Conflict; a
   * kind with a strategy has it decide on the stored object, with the server-owned metadata
   * filled in from storage; the validating webhooks see what storage will keep; storage.
   */
  private async write(
    route: Route,
    object: KubeObject,
    identity: Identity,
    target: 'object' | 'status' | 'approval',
    entry: RequestLogEntry,
  ): Promise<KubeObject> {
    const { served, path } = route;
    const strategy = served.strategy;
    const name = path.name as string;
    const stored = await this.store.get(served.kind, name, path.namespace);
    const mutated = (await this.webhooks.mutate(
      this.admission(route, entry, identity, 'UPDATE', this.stored(route, object, stored), stored),
      entry.warnings,
    )) as KubeObject;
    const written = target === 'object' ? served.normalize(mutated) : mutated;
    const given = written.metadata.resourceVersion;
    if (given && given !== stored.metadata.resourceVersion) {
      throw storeConflict(
        served.kind,
        path.namespace,
        name,
        given,
        stored.metadata.resourceVersion,
      );
    }
    const metadata = { ...written.metadata };
    for (const field of SERVER_OWNED_METADATA) {
      if (stored.metadata[field] !== undefined)
        Object.assign(metadata, { [field]: stored.metadata[field] });
    }
    const filled = { ...written, metadata };
    let admitted = written;
    if (strategy) {
      const context = this.writeContext(identity, versionOf(route));
      if (target === 'object') admitted = strategy.update(filled, stored, context);
      else if (target === 'approval' && strategy.updateApproval) {
        admitted = strategy.updateApproval(filled, stored, context);
      } else if (strategy.updateStatus) admitted = strategy.updateStatus(filled, stored, context);
    }
    // The store keeps the stored status on an object write, and only the status on a status
    // write; a strategy has said what it keeps.
    const kept = strategy
      ? admitted
      : target !== 'object'
        ? withStatusOf(stored, filled)
        : withStatusOf(filled, stored);
    await this.webhooks.validate(
      this.admission(route, entry, identity, 'UPDATE', kept, stored),
      entry.warnings,
    );
    // An approval changes only status (its conditions): a status write to the store.
    return target !== 'object'
      ? this.store.updateStatus(served.kind, admitted)
      : this.store.update(served.kind, admitted);
  }

  /** The clock and the writer's signer permissions, for a kind's strategy. */
  private writeContext(identity: Identity, version: string): WriteContext {
    return {
      version,
      now: new Date(this.now()),
      user: identity.username,
      requester: {
        username: identity.username,
        ...(identity.uid ? { uid: identity.uid } : {}),
        ...(identity.groups ? { groups: [...identity.groups] } : {}),
        ...(identity.extra ? { extra: identity.extra } : {}),
      },
      allowedOnSigner: (verb, signerName) => {
        const rbac = this.rbac;
        if (!rbac || identity.admin) return true;
        // The exact name first, then the domain's wildcard, as kube-apiserver asks.
        return signerAuthorizationNames(signerName).some(
          (name) => rbac.authorize({ user: identity, verb, ...SIGNERS_RESOURCE, name }).allowed,
        );
      },
      authorize: (request) => this.rbac?.authorize(request) ?? { allowed: true, reason: '' },
    };
  }

  /** What the admission webhooks are told about a write through route by identity. */
  private admission(
    route: Route,
    entry: RequestLogEntry,
    identity: Identity,
    operation: AdmissionOperation,
    object: KubeObject | undefined,
    oldObject: KubeObject | undefined,
    deleteOptions?: unknown,
  ): AdmissionAttributes {
    const { served, path } = route;
    return writeAttributes({
      kind: served.kind,
      namespace: path.namespace,
      name: path.name,
      subresource: path.subresource,
      query: entry.query,
      user: identity,
      operation,
      object,
      oldObject,
      deleteOptions,
    });
  }

  private async patch(
    route: Route,
    body: unknown,
    req: IncomingMessage,
    identity: Identity,
    entry: RequestLogEntry,
  ): Promise<KubeObject> {
    const { served, path } = route;
    const contentType = String(req.headers['content-type']).replace(/;.*$/, '').trim();
    if (contentType !== MERGE_PATCH && contentType !== JSON_PATCH) {
      throw new ApiStatusError(
        failure(
          415,
          `the body of the request was in an unknown format - accepted media types include: ${JSON_PATCH}, ${MERGE_PATCH}`,
          'UnsupportedMediaType',
        ),
      );
    }
    if (path.subresource === 'status') this.takeStatusConflict(route);
    const name = path.name as string;
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.get(served.kind, name, path.namespace);
      let patched: unknown;
      try {
        patched =
          contentType === MERGE_PATCH
            ? applyMergePatch(this.view(route, current), body)
            : applyJsonPatch(this.view(route, current), body);
      } catch (err) {
        if (err instanceof PatchFormatError) throw badRequest(err.message);
        throw new ApiStatusError(failure(422, (err as PatchApplyError).message, 'Invalid'));
      }
      const object = checkObject(patched);
      // A merge patch keeps the members it does not touch, the store's frozen metadata among
      // them: set the name and namespace on a copy.
      object.metadata = { ...object.metadata };
      // A patch cannot rename or move an object; the URL says which one it is.
      object.metadata.name = name;
      if (path.namespace !== undefined) object.metadata.namespace = path.namespace;
      else delete object.metadata.namespace;
      const preconditioned = object.metadata.resourceVersion !== current.metadata.resourceVersion;
      if (!object.metadata.resourceVersion) {
        object.metadata.resourceVersion = current.metadata.resourceVersion as string;
      }
      try {
        if (path.subresource === 'status' || path.subresource === 'approval') {
          return await this.write(route, object, identity, path.subresource, entry);
        }
        return await this.write(route, served.normalize(object), identity, 'object', entry);
      } catch (err) {
        // Like the API server, retry a patch that did not ask for a resourceVersion when a
        // concurrent write got in between the read and the write.
        const retry = err instanceof StoreError && err.reason === 'Conflict' && !preconditioned;
        if (!retry || attempt >= PATCH_RETRIES) throw err;
      }
    }
  }

  private async remove(
    route: Route,
    body: unknown,
    identity: Identity,
    entry: RequestLogEntry,
  ): Promise<KubeObject | Status> {
    const { served, path } = route;
    const name = path.name as string;
    const current = await this.store.get(served.kind, name, path.namespace);
    const preconditions = isRecord(body) && isRecord(body.preconditions) ? body.preconditions : {};
    const { uid, resourceVersion } = preconditions;
    if (typeof uid === 'string' && uid !== current.metadata.uid) {
      throw conflict(
        served.kind,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (
      typeof resourceVersion === 'string' &&
      resourceVersion !== current.metadata.resourceVersion
    ) {
      throw conflict(
        served.kind,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    // After the preconditions, as etcd's delete checks them: the webhooks see the stored
    // object as oldObject (mutating ones may not patch it), then storage.
    const attributes = this.admission(route, entry, identity, 'DELETE', undefined, current, body);
    await this.webhooks.mutate(attributes, entry.warnings);
    await this.webhooks.validate(attributes, entry.warnings);
    await this.store.delete(served.kind, name, path.namespace);
    return served.returnDeletedObject ? current : success(served.kind, name, current.metadata.uid);
  }

  /** Checks that a PUT body names the object of the URL (upstream answers 400 otherwise). */
  private checkTarget(route: Route, object: KubeObject): KubeObject {
    const { served, path } = route;
    if (object.metadata.name !== path.name) {
      throw badRequest(
        `the name of the object (${object.metadata.name}) does not match the name on the URL (${path.name})`,
      );
    }
    matchRequestNamespace(served, path, object);
    return object;
  }

  private takeStatusConflict(route: Route): void {
    if (this.statusConflicts <= 0) return;
    this.statusConflicts--;
    throw conflict(route.served.kind, route.path.name as string);
  }

  private sendJson(res: ServerResponse, entry: RequestLogEntry, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(code, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      ...(entry.warnings.length > 0 && { Warning: warningHeaders(entry.warnings) }),
    });
    res.end(text);
    this.answered(entry, code);
  }

  private answered(entry: RequestLogEntry, code: number): void {
    entry.status = code;
    for (const waiter of [...this.requestWaiters]) waiter(entry);
  }

  private sendStatus(res: ServerResponse, entry: RequestLogEntry, status: Status): void {
    if (status.code === 429) res.setHeader('Retry-After', '1');
    this.sendJson(res, entry, status.code, status);
  }
}

function kindKey(group: string, version: string, plural: string): string {
  return `${group}/${version}/${plural}`;
}

/** versions, checked to be versions served can be served in. */
function checkedVersions(served: ServedKind, versions: readonly string[] | undefined): string[] {
  const possible = served.versions ?? [served.kind.version];
  if (versions === undefined) return [...possible];
  const unknown = versions.filter((v) => !possible.includes(v));
  if (unknown.length > 0) {
    throw new Error(
      `fake API server: ${served.kind.plural} has no version ${unknown.join(', ')} (only ${possible.join(', ')})`,
    );
  }
  // In the kind's order: discovery lists the preferred version first.
  return possible.filter((v) => versions.includes(v));
}

/** The RBAC verb of a request, as RequestInfo derives it from the method and the path. */
function verbOf(method: string, path: ApiPath, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return path.name === undefined ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return path.name === undefined ? 'deletecollection' : 'delete';
    default:
      return method.toLowerCase();
  }
}

/** The name a list or watch pins with `metadata.name=`, which RBAC authorizes as a named request. */
function namePinnedBy(fieldSelector: string | undefined): string | undefined {
  if (!fieldSelector) return undefined;
  try {
    return parseFieldSelector(fieldSelector, []).exactName();
  } catch {
    return undefined;
  }
}

function checkedLabelSelector(text: string | undefined): string {
  try {
    parseLabelSelector(text ?? '');
  } catch (err) {
    throw badRequest(`unable to parse requirement: ${(err as Error).message}`);
  }
  return text ?? '';
}

/**
 * Gives a written object the namespace of the request, as the API server's
 * EnsureObjectNamespaceMatchesRequestNamespace does: a missing one is filled in, one of a
 * cluster-scoped object is dropped, and a different one is a 400.
 */
function matchRequestNamespace(served: ServedKind, path: ApiPath, object: KubeObject): void {
  const namespace = object.metadata.namespace;
  if (!served.kind.namespaced) {
    delete object.metadata.namespace;
    return;
  }
  if (namespace !== undefined && namespace !== '' && namespace !== path.namespace) {
    throw badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  object.metadata.namespace = path.namespace as string;
}

function methodNotAllowed(): ApiStatusError {
  return new ApiStatusError(
    failure(
      405,
      'the server does not allow this method on the requested resource',
      'MethodNotAllowed',
    ),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** base with from's status (none when from has none): what the store keeps of a write. */
function withStatusOf(base: KubeObject, from: KubeObject | undefined): KubeObject {
  const { status: _dropped, ...rest } = base as KubeObject & { status?: unknown };
  const status = (from as (KubeObject & { status?: unknown }) | undefined)?.status;
  return (status === undefined ? rest : { ...rest, status }) as KubeObject;
}

function checkObject(body: unknown): KubeObject {
  if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
  if (body.metadata === undefined) body.metadata = {};
  if (!isRecord(body.metadata)) throw badRequest('metadata must be an object');
  return body as unknown as KubeObject;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Maps a store error to the API server's Status, naming the object as upstream does. */
function fromStoreError(err: unknown, served: ServedKind, name: string): unknown {
  if (!(err instanceof StoreError)) return err;
  switch (err.reason) {
    case 'NotFound':
      return notFound(served.kind, name);
    case 'AlreadyExists':
      return name === ''
        ? new ApiStatusError(failure(409, err.message, 'AlreadyExists'))
        : alreadyExists(served.kind, name);
    case 'Conflict':
      return conflict(served.kind, name);
    case 'Gone':
      return new ApiStatusError(expired(err.message));
    case 'Invalid':
      return new ApiStatusError(
        failure(422, err.message, 'Invalid', { name, kind: served.kind.kind }),
      );
    default:
      return internalError(err.message);
  }
}

function statusOf(err: unknown): Status {
  if (err instanceof ApiStatusError) return err.status;
  // Everything thrown while handling a request is an Error; anything else is a bug here.
  return internalError((err as Error).message).status;
}
