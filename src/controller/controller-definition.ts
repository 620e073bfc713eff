import type { EventRecorder } from '../api/event.js';
import type { Logger } from '../api/logger.js';
import { type KubeObject, objectKey } from '../api/meta.js';
import type { Clock } from '../base/clock.js';
import type { Informer } from '../store/informer.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { SharedInformers } from './shared-informers.js';

/** What every controller is built with: the store, the process's informers, events, time. */
export interface ControllerContext<Config> {
  store: ResourceStore;
  informers: SharedInformers;
  events: EventRecorder;
  /** Already tagged with the controller's name. */
  logger: Logger;
  clock: Clock;
  now(): Date;
  /** Options shared by every controller of a registry (e.g. the cluster resource namespace). */
  config: Config;
  /** The names of every controller running in this process beside this one (and it). */
  enabled: ReadonlySet<string>;
}

/** One informer a controller listens to, and how its events map to keys of the controller's queue. */
export interface ControllerWatch {
  /** Starts passing keys to enqueue; returns the removal of the handlers. */
  subscribe(enqueue: (key: string) => void): () => void;
}

/** What sync can ask for besides success: to look at the key again after a while. */
export interface SyncResult {
  requeueAfterMs?: number;
}

/** The per-key retry backoff of a controller's queue after a failed sync. */
export interface RetryPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
}

/** cert-manager's item-based rate limiter (CertificateRequest, approver, issuer controllers). */
export const ITEM_BASED_RETRY: RetryPolicy = { baseDelayMs: 5_000, maxDelayMs: 300_000 };

/** A controller: its name, what it watches, how it syncs one key, its workers and backoff. */
export interface ControllerDefinition<Config> {
  /** cert-manager's name where it has one; what `--controllers` selects. */
  name: string;
  /** Default ITEM_BASED_RETRY. */
  retry?: RetryPolicy;
  /** How many keys are synced at once (default 1; one key is never synced twice at once). */
  workers?: (config: Config) => number;
  /**
   * Builds the controller from its context: the informers and indexes it needs, what it
   * watches, and its sync. Runs before the caches start, so the first list's adds are seen.
   */
  setup(context: ControllerContext<Config>): {
    watches: ControllerWatch[];
    /** Syncs one key; a thrown error retries the key with the backoff. */
    sync(key: string): Promise<SyncResult | undefined>;
  };
}

/** Declares a controller (an identity function that keeps the definition's types checked). */
export function defineController<Config>(
  definition: ControllerDefinition<Config>,
): ControllerDefinition<Config> {
  return definition;
}

/** The queue key of an object: `namespace/name`, or `name` when cluster-scoped. */
export function keyOf(obj: KubeObject): string {
  return objectKey(obj.metadata.namespace, obj.metadata.name);
}

/**
 * Listens to informer: an add or update of an object enqueues keys(object) (of the old and the
 * new version on update), and so does a delete when `deletes` is set. Keys default to the
 * object's own.
 */
export function watchInformer<T extends KubeObject>(
  informer: Informer<T>,
  keys: (obj: T) => Iterable<string> = (obj) => [keyOf(obj)],
  options: { deletes?: boolean } = {},
): ControllerWatch {
  return {
    subscribe(enqueue) {
      const each = (obj: T) => {
        for (const key of keys(obj)) enqueue(key);
      };
      const removals = [
        informer.on('add', each),
        informer.on('update', (old, current) => {
          each(old);
          each(current);
        }),
      ];
      if (options.deletes) removals.push(informer.on('delete', each));
      return () => {
        for (const remove of removals) remove();
      };
    },
  };
}
