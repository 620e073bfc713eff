import { randomInt, randomUUID } from 'node:crypto';
import { quoted as echoed } from '../api/echoed-value.js';
import { apiVersionOf, type KubeObject, objectKey, type ResourceKind } from '../api/meta.js';
import { type Clock, systemClock } from '../base/clock.js';
import { errorMessage } from '../base/error-message.js';
import { KeyedMutex } from '../base/keyed-mutex.js';
import type { AdmissionHook } from './admission.js';
import { ChangeHistory, type ChangeRecord } from './change-history.js';
import { CommitSequencer } from './commit-sequencer.js';
import { isStoreError, StoreError } from './errors.js';
import { parseFieldSelector } from './field-selector.js';
import { freezeJson, jsonEqual, toJsonCopy } from './json-value.js';
import { parseLabelSelector } from './label-selector.js';
import { MemoryWatch, selects, type WatchFilter } from './memory-watch.js';
import { byNamespaceAndName } from './object-order.js';
import {
  alreadyExists,
  checkKind,
  checkName,
  checkNamespace,
  conflict,
  invalidObject,
  normalizeWrite,
  notFound,
  resourceNameOf,
} from './object-rules.js';
import type {
  ListOptions,
  ListResult,
  ResourceStore,
  Watch,
  WatchEventType,
  WatchHandlers,
  WatchOptions,
} from './resource-store.js';
import { parseResourceVersion } from './resource-version.js';
import type { ObjectLocation, StatePersistence } from './state-persistence.js';

export interface MemoryStoreOptions {
  /** Persist every object there (the embedded mode's state dir); use MemoryStore.open. */
  persistence?: StatePersistence;
  /** How many changes a watch can resume from (default 10,000). */
  historySize?: number;
  clock?: Clock;
  /** The random part of generated names; tests replace it to force collisions. */
  randomSuffix?: () => string;
  /**
   * Validating admission of every create, update and status write, as a cluster's webhooks
   * and per-kind rules: field errors refuse the write with `Invalid` and nothing is stored.
   * Objects loaded from persistence are not admitted again.
   */
  admit?: AdmissionHook;
}

const DEFAULT_HISTORY_SIZE = 10_000;
// The API server's alphabet and lengths for generateName (no vowels: no accidental words).
const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const NAME_SUFFIX_LENGTH = 5;
const MAX_GENERATED_PREFIX_LENGTH = 63 - NAME_SUFFIX_LENGTH;
const GENERATE_NAME_ATTEMPTS = 8;
// Fields the server owns; update keeps the stored values whatever the caller sends.
const SYSTEM_METADATA = ['uid', 'creationTimestamp', 'generation', 'deletionTimestamp'] as const;

type Change =
  | { type: WatchEventType; object: KubeObject; previous: KubeObject | undefined }
  | { type: 'UNCHANGED'; object: KubeObject };

/** Decides a change from the current stored state (undefined when absent); throws to refuse. */
type ChangePlan = (current: KubeObject | undefined) => Change;

type Fields = Record<string, unknown>;

/**
 * An in-process ResourceStore with the API server's semantics: one resourceVersion counter
 * for every kind, optimistic concurrency, generateName, a status subresource, label and
 * field selectors and watches that resume from a resourceVersion. With persistence every
 * change is durable before its promise resolves and before anyone can see it; changes
 * become visible (to get, list and watches) strictly in resourceVersion order.
 */
export class MemoryStore implements ResourceStore {
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly watches = new Map<string, Set<MemoryWatch>>();
  private readonly mutex = new KeyedMutex();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly clock: Clock;
  private readonly historySize: number;
  private readonly randomSuffix: () => string;
  private readonly admit: AdmissionHook | undefined;
  private readonly state: StatePersistence | undefined;
  private readonly loading: Promise<void>;
  private history: ChangeHistory;
  private sequencer = new CommitSequencer();
  private appliedRv = 0;
  private loaded: boolean;
  private closed = false;

  /** Opens a store; with persistence, prefer MemoryStore.open, which waits for the load. */
  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.historySize = options.historySize ?? DEFAULT_HISTORY_SIZE;
    this.randomSuffix = options.randomSuffix ?? randomNameSuffix;
    this.admit = options.admit;
    this.history = new ChangeHistory(this.historySize);
    if (options.persistence === undefined) {
      this.loaded = true;
      this.loading = Promise.resolve();
    } else {
      this.state = options.persistence;
      this.loaded = false;
      this.loading = this.load(this.state);
      // Every operation waits for the load and reports its failure; none is lost.
      this.loading.catch(() => undefined);
    }
  }

  /** Creates a store and loads its persisted objects, if any, before resolving. */
  static async open(options: MemoryStoreOptions = {}): Promise<MemoryStore> {
    const store = new MemoryStore(options);
    await store.loading;
    return store;
  }

  /** The resourceVersion of the last change that took effect. */
  get resourceVersion(): string {
    return String(this.appliedRv);
  }

  /** Returns the stored object, deeply frozen (copy it to change it); NotFound when missing. */
  async get<T extends KubeObject>(
    kind: ResourceKind,
    name: string,
    namespace?: string,
  ): Promise<T> {
    if (!this.loaded) await this.loading;
    checkKind(kind);
    const scope = checkNamespace(kind, namespace, true);
    const found = this.bucket(kind).get(objectKey(scope, name));
    if (!found) throw notFound(kind, scope, name);
    return found as T;
  }

  /**
   * The matching objects (deeply frozen) sorted by namespace and name, and the current
   * resourceVersion. A field selector may name metadata.name, metadata.namespace or any
   * dotted path into the object (a missing field is ''): unlike the API server, the store
   * knows no per-kind lists of field labels, so it refuses none.
   */
  async list<T extends KubeObject>(
    kind: ResourceKind,
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    if (!this.loaded) await this.loading;
    checkKind(kind);
    const scope = checkNamespace(kind, options.namespace, false);
    const filter = {
      selector: parseLabelSelector(options.labelSelector ?? ''),
      fields: parseFieldSelector(options.fieldSelector ?? ''),
    };
    const items = [...this.bucket(kind).values()]
      .filter(
        (item) =>
          (scope === undefined || item.metadata.namespace === scope) && selects(filter, item),
      )
      .sort(byNamespaceAndName) as T[];
    return { items, resourceVersion: String(this.appliedRv) };
  }

  /** Creates obj (status is dropped, as with a status subresource); AlreadyExists when taken. */
  create<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.createObject(kind, obj, false);
  }

  /**
   * Creates obj with its status in one write, as a create and a status write would leave it:
   * for a controller of this process that decided the status before the object existed (the
   * local issuance of a volume's request). Admission judges the create, then the status write.
   */
  createWithStatus<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.createObject(kind, obj, true);
  }

  private async createObject<T extends KubeObject>(
    kind: ResourceKind,
    obj: T,
    keepStatus: boolean,
  ): Promise<T> {
    if (!this.loaded) await this.loading;
    const input = this.prepare(kind, obj);
    const scope = checkNamespace(kind, input.metadata.namespace, true);
    const build =
      (name: string): ChangePlan =>
      (current) => {
        let object = { ...input, metadata: { ...input.metadata, name } } as KubeObject & Fields;
        delete object.status;
        delete object.metadata.resourceVersion;
        delete object.metadata.deletionTimestamp;
        object.metadata.uid = randomUUID();
        object.metadata.creationTimestamp = kubernetesTimestamp(this.clock.now());
        object.metadata.generation = 1;
        // Validation comes before storage, as on the API server: an invalid object is
        // Invalid even when its name is taken.
        this.admitWrite(kind, object, undefined, 'create');
        if (keepStatus && input.status !== undefined) {
          const withStatus = { ...object, status: input.status } as KubeObject & Fields;
          // The created object as the hook saw it: the stored one gets its resourceVersion later.
          this.admitWrite(kind, withStatus, frozenView(object), 'status');
          object = withStatus;
        }
        if (current) throw alreadyExists(kind, scope, name);
        return { type: 'ADDED', object, previous: undefined };
      };
    if (input.metadata.name) {
      checkName(kind, input.metadata.name);
      return (await this.commit(kind, scope, input.metadata.name, build(input.metadata.name))) as T;
    }
    const prefix = input.metadata.generateName;
    if (!prefix) {
      throw new StoreError(
        'Invalid',
        `${kind.kind} is invalid: metadata.name: Required value: name or generateName is required`,
      );
    }
    for (let attempt = 1; ; attempt++) {
      const name = `${prefix.slice(0, MAX_GENERATED_PREFIX_LENGTH)}${this.randomSuffix()}`;
      checkName(kind, name, `metadata.generateName "${prefix}"`);
      try {
        return (await this.commit(kind, scope, name, build(name))) as T;
      } catch (err) {
        // Another object took the generated name: try a fresh one, as the API server does.
        if (!isStoreError(err, 'AlreadyExists') || attempt >= GENERATE_NAME_ATTEMPTS) throw err;
      }
    }
  }

  /** Replaces all but status and server-owned metadata; a stale resourceVersion is Conflict. */
  async update<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    if (!this.loaded) await this.loading;
    const input = this.prepare(kind, obj);
    const { scope, name } = this.identify(kind, input);
    return (await this.commit(kind, scope, name, (current) => {
      if (!current) throw notFound(kind, scope, name);
      checkPrecondition(kind, scope, input, current);
      const next = { ...input, metadata: { ...input.metadata } } as KubeObject & Fields;
      copyField(current.metadata, next.metadata, 'resourceVersion');
      for (const field of SYSTEM_METADATA) copyField(current.metadata, next.metadata, field);
      copyField(current, next, 'status');
      this.admitWrite(kind, next, current, 'update');
      if (jsonEqual(next, current)) return { type: 'UNCHANGED', object: current };
      // Metadata and status edits do not change what the object asks for; anything else does.
      if (!jsonEqual(specOf(next), specOf(current))) {
        next.metadata.generation = (current.metadata.generation ?? 0) + 1;
      }
      return { type: 'MODIFIED', object: next, previous: current };
    })) as T;
  }

  /** Replaces only status, keeping everything else stored; a stale resourceVersion is Conflict. */
  async updateStatus<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    if (!this.loaded) await this.loading;
    const input = this.prepare(kind, obj);
    const { scope, name } = this.identify(kind, input);
    return (await this.commit(kind, scope, name, (current) => {
      if (!current) throw notFound(kind, scope, name);
      checkPrecondition(kind, scope, input, current);
      const next = { ...current, metadata: { ...current.metadata } } as KubeObject & Fields;
      copyField(input, next, 'status');
      if (jsonEqual(next, current)) return { type: 'UNCHANGED', object: current };
      this.admitWrite(kind, next, current, 'status');
      return { type: 'MODIFIED', object: next, previous: current };
    })) as T;
  }

  /** Deletes the object; watches get DELETED with its last state. NotFound when missing. */
  async delete(kind: ResourceKind, name: string, namespace?: string): Promise<void> {
    if (!this.loaded) await this.loading;
    checkKind(kind);
    const scope = checkNamespace(kind, namespace, true);
    await this.commit(kind, scope, name, (current) => {
      if (!current) throw notFound(kind, scope, name);
      const last = { ...current, metadata: { ...current.metadata } };
      return { type: 'DELETED', object: last, previous: current };
    });
  }

  /**
   * Delivers every later change to matching objects, in order, exactly once and never
   * synchronously. From a resourceVersion N (other than "0"), changes after N are replayed
   * first; if some are no longer held, onError gets Gone. Without one, the matching objects
   * come first as ADDED events, as an API server watch starts; "0" (the API server's "any")
   * replays from the very start while the history holds it all, else starts like none.
   * With selectors, an object that starts matching comes as ADDED and one that stops as
   * DELETED (its last matching state at the change's resourceVersion), as from the API
   * server; field selectors as on list.
   */
  watch<T extends KubeObject>(
    kind: ResourceKind,
    options: WatchOptions,
    handlers: WatchHandlers<T>,
  ): Watch {
    const generic = handlers as unknown as WatchHandlers<KubeObject>;
    let filter: WatchFilter;
    let fromRv: number | undefined;
    try {
      checkKind(kind);
      filter = {
        resource: resourceNameOf(kind),
        namespace: checkNamespace(kind, options.namespace, false),
        selector: parseLabelSelector(options.labelSelector ?? ''),
        fields: parseFieldSelector(options.fieldSelector ?? ''),
      };
      fromRv = options.resourceVersion ? parseResourceVersion(options.resourceVersion) : undefined;
    } catch (err) {
      const failed = new MemoryWatch(
        {
          resource: '',
          namespace: undefined,
          selector: parseLabelSelector(''),
          fields: parseFieldSelector(''),
        },
        generic,
        () => undefined,
      );
      failed.fail(err as Error);
      return failed;
    }
    const watch = new MemoryWatch(filter, generic, (stopped) => {
      this.watches.get(filter.resource)?.delete(stopped);
    });
    if (this.loaded) {
      this.attach(watch, filter, fromRv);
    } else {
      this.loading.then(
        () => this.attach(watch, filter, fromRv),
        (err: Error) => watch.fail(err),
      );
    }
    return watch;
  }

  /**
   * Ends every watch (silently: the owner is shutting down), refuses later writes, and
   * resolves once writes in flight are durable.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const watches of this.watches.values()) {
      for (const watch of [...watches]) watch.stop();
    }
    await this.loading.catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
  }

  private async load(state: StatePersistence): Promise<void> {
    const loaded = await state.load();
    for (const { location, object } of loaded.objects) {
      this.bucket(location).set(objectKey(location.namespace, location.name), freezeJson(object));
    }
    // Watch history is not persisted: resuming from before the restart is Gone.
    this.sequencer = new CommitSequencer(loaded.resourceVersion);
    this.history = new ChangeHistory(this.historySize, loaded.resourceVersion);
    this.appliedRv = loaded.resourceVersion;
    this.loaded = true;
  }

  private attach(watch: MemoryWatch, filter: WatchFilter, fromRv: number | undefined): void {
    if (watch.isStopped) return;
    if (this.closed) {
      watch.fail(new StoreError('InternalError', 'the store is closed'));
      return;
    }
    // "0" may start anywhere. Replaying from the empty start is exact for a caller that
    // listed a never-written store (whose list said "0"); once the history has dropped
    // changes, the current state is the only start left.
    const start = fromRv === 0 && this.history.startRv > 0 ? undefined : fromRv;
    if (start === undefined) {
      watch.startAfter(this.appliedRv);
      const current = [...(this.objects.get(filter.resource)?.values() ?? [])];
      watch.sendState(current.sort(byNamespaceAndName));
    } else {
      const replay = this.history.since(start);
      if (!replay) {
        watch.fail(
          new StoreError('Gone', `too old resource version: ${start} (${this.history.startRv})`),
        );
        return;
      }
      watch.startAfter(start);
      for (const record of replay) watch.offer(record);
    }
    let watches = this.watches.get(filter.resource);
    if (!watches) {
      watches = new Set();
      this.watches.set(filter.resource, watches);
    }
    watches.add(watch);
  }

  private bucket(kind: Pick<ResourceKind, 'group' | 'plural'>): Map<string, KubeObject> {
    const resource = resourceNameOf(kind);
    let bucket = this.objects.get(resource);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(resource, bucket);
    }
    return bucket;
  }

  /** A JSON copy of obj with apiVersion and kind checked against kind. */
  private prepare(kind: ResourceKind, obj: KubeObject): KubeObject & Fields {
    checkKind(kind);
    const copy = toJsonCopy(obj, `${kind.kind} object`) as KubeObject & Fields;
    if (typeof copy?.metadata !== 'object' || copy.metadata === null) {
      throw new StoreError('Invalid', `${kind.kind} is invalid: metadata: Required value`);
    }
    // The copy shares the caller's stored (frozen) fields; what is set below must be its own.
    const input = Object.isFrozen(copy) ? { ...copy } : copy;
    if (Object.isFrozen(input.metadata)) input.metadata = { ...input.metadata };
    const apiVersion = apiVersionOf(kind);
    // A kind served in several versions is stored in its preferred one; an object written in
    // another of them is the same object (their fields convert one to one here).
    const accepted = (kind.versions ?? [kind.version]).map((version) =>
      apiVersionOf(kind, version),
    );
    if (input.apiVersion && !accepted.includes(input.apiVersion)) {
      throw new StoreError(
        'Invalid',
        `${kind.kind} "${input.metadata.name ?? ''}" is invalid: apiVersion "${input.apiVersion}" does not match ${apiVersion}`,
      );
    }
    if (input.kind && input.kind !== kind.kind) {
      throw new StoreError(
        'Invalid',
        `${kind.kind} "${input.metadata.name ?? ''}" is invalid: kind "${input.kind}" does not match ${kind.kind}`,
      );
    }
    input.apiVersion = apiVersion;
    input.kind = kind.kind;
    // The API server drops a namespace sent with a cluster-scoped object rather than refuse
    // it (EnsureObjectNamespaceMatchesRequestNamespace), so a caller works with either store.
    if (!kind.namespaced) delete input.metadata.namespace;
    normalizeWrite(kind, input);
    return input;
  }

  /**
   * Runs the admission hook on frozen views (the hook is pure: a mutation throws); its field
   * errors refuse the write as Invalid.
   */
  private admitWrite(
    kind: ResourceKind,
    object: KubeObject,
    old: KubeObject | undefined,
    write: 'create' | 'update' | 'status',
  ): void {
    if (!this.admit) return;
    let errors: readonly string[];
    try {
      errors = this.admit(kind, frozenView(object), old, write);
    } catch (err) {
      if (err instanceof StoreError) throw err;
      throw new StoreError(
        'InternalError',
        `admission of ${resourceNameOf(kind)} ${echoed(object.metadata.name)} failed: ${errorMessage(err)}`,
      );
    }
    if (errors.length > 0) throw invalidObject(kind, object.metadata.name, errors);
  }

  private identify(
    kind: ResourceKind,
    input: KubeObject,
  ): { scope: string | undefined; name: string } {
    const scope = checkNamespace(kind, input.metadata.namespace, true);
    if (!input.metadata.name) {
      throw new StoreError('Invalid', `${kind.kind} is invalid: metadata.name: Required value`);
    }
    return { scope, name: input.metadata.name };
  }

  private commit(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    plan: ChangePlan,
  ): Promise<KubeObject> {
    if (this.closed) {
      return Promise.reject(
        new StoreError(
          'InternalError',
          `the store is closed: cannot change ${resourceNameOf(kind)} "${name}"`,
        ),
      );
    }
    const state = this.state;
    if (!state) {
      // Nothing to wait for: decide and apply in this very call, so changes take effect in
      // call order.
      try {
        const location = { group: kind.group, plural: kind.plural, namespace, name };
        const change = plan(this.bucket(kind).get(objectKey(namespace, name)));
        if (change.type === 'UNCHANGED') return Promise.resolve(change.object);
        return Promise.resolve(this.apply(location, change, this.sequencer.begin()));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const pending = this.commitDurably(state, kind, namespace, name, plan);
    this.inFlight.add(pending);
    const forget = () => this.inFlight.delete(pending);
    pending.then(forget, forget);
    return pending;
  }

  // Per object, one change at a time (so the last state always wins on disk); across
  // objects the writes overlap but take effect in resourceVersion order.
  private async commitDurably(
    state: StatePersistence,
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    plan: ChangePlan,
  ): Promise<KubeObject> {
    const location = { group: kind.group, plural: kind.plural, namespace, name };
    const release = await this.mutex.lock(`${resourceNameOf(kind)}/${objectKey(namespace, name)}`);
    try {
      const change = plan(this.bucket(kind).get(objectKey(namespace, name)));
      if (change.type === 'UNCHANGED') return change.object;
      const rv = this.sequencer.begin();
      change.object.metadata.resourceVersion = String(rv);
      try {
        if (change.type === 'DELETED') {
          // No object file carries a deletion's resourceVersion: the counter must, or a
          // restart could hand it out again.
          await state.saveResourceVersion(rv);
          await state.removeObject(location);
        } else {
          await state.writeObject(location, change.object);
        }
      } catch (err) {
        this.sequencer.finish(rv);
        throw new StoreError(
          'InternalError',
          `could not persist ${change.type} of ${resourceNameOf(kind)} "${name}"${namespace ? ` in namespace "${namespace}"` : ''} at resourceVersion ${rv}: ${(err as Error).message}`,
        );
      }
      await this.sequencer.waitTurn(rv);
      return this.apply(location, change, rv);
    } finally {
      release();
    }
  }

  private apply(
    location: ObjectLocation,
    change: { type: WatchEventType; object: KubeObject; previous: KubeObject | undefined },
    rv: number,
  ): KubeObject {
    change.object.metadata.resourceVersion = String(rv);
    // Frozen once, then the same object for every reader: get, list, each watch and the
    // writer's own result. Nobody can change what another reader sees.
    freezeJson(change.object);
    const bucket = this.bucket(location);
    const key = objectKey(location.namespace, location.name);
    if (change.type === 'DELETED') bucket.delete(key);
    else bucket.set(key, change.object);
    this.appliedRv = rv;
    const record: ChangeRecord = {
      resourceVersion: rv,
      resource: resourceNameOf(location),
      type: change.type,
      object: change.object,
      previous: change.previous,
    };
    this.history.append(record);
    for (const watch of this.watches.get(record.resource) ?? []) watch.offer(record);
    this.sequencer.finish(rv);
    return change.object;
  }
}

function checkPrecondition(
  kind: ResourceKind,
  namespace: string | undefined,
  input: KubeObject,
  current: KubeObject,
): void {
  const given = input.metadata.resourceVersion;
  if (given && given !== current.metadata.resourceVersion) {
    throw conflict(kind, namespace, input.metadata.name, given, current.metadata.resourceVersion);
  }
}

/**
 * A frozen object with the fields of object, whose metadata the store sets later (its
 * resourceVersion, at commit): the fields themselves are frozen in place, since they are the
 * store's own copy and are frozen at commit anyway.
 */
function frozenView(object: KubeObject): KubeObject {
  const view: Fields = {};
  for (const [field, value] of Object.entries(object)) {
    if (field !== 'metadata') view[field] = freezeJson(value);
    else {
      for (const entry of Object.values(object.metadata)) freezeJson(entry);
      view[field] = Object.freeze({ ...object.metadata });
    }
  }
  return Object.freeze(view) as unknown as KubeObject;
}

/** Sets to[field] to from[field], or removes it when from has none. */
function copyField<S extends object, D extends object>(from: S, to: D, field: string): void {
  const source = from as Fields;
  const target = to as Fields;
  if (source[field] === undefined) delete target[field];
  else target[field] = source[field];
}

/** Everything the object asks for: all but metadata and status (spec, or a Secret's data). */
function specOf(obj: KubeObject): Fields {
  const { metadata: _metadata, status: _status, ...rest } = obj as KubeObject & Fields;
  return rest;
}

/** RFC 3339 with second precision, as Kubernetes writes timestamps: `2026-11-21T10:00:00Z`. */
function kubernetesTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

function randomNameSuffix(): string {
  let suffix = '';
  for (let i = 0; i < NAME_SUFFIX_LENGTH; i++) {
    suffix += NAME_SUFFIX_ALPHABET.charAt(randomInt(NAME_SUFFIX_ALPHABET.length));
  }
  return suffix;
}
