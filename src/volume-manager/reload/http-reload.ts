import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a reload POST is tried. */
export interface HttpReloadOptions {
  /** The limit of one attempt, connection to answer. */
  timeoutMs: number;
  /** Attempts in all (at least 1). */
  attempts: number;
  /** The wait before the second attempt; doubled before each later one. */
  backoffMs: number;
}

/** The node's defaults: a short timeout, 3 attempts, 1 s then 2 s apart. */
export const HTTP_RELOAD_DEFAULTS: HttpReloadOptions = {
  timeoutMs: 5_000,
  attempts: 3,
  backoffMs: 1_000,
};

// One POST with an empty body; the answer's body is drained, never held. node:http never
// follows a redirect, and a redirect is no success: the node POSTs to the pod's IP only.
function postOnce(url: URL, timeoutMs: number, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-length': '0', 'user-agent': 'cert-csi' }, signal },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        resolve(status >= 200 && status < 300 ? undefined : `answered HTTP ${status}`);
      },
    );
    // Fires whatever the peer does: a connection that never answers ends here.
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('error', (err) => resolve(err.message));
    req.on('close', () => clearTimeout(timer));
    req.end();
  });
}

/** The problem a reload ends with when the node plugin stops under it. */
export const RELOAD_STOPPED = 'the node plugin stopped';

/**
 * POSTs to url until an attempt gets a 2xx answer or the attempts run out, the waits between
 * them doubling; returns the last problem, or undefined on success. An abort (the plugin
 * stopping) ends the attempt in flight and the wait at once, and no attempt follows.
 */
export async function postReload(
  url: URL,
  options: HttpReloadOptions,
  signal: AbortSignal,
): Promise<string | undefined> {
  let problem: string | undefined;
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    if (attempt > 1) {
      // Referenced: a pending retry is real work; stop() is what ends it early.
      await sleep(options.backoffMs * 2 ** (attempt - 2), undefined, { signal }).catch(() => {});
    }
    if (signal.aborted) return RELOAD_STOPPED;
    problem = await postOnce(url, options.timeoutMs, signal);
    if (problem === undefined) return undefined;
  }
  return `${problem} (after ${options.attempts} attempts)`;
}
