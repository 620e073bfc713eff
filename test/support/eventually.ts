import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls probe until it yields something other than undefined or false, and returns that;
 * throws, naming what it waited for, after timeoutMs or once signal aborts. For conditions
 * only a test can see (a lease holder, a log entry), not for the product's own waits, which
 * are event-driven.
 */
export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { what?: string; timeoutMs?: number; intervalMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (options.signal?.aborted)
      throw new Error(`stopped waiting for ${options.what ?? 'a condition'}`);
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${options.what ?? 'a condition'}`);
    await delay(options.intervalMs ?? 10);
  }
}

/** The error a promise rejects with; throws when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** The message of the error a promise rejects with; throws when it resolves instead. */
export async function rejectionMessage(promise: Promise<unknown>): Promise<string> {
  const err = await rejection(promise);
  return err instanceof Error ? err.message : String(err);
}

/**
 * What work resolves with, or 'timed out' after ms: for an answer that must come at all (a
 * hang fails the check instead of the whole file), with a deadline generous enough for a busy
 * machine.
 */
export async function within<T>(ms: number, work: Promise<T>): Promise<T | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
