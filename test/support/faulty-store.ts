import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import type {
  ListOptions,
  ListResult,
  ResourceStore,
  Watch,
  WatchEvent,
  WatchHandlers,
  WatchOptions,
} from '../../src/store/resource-store.js';

interface ActiveWatch {
  handlers: WatchHandlers<KubeObject>;
  inner: Watch | undefined;
  stopped: boolean;
  options: WatchOptions;
}

/**
 * A ResourceStore wrapper that can fail lists, hold watches back (so changes pile up in
 * between), drop or inject watch events and end watches with an error.
 */
export class FaultyStore implements ResourceStore {
  readonly listErrors: Error[] = [];
  /** While set, every list fails with it (an API server that is down). */
  listsFailWith: Error | undefined;
  lists = 0;
  /** Every list call: the kind's plural and the label selector, `plural?selector`. */
  readonly listCalls: string[] = [];
  readonly watchCalls: WatchOptions[] = [];
  /** Errors thrown, one per call, by the next updateStatus calls. */
  readonly statusErrors: Error[] = [];
  statusUpdates = 0;
  private readonly active = new Set<ActiveWatch>();
  private held: Array<() => void> | undefined;
  private dropping = false;

  constructor(private readonly inner: ResourceStore) {}

  get<T extends KubeObject>(kind: ResourceKind, name: string, namespace?: string): Promise<T> {
    return this.inner.get<T>(kind, name, namespace);
  }

  async list<T extends KubeObject>(
    kind: ResourceKind,
    options?: ListOptions,
  ): Promise<ListResult<T>> {
    this.lists++;
    this.listCalls.push(
      `${kind.plural}${options?.labelSelector ? `?${options.labelSelector}` : ''}`,
    );
    const error = this.listsFailWith ?? this.listErrors.shift();
    if (error) throw error;
    return this.inner.list<T>(kind, options);
  }

  create<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.inner.create(kind, obj);
  }

  update<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.inner.update(kind, obj);
  }

  async updateStatus<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    this.statusUpdates++;
    const error = this.statusErrors.shift();
    if (error) throw error;
    return this.inner.updateStatus(kind, obj);
  }

  delete(kind: ResourceKind, name: string, namespace?: string): Promise<void> {
    return this.inner.delete(kind, name, namespace);
  }

  watch<T extends KubeObject>(
    kind: ResourceKind,
    options: WatchOptions,
    handlers: WatchHandlers<T>,
  ): Watch {
    this.watchCalls.push(options);
    const entry: ActiveWatch = {
      handlers: handlers as unknown as WatchHandlers<KubeObject>,
      inner: undefined,
      stopped: false,
      options,
    };
    this.active.add(entry);
    const open = () => {
      if (entry.stopped) return;
      entry.inner = this.inner.watch<KubeObject>(kind, options, {
        onEvent: (event) => {
          if (!entry.stopped && !this.dropping) entry.handlers.onEvent(event);
        },
        onError: (err) => {
          if (entry.stopped) return;
          this.active.delete(entry);
          entry.handlers.onError(err);
        },
      });
    };
    if (this.held) this.held.push(open);
    else open();
    return {
      stop: () => {
        entry.stopped = true;
        entry.inner?.stop();
        this.active.delete(entry);
      },
    };
  }

  /** Watches started from now on wait for release(). */
  hold(): void {
    this.held ??= [];
  }

  /** Starts the held watches. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const open of held) open();
  }

  /** While true, events of running watches are lost (a broken connection). */
  drop(dropping: boolean): void {
    this.dropping = dropping;
  }

  /** How many watches run. */
  get activeWatches(): number {
    return this.active.size;
  }

  /** Delivers event to every running watch, as if the server sent it. */
  inject(event: WatchEvent<KubeObject>): void {
    for (const entry of this.active) entry.handlers.onEvent(event);
  }

  /** Ends every running watch with err. */
  fail(err: Error): void {
    for (const entry of [...this.active]) {
      entry.stopped = true;
      entry.inner?.stop();
      this.active.delete(entry);
      entry.handlers.onError(err);
    }
  }
}
