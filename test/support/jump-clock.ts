import type { Clock, TimerHandle } from '../../src/base/clock.js';

interface JumpTimer {
  due: number;
  fn: () => void;
  real: ReturnType<typeof setTimeout>;
}

/**
 * Real time plus jumps: timers run on real timers (so retries of a few milliseconds happen by
 * themselves), and jump(ms) moves now() forward at once, firing every timer that falls due.
 * For waits of hours (issuance backoff) in a test that takes milliseconds, without sleeping.
 */
export class JumpClock implements Clock {
  private offset = 0;
  private readonly timers = new Set<JumpTimer>();

  now(): number {
    return Date.now() + this.offset;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: JumpTimer = {
      due: this.now() + Math.max(0, ms),
      fn,
      real: setTimeout(() => this.fire(timer), Math.min(Math.max(0, ms), 2 ** 31 - 1)),
    };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    const timer = handle as JumpTimer;
    if (!this.timers.delete(timer)) return;
    clearTimeout(timer.real);
  }

  /** Moves time forward by ms and fires the timers now due, earliest first. */
  jump(ms: number): void {
    this.offset += ms;
    const due = [...this.timers].filter((t) => t.due <= this.now()).sort((a, b) => a.due - b.due);
    for (const timer of due) this.fire(timer);
  }

  /** When the earliest waiting timer falls due (clock time), if any waits. */
  nextTimerAt(): number | undefined {
    let earliest: number | undefined;
    for (const timer of this.timers)
      if (earliest === undefined || timer.due < earliest) earliest = timer.due;
    return earliest;
  }

  private fire(timer: JumpTimer): void {
    if (!this.timers.delete(timer)) return;
    clearTimeout(timer.real);
    // A real timer that ran before a jump made it due (long waits are capped) waits on.
    if (timer.due > this.now()) {
      this.timers.add(timer);
      timer.real = setTimeout(
        () => this.fire(timer),
        Math.min(timer.due - this.now(), 2 ** 31 - 1),
      );
      return;
    }
    timer.fn();
  }
}
