import { type Clock, systemClock } from '../../base/clock.js';

/**
 * A token bucket, as client-go's client-side limit: up to `burst` requests at once, then
 * `qps` per second. Waiters are served in arrival order.
 */
export class RateLimiter {
  private tokens: number;
  private last: number;
  private readonly waiters: Array<() => void> = [];
  private timer: ReturnType<Clock['setTimeout']> | undefined;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock = systemClock,
  ) {
    if (!(qps > 0) || !Number.isInteger(burst) || burst < 1) {
      throw new RangeError(
        `rate limit needs qps > 0 and a whole burst >= 1 (got ${qps}, ${burst})`,
      );
    }
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Resolves when the caller may send one request. */
  take(): Promise<void> {
    this.refill();
    if (this.waiters.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, ((1 - this.tokens) / this.qps) * 1000);
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.tokens >= 1 && this.waiters.length > 0) {
        this.tokens -= 1;
        this.waiters.shift()?.();
      }
      if (this.waiters.length > 0) this.schedule();
    }, wait);
  }
}
