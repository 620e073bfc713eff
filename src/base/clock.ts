/** An opaque timer, returned by Clock.setTimeout and passed back to Clock.clearTimeout. */
export type TimerHandle = object;

/** Time and timers, injectable so queues and controllers can be tested deterministically. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

// Node fires a timer longer than this after 1 ms (with a warning), so long waits are
// re-armed in steps of at most this length.
const MAX_NODE_TIMEOUT_MS = 2 ** 31 - 1;

class SystemTimer {
  inner: ReturnType<typeof setTimeout> | undefined;
}

/** The real clock: Date.now and Node timers, safe for waits longer than 24.8 days. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = new SystemTimer();
    let remaining = Math.max(0, ms);
    const arm = () => {
      const step = Math.min(remaining, MAX_NODE_TIMEOUT_MS);
      timer.inner = setTimeout(() => {
        remaining -= step;
        if (remaining > 0) arm();
        else fn();
      }, step);
    };
    arm();
    return timer;
  },
  clearTimeout(handle: TimerHandle): void {
    if (handle instanceof SystemTimer) clearTimeout(handle.inner);
  },
};

interface ManualTimer {
  due: number;
  seq: number;
  fn: () => void;
}

/** A clock for tests: time stands still until advance() moves it and fires the timers due. */
export class ManualClock implements Clock {
  private current: number;
  private readonly timers = new Set<ManualTimer>();
  private seq = 0;

  /** Starts at startMs (default 2026-01-01T00:00:00Z). */
  constructor(startMs: number = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  /** The current manual time. */
  now(): number {
    return this.current;
  }

  /** Registers fn to run when the clock has been advanced by ms. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { due: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return timer;
  }

  /** Cancels a timer; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as ManualTimer);
  }

  /**
   * Moves time forward by ms, firing every timer that falls due on the way in order of due
   * time (then creation order); each runs with now() equal to its due time, and timers it
   * sets that fall due within the window fire too.
   */
  advance(ms: number): void {
    const target = this.current + Math.max(0, ms);
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.timers.delete(timer);
      this.current = Math.max(this.current, timer.due);
      timer.fn();
    }
    this.current = target;
  }

  /** How many timers are waiting. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** When the earliest waiting timer falls due, or undefined when none waits. */
  nextTimerAt(): number | undefined {
    return this.nextDue(Number.POSITIVE_INFINITY)?.due;
  }

  private nextDue(limit: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const timer of this.timers) {
      if (timer.due > limit) continue;
      if (!best || timer.due < best.due || (timer.due === best.due && timer.seq < best.seq)) {
        best = timer;
      }
    }
    return best;
  }
}
