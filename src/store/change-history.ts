import type { KubeObject } from '../api/meta.js';
import type { WatchEventType } from './resource-store.js';

/** One committed change, as watches see it. Objects in it are never mutated. */
export interface ChangeRecord {
  readonly resourceVersion: number;
  /** The resource name, `plural.group` (or `plural` for the core group). */
  readonly resource: string;
  readonly type: WatchEventType;
  /** The new state; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: KubeObject;
  /** The state before a MODIFIED change (a selector watch needs both to see transitions). */
  readonly previous: KubeObject | undefined;
}

/**
 * The last `capacity` changes across all kinds, so a watch can resume from a
 * resourceVersion. Every change with a resourceVersion above startRv is held.
 */
export class ChangeHistory {
  private records: ChangeRecord[] = [];
  private head = 0;
  private start: number;

  constructor(
    private readonly capacity: number,
    startRv = 0,
  ) {
    this.start = startRv;
  }

  /** Every change after this resourceVersion is still held. */
  get startRv(): number {
    return this.start;
  }

  /** Appends a change; records must arrive in increasing resourceVersion order. */
  append(record: ChangeRecord): void {
    this.records.push(record);
    while (this.records.length - this.head > this.capacity) {
      this.start = this.records[this.head]?.resourceVersion ?? this.start;
      this.head++;
    }
    // Compact now and then so dropped slots do not pile up.
    if (this.head > 1024 && this.head * 2 > this.records.length) {
      this.records = this.records.slice(this.head);
      this.head = 0;
    }
  }

  /** The changes after rv in order, or undefined when some of them are no longer held. */
  since(rv: number): ChangeRecord[] | undefined {
    if (rv < this.start) return undefined;
    let low = this.head;
    let high = this.records.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.records[middle]?.resourceVersion ?? rv) <= rv) low = middle + 1;
      else high = middle;
    }
    return this.records.slice(low);
  }
}
