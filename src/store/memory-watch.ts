import type { KubeObject } from '../api/meta.js';
import type { ChangeRecord } from './change-history.js';
import { StoreError } from './errors.js';
import type { FieldSelector } from './field-selector.js';
import { freezeJson } from './json-value.js';
import type { LabelSelector } from './label-selector.js';
import type { Watch, WatchEvent, WatchHandlers } from './resource-store.js';

/** What a watch selects: one resource, optionally one namespace, a label and a field selector. */
export interface WatchFilter {
  resource: string;
  namespace: string | undefined;
  selector: LabelSelector;
  fields: FieldSelector;
}

/** True when object passes both selectors of filter (the namespace is checked apart). */
export function selects(
  filter: Pick<WatchFilter, 'selector' | 'fields'>,
  object: KubeObject,
): boolean {
  return filter.selector.matches(object.metadata.labels) && filter.fields.matches(object);
}

type Delivery = { event: WatchEvent<KubeObject> } | { error: Error };

/**
 * One watch on the memory store. The store offers it every committed change in
 * resourceVersion order; it keeps the ones it selects in its own FIFO and hands them to the
 * handlers from a microtask, so handlers never run inside the store call that caused them
 * and always see changes in commit order. Every watch gets the store's own frozen object,
 * the same one for all of them.
 */
export class MemoryWatch implements Watch {
  private queue: Delivery[] = [];
  private head = 0;
  private scheduled = false;
  private stopped = false;
  private afterRv = Number.POSITIVE_INFINITY;

  constructor(
    private readonly filter: WatchFilter,
    private readonly handlers: WatchHandlers<KubeObject>,
    private readonly onStop: (watch: MemoryWatch) => void,
  ) {}

  /** True once stopped, by the caller, an error or the store closing. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Selects changes with a resourceVersion above rv from now on (until then none are). */
  startAfter(rv: number): void {
    this.afterRv = rv;
  }

  /** Queues the change if this watch selects it. */
  offer(record: ChangeRecord): void {
    if (this.stopped || record.resourceVersion <= this.afterRv) return;
    if (record.resource !== this.filter.resource) return;
    if (this.filter.namespace !== undefined) {
      if (record.object.metadata.namespace !== this.filter.namespace) return;
    }
    const event = this.toEvent(record);
    if (event) this.enqueue({ event });
  }

  /** Queues the matching ones of objects (the current state) as ADDED events. */
  sendState(objects: readonly KubeObject[]): void {
    for (const object of objects) {
      if (
        this.filter.namespace !== undefined &&
        object.metadata.namespace !== this.filter.namespace
      )
        continue;
      if (!selects(this.filter, object)) continue;
      this.enqueue({ event: { type: 'ADDED', object } });
    }
  }

  /** Ends the watch with err, delivered after the events already queued. */
  fail(err: Error): void {
    if (this.stopped) return;
    this.enqueue({ error: err });
  }

  /** Ends delivery at once: no handler runs after stop returns. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue = [];
    this.head = 0;
    this.onStop(this);
  }

  // A selector watch sees an object enter (ADDED) and leave (DELETED, with its previous
  // content and the change's resourceVersion), as the API server's watch cache reports it;
  // label and field selectors alike, since every change carries the state before it (a
  // replay from history too).
  private toEvent(record: ChangeRecord): WatchEvent<KubeObject> | undefined {
    const before =
      record.type === 'DELETED'
        ? selects(this.filter, record.object)
        : record.previous !== undefined && selects(this.filter, record.previous);
    const after = record.type !== 'DELETED' && selects(this.filter, record.object);
    if (after) {
      return { type: before ? 'MODIFIED' : 'ADDED', object: record.object };
    }
    if (!before) return undefined;
    if (record.type === 'DELETED') return { type: 'DELETED', object: record.object };
    // Only a MODIFIED change can leave the selection, and it always has a previous state.
    const previous = record.previous as KubeObject;
    const left = {
      ...previous,
      metadata: { ...previous.metadata, resourceVersion: String(record.resourceVersion) },
    };
    return { type: 'DELETED', object: freezeJson(left) };
  }

  private enqueue(delivery: Delivery): void {
    this.queue.push(delivery);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    while (!this.stopped && this.head < this.queue.length) {
      const delivery = this.queue[this.head++] as Delivery;
      if ('error' in delivery) {
        this.stop();
        this.handlers.onError(delivery.error);
        return;
      }
      try {
        this.handlers.onEvent(delivery.event);
      } catch (err) {
        // A throwing handler would otherwise lose the rest of the queue silently; end the
        // watch and say why, so the owner can relist.
        this.stop();
        const error = new StoreError(
          'InternalError',
          `watch on ${this.filter.resource} stopped: its handler threw: ${String(err)}`,
        );
        this.handlers.onError(Object.assign(error, { cause: err }));
        return;
      }
    }
    this.queue = [];
    this.head = 0;
  }
}
