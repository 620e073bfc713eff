import type { KubeObject, ResourceKind } from '../api/meta.js';
import type { Clock } from '../base/clock.js';
import { Informer, type InformerOptions } from '../store/informer.js';
import type { ResourceStore } from '../store/resource-store.js';

/** A change seen by one of the informers: the selector value it belongs to and the object. */
export type SelectorChange<T> = (value: string, object: T) => void;

/**
 * Informers of one kind, one per value of a field, each listing and watching only objects
 * whose field has that value (`spec.signerName=<value>`): for a controller that must never
 * list what is not its own, and whose set of values (its signers) changes at run time.
 * Informers are started by ensure and stopped by remove; stop ends them all for good.
 */
export class SelectorInformers<T extends KubeObject> {
  private readonly informers = new Map<
    string,
    { informer: Informer<T>; removals: Array<() => void> }
  >();
  private readonly listeners = new Set<SelectorChange<T>>();
  private stopped = false;

  constructor(
    private readonly store: ResourceStore,
    private readonly kind: ResourceKind,
    private readonly field: string,
    private readonly options: { clock?: Clock; onError?: (err: Error) => void } = {},
  ) {}

  /** The informer of value, created and started when missing (none once stopped). */
  ensure(value: string): Informer<T> | undefined {
    if (this.stopped) return undefined;
    const existing = this.informers.get(value);
    if (existing) return existing.informer;
    const options: InformerOptions = {
      ...this.options,
      fieldSelector: `${this.field}=${escapeFieldValue(value)}`,
    };
    const informer = new Informer<T>(this.store, this.kind, options);
    const tell = (object: T) => {
      for (const listener of this.listeners) listener(value, object);
    };
    const removals = [
      informer.on('add', tell),
      informer.on('update', (_old, current) => tell(current)),
      informer.on('delete', tell),
    ];
    this.informers.set(value, { informer, removals });
    informer.start();
    return informer;
  }

  /** The informer of value, if it runs. */
  get(value: string): Informer<T> | undefined {
    return this.informers.get(value)?.informer;
  }

  /** Stops and forgets the informer of value: its objects are no longer anyone's concern. */
  remove(value: string): void {
    const entry = this.informers.get(value);
    if (!entry) return;
    this.informers.delete(value);
    for (const remove of entry.removals) remove();
    entry.informer.stop();
  }

  /** The values with a running informer. */
  values(): string[] {
    return [...this.informers.keys()];
  }

  /** Calls listener for every add, update and delete of any informer; returns its removal. */
  onChange(listener: SelectorChange<T>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops every informer; later ensure calls start nothing. */
  stop(): void {
    this.stopped = true;
    for (const value of [...this.informers.keys()]) this.remove(value);
    this.listeners.clear();
  }
}

/** A field selector value with the API server's escapes (`\`, `,` and `=`). */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (char) => `\\${char}`);
}
