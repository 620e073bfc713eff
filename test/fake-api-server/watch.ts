import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../src/api/meta.js';
import type { Watch, WatchEvent } from '../../src/store/resource-store.js';
import type { FieldSelector } from './field-selector.js';
import type { Status } from './status.js';

type WireEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }
  | { type: 'BOOKMARK'; object: KubeObject }
  | { type: 'ERROR'; object: Status };

/**
 * One open watch response: newline-delimited JSON events on a chunked 200 response. It
 * applies the field selector on top of the store's (label-filtered) watch, tracking which
 * objects are in the selection so that an object leaving it is reported as DELETED, as the
 * API server's watch cache does.
 */
export class WatchStream {
  /** Objects the client was told about and that pass the field selector. */
  private readonly members = new Set<string>();
  /** Objects whose selection at the watch's start is known, or that had an event since. */
  private readonly seen = new Set<string>();
  private pending: WatchEvent<KubeObject>[] | undefined = [];
  private upstream: Watch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private silent = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly fieldSelector: FieldSelector,
    /** The kind's apiVersion and kind, for BOOKMARK objects. */
    private readonly typeMeta: { apiVersion: string; kind: string },
    readonly allowBookmarks: boolean,
    private readonly onClose: (stream: WatchStream) => void,
  ) {
    response.on('close', () => this.closeUp());
  }

  /** Attaches the store watch that feeds this stream; it is stopped when the stream closes. */
  attach(upstream: Watch): void {
    if (this.closed) upstream.stop();
    else this.upstream = upstream;
  }

  /** Ends the stream cleanly after seconds, as `timeoutSeconds` asks. */
  endAfter(seconds: number): void {
    this.timer = setTimeout(() => this.end(), seconds * 1000);
  }

  /**
   * Records the objects known to be in their state of the watch's start (for a resumed
   * watch: listed, unchanged since its resourceVersion), which tells whether they passed
   * the field selector then, and sends the events held back until now.
   */
  start(atStart: readonly KubeObject[]): void {
    for (const object of atStart) {
      this.seen.add(keyOf(object));
      if (this.fieldSelector.matches(object)) this.members.add(keyOf(object));
    }
    // start runs once, so the events held until now are still there.
    const held = this.pending as WatchEvent<KubeObject>[];
    this.pending = undefined;
    for (const event of held) this.deliver(event);
  }

  /** Takes one event from the store watch (held back until start). */
  offer(event: WatchEvent<KubeObject>): void {
    if (this.pending) this.pending.push(event);
    else this.deliver(event);
  }

  /** Sends an ERROR event with status and ends the stream, as the API server does. */
  fail(status: Status): void {
    this.write({ type: 'ERROR', object: status });
    this.end();
  }

  /** Sends a BOOKMARK carrying resourceVersion, if the client allowed bookmarks. */
  bookmark(resourceVersion: string): void {
    if (!this.allowBookmarks || this.pending) return;
    this.write({
      type: 'BOOKMARK',
      object: { ...this.typeMeta, metadata: { name: '', resourceVersion } },
    });
  }

  /** Sends nothing more, not even the end at timeoutSeconds; the connection stays open. */
  silence(): void {
    this.silent = true;
    clearTimeout(this.timer);
  }

  /** Ends the response cleanly (the client sees the stream finish). */
  end(): void {
    if (this.closed) return;
    this.response.end();
    this.closeUp();
  }

  /** Tears the connection down (the client sees an aborted stream). */
  destroy(): void {
    if (this.closed) return;
    this.response.destroy();
    this.closeUp();
  }

  private deliver(event: WatchEvent<KubeObject>): void {
    const key = keyOf(event.object);
    const selected = this.fieldSelector.matches(event.object);
    // The first event of an object not known from start tells whether the watch began
    // with it: a fresh watch's initial state and objects entering the label selection come
    // as ADDED. One the watch began with (a resumed watch's MODIFIED or DELETED of an object
    // changed since) is taken to have passed the field selector then as it does now: the
    // store's events carry no previous state to tell.
    const member = this.seen.has(key) ? this.members.has(key) : event.type !== 'ADDED' && selected;
    this.seen.add(key);
    if (event.type === 'DELETED') {
      // A deleted object's last state tells whether it was selected, even if it joined the
      // selection before this watch began.
      if (!member && !selected) return;
      this.members.delete(key);
      this.write({ type: 'DELETED', object: event.object });
    } else if (selected) {
      this.members.add(key);
      const type = event.type === 'ADDED' || !member ? 'ADDED' : 'MODIFIED';
      this.write({ type, object: event.object });
    } else if (member) {
      this.members.delete(key);
      this.write({ type: 'DELETED', object: event.object });
    }
  }

  private write(event: WireEvent): void {
    if (this.closed || this.silent) return;
    this.response.write(`${JSON.stringify(event)}\n`);
  }

  private closeUp(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.upstream?.stop();
    this.onClose(this);
  }
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}
