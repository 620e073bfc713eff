import type { Clock, TimerHandle } from './clock.js';
import type { ErrorKind } from './error-catalogue.js';

/** The reason a Deadline's signal carries when its time ran out. */
export class DeadlineExceededError extends Error {
  constructor(readonly ms: number) {
    super(`deadline of ${ms} ms exceeded`);
    // The name AbortSignal.timeout uses, so code that tells timeouts from aborts by name works.
    this.name = 'TimeoutError';
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_DEADLINE_EXCEEDED';
  }
}

/**
 * An AbortSignal that aborts when ms have passed on the clock, or at once when parent
 * aborts. Built on a plain Clock timer whose callback holds the controller, so the timer
 * keeps the signal alive until it fires or clear() runs. AbortSignal.timeout inside
 * AbortSignal.any is not: Node 20 can garbage-collect the timeout signal after a full GC,
 * and the combined signal then never aborts (see test/store/deadline.test.ts).
 */
export class Deadline {
  private readonly controller = new AbortController();
  private handle: TimerHandle | undefined;
  private readonly onParentAbort: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    readonly ms: number,
    private readonly parent?: AbortSignal,
  ) {
    if (parent?.aborted) {
      this.controller.abort(parent.reason);
      return;
    }
    this.handle = clock.setTimeout(() => {
      this.handle = undefined;
      this.release();
      this.controller.abort(new DeadlineExceededError(ms));
    }, ms);
    if (parent) {
      this.onParentAbort = () => {
        this.clear();
        this.controller.abort(parent.reason);
      };
      parent.addEventListener('abort', this.onParentAbort, { once: true });
    }
  }

  /** Aborts when the time is up (reason: DeadlineExceededError) or the parent aborts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True when the signal aborted because the time ran out (not because of the parent). */
  get exceeded(): boolean {
    return this.controller.signal.reason instanceof DeadlineExceededError;
  }

  /** Stops the timer and lets go of the parent; call once the guarded work has ended. */
  clear(): void {
    if (this.handle !== undefined) this.clock.clearTimeout(this.handle);
    this.handle = undefined;
    this.release();
  }

  private release(): void {
    if (this.onParentAbort) this.parent?.removeEventListener('abort', this.onParentAbort);
  }
}

/**
 * Settles like promise, or rejects with signal's reason as soon as signal aborts, whichever
 * comes first: for waits on calls that take no signal. The call itself goes on; whatever
 * it settles with later is ignored.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
