import type { Test } from 'tap';
import type { KubeObject, ResourceKind } from '../../../src/api/meta.js';
import type {
  ResourceStore,
  Watch,
  WatchEvent,
  WatchOptions,
} from '../../../src/store/resource-store.js';
import { until } from '../../support/eventually.js';

// How long a case waits for a watch to deliver what it must. Generous on purpose: on a loaded
// machine an HTTP watch can lag by seconds, and a correct backend never needs the whole wait.
export const WATCH_WAIT_MS = 20_000;

/** `TYPE namespace/name` (or `TYPE name` for cluster-scoped objects): one event, readably. */
export function summary(event: WatchEvent<KubeObject>): string {
  const { namespace, name } = event.object.metadata;
  return `${event.type} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** One watch, started at once, whose events and errors are kept for the case to check. */
export class WatchRecorder<T extends KubeObject = KubeObject> {
  readonly events: WatchEvent<T>[] = [];
  readonly errors: Error[] = [];
  private readonly watch: Watch;

  constructor(
    t: Test,
    store: ResourceStore,
    readonly kind: ResourceKind,
    options: WatchOptions,
  ) {
    this.watch = store.watch<T>(kind, options, {
      onEvent: (event) => this.events.push(event),
      onError: (err) => this.errors.push(err),
    });
    t.teardown(() => this.watch.stop());
  }

  /** The events so far, summarised. */
  get seen(): string[] {
    return this.events.map(summary);
  }

  /** Waits until the watch has delivered an event with this summary; returns it. */
  async waitFor(expected: string): Promise<WatchEvent<T>> {
    return until(() => this.events.find((event) => summary(event) === expected), {
      what: `${expected} on a ${this.kind.kind} watch (seen: ${this.seen.join(', ') || 'nothing'}; errors: ${this.errors.map((e) => e.message).join(', ') || 'none'})`,
      timeoutMs: WATCH_WAIT_MS,
    });
  }

  /** Waits until the watch has ended with an error; returns it. */
  async waitForError(): Promise<Error> {
    return until(() => this.errors[0], {
      what: `an error on a ${this.kind.kind} watch (seen: ${this.seen.join(', ') || 'nothing'})`,
      timeoutMs: WATCH_WAIT_MS,
    });
  }

  stop(): void {
    this.watch.stop();
  }
}
