import type { Clock, TimerHandle } from './clock.js';

/**
 * One timer per key on a Clock: scheduling a key again replaces its timer. The Clock
 * re-arms waits longer than setTimeout's 24.8-day limit, so any date works.
 */
export class TimerSet {
  private readonly timers = new Map<string, TimerHandle>();

  constructor(private readonly clock: Clock) {}

  /** Runs fn at the given time (now or in the past: as soon as possible). */
  schedule(key: string, at: number, fn: () => void): void {
    this.cancel(key);
    const handle = this.clock.setTimeout(
      () => {
        if (this.timers.get(key) === handle) this.timers.delete(key);
        fn();
      },
      Math.max(0, at - this.clock.now()),
    );
    this.timers.set(key, handle);
  }

  /** Cancels key's timer, if any. */
  cancel(key: string): void {
    const handle = this.timers.get(key);
    if (handle === undefined) return;
    this.clock.clearTimeout(handle);
    this.timers.delete(key);
  }

  /** True when key has an armed timer. */
  has(key: string): boolean {
    return this.timers.has(key);
  }

  /** Cancels every timer. */
  clear(): void {
    for (const key of [...this.timers.keys()]) this.cancel(key);
  }

  /** How many timers are armed. */
  get size(): number {
    return this.timers.size;
  }
}
