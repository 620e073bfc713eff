import type { EventRecorder, EventType } from '../api/event.js';
import type { Logger } from '../api/logger.js';
import type { KubeObject } from '../api/meta.js';

/** One recorded event. */
export interface RecordedEvent {
  kind: string;
  namespace?: string;
  name: string;
  type: EventType;
  reason: string;
  message: string;
  time: number;
}

/**
 * Keeps the most recent events in memory and logs each one: the embedded mode's stand-in
 * for the Events API. Bounded so a long-running process does not grow without limit.
 */
export class MemoryEventRecorder implements EventRecorder {
  private readonly events: RecordedEvent[] = [];
  private readonly waiters = new Set<(event: RecordedEvent) => void>();

  constructor(
    private readonly logger?: Logger,
    private readonly capacity = 1000,
  ) {}

  /** Records an event about object. */
  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const recorded: RecordedEvent = {
      kind: object.kind,
      name: object.metadata.name,
      type,
      reason,
      message,
      time: Date.now(),
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    };
    this.events.push(recorded);
    if (this.events.length > this.capacity) this.events.shift();
    for (const waiter of this.waiters) waiter(recorded);
    const fields = {
      event: reason,
      object: `${object.kind}/${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`,
    };
    if (type === 'Warning') this.logger?.warn(fields, message);
    else this.logger?.info(fields, message);
  }

  /** The recorded events about one object, oldest first. */
  eventsFor(kind: string, name: string, namespace?: string): RecordedEvent[] {
    return this.events.filter(
      (e) => e.kind === kind && e.name === name && e.namespace === namespace,
    );
  }

  /**
   * Resolves with the first event, already recorded or still to come, that matches;
   * rejects after timeoutMs. Events are recorded after the status write they describe,
   * so a reader that saw the status may have to wait for its event.
   */
  waitFor(
    predicate: (event: RecordedEvent) => boolean,
    timeoutMs = 10_000,
  ): Promise<RecordedEvent> {
    const seen = this.events.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = (event: RecordedEvent) => {
        if (!predicate(event)) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(event);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error('timed out waiting for an event'));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Every recorded event, oldest first. */
  all(): readonly RecordedEvent[] {
    return this.events;
  }
}
