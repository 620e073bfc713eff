import type { KubeObject, ResourceKind } from '../api/meta.js';

/** Options of list and watch. */
export interface ListOptions {
  /** Namespace to list in; omitted lists every namespace (or a cluster-scoped kind). */
  namespace?: string;
  /** Kubernetes label selector syntax: `a=b,c!=d,e in (f,g),!h`. */
  labelSelector?: string;
  /**
   * Kubernetes field selector syntax: `spec.signerName=x,metadata.name!=y` (a missing field
   * is ''). Which fields a kind offers is the backend's business: the API server refuses
   * the ones it does not index (BadRequest), the memory store accepts any dotted path.
   */
  fieldSelector?: string;
}

/** The result of a list: the objects and the store's resourceVersion at the time of the list. */
export interface ListResult<T extends KubeObject> {
  items: T[];
  resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change delivered by a watch. */
export interface WatchEvent<T extends KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions extends ListOptions {
  /**
   * Deliver every change after this resourceVersion. Omitted, the watch starts with the
   * current matching objects as ADDED events, then every later change; "0" lets the store
   * start anywhere it can (a state as ADDED events, then every change after it), as the
   * API server does for both.
   */
  resourceVersion?: string;
}

/** Callbacks of a watch. onError ends the watch: a `Gone` error means relist. */
export interface WatchHandlers<T extends KubeObject> {
  onEvent(event: WatchEvent<T>): void;
  onError(err: Error): void;
}

/** A running watch. */
export interface Watch {
  stop(): void;
}

/**
 * The API the controllers and the node plugin use, with Kubernetes semantics:
 * resourceVersion optimistic concurrency, generateName, a separate status write,
 * label and field selectors, and watches that resume from a resourceVersion.
 */
export interface ResourceStore {
  get<T extends KubeObject>(kind: ResourceKind, name: string, namespace?: string): Promise<T>;
  list<T extends KubeObject>(kind: ResourceKind, options?: ListOptions): Promise<ListResult<T>>;
  /** Creates obj; fills uid, resourceVersion, creationTimestamp and the name from generateName. */
  create<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T>;
  /** Replaces everything but status; a stale metadata.resourceVersion gets Conflict. */
  update<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T>;
  /** Replaces only status; a stale metadata.resourceVersion gets Conflict. */
  updateStatus<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T>;
  /** Deletes; NotFound when missing. */
  delete(kind: ResourceKind, name: string, namespace?: string): Promise<void>;
  watch<T extends KubeObject>(
    kind: ResourceKind,
    options: WatchOptions,
    handlers: WatchHandlers<T>,
  ): Watch;
}
