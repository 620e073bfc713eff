import { type Clock, systemClock, type TimerHandle } from '../base/clock.js';

export interface WorkQueueOptions<K> {
  /** First retry delay of addRateLimited (default 5 s, cert-manager's item-based limiter). */
  baseDelayMs?: number;
  /** Cap of the retry delay (default 5 min). */
  maxDelayMs?: number;
  clock?: Clock;
  /** Told about every handler failure run() retries. */
  onError?: (err: unknown, key: K) => void;
}

/** What get() hands a worker: a key to process, or the news that the queue shut down. */
export type WorkItem<K> = { done: false; key: K } | { done: true };

const DEFAULT_BASE_DELAY_MS = 5_000;
const DEFAULT_MAX_DELAY_MS = 300_000;

/**
 * A rate-limited work queue with client-go's semantics. A key waits at most once; a key
 * added while it is processed is queued again when processing ends, so one key is never
 * processed by two workers at once and no add is lost. Delayed adds keep the earliest time.
 * After shutDown, new adds are ignored, keys already waiting are still handed out (drain)
 * and delayed adds are dropped.
 */
export class WorkQueue<K = string> {
  private readonly ready: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly delayed = new Map<K, { due: number; timer: TimerHandle }>();
  private readonly failures = new Map<K, number>();
  private waiters: Array<() => void> = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: WorkQueueOptions<K> = {}) {
    this.clock = options.clock ?? systemClock;
    this.baseDelayMs = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  }

  /** Queues key unless it is already waiting; a key being processed is queued after it. */
  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.ready.push(key);
    this.waiters.shift()?.();
  }

  /** Queues key after ms; of several delayed adds of one key the earliest wins. */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const due = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending) {
      if (pending.due <= due) return;
      this.clock.clearTimeout(pending.timer);
    }
    const timer = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { due, timer });
  }

  /** Queues key after base * 2^failures (capped), counting one more failure for it. */
  addRateLimited(key: K): void {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.addAfter(key, Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** failures));
  }

  /** Forgets key's failures, so its next addRateLimited waits the base delay again. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** How many times key was added rate-limited since it was last forgotten. */
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  /** How many keys wait to be processed now (delayed ones not counted). */
  len(): number {
    return this.ready.length;
  }

  /** True once shutDown was called. */
  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops accepting keys and drops delayed ones; workers drain what waits, then end. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) this.clock.clearTimeout(timer);
    this.delayed.clear();
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Waits for the next key and marks it processing; the caller must call done(key). */
  async get(): Promise<WorkItem<K>> {
    for (;;) {
      if (this.ready.length > 0) {
        const key = this.ready.shift() as K;
        this.processing.add(key);
        this.dirty.delete(key);
        return { done: false, key };
      }
      if (this.shuttingDown) return { done: true };
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Ends processing of key, queueing it again if it was added meanwhile. */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.ready.push(key);
      this.waiters.shift()?.();
    }
  }

  /**
   * Processes keys with `concurrency` workers until shutDown and the drain end: a handler
   * that resolves forgets the key's failures, one that throws re-adds it rate-limited.
   */
  async run(handler: (key: K) => Promise<void>, concurrency = 1): Promise<void> {
    const worker = async () => {
      for (let item = await this.get(); !item.done; item = await this.get()) {
        const key = item.key;
        try {
          await handler(key);
          this.forget(key);
        } catch (err) {
          this.options.onError?.(err, key);
          this.addRateLimited(key);
        } finally {
          this.done(key);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  }
}
