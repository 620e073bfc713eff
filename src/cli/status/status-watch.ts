import { errorMessage } from '../../base/error-message.js';
import { watchDirectory } from '../../fs/directory-watcher.js';

/**
 * How often `status --watch` reads the data root again without a file event: what no file
 * event announces (a failure the plugin holds in memory, a certificate expiring as time passes,
 * an event lost to a full inotify queue) shows within this long.
 */
export const WATCH_FALLBACK_MS = 5000;
/** A burst of events (one atomic write is several) gives one refresh this long after the first. */
export const WATCH_SETTLE_MS = 100;

/** What `status --watch` needs: what to watch, how to render it and where to print it. */
export interface StatusWatch {
  /** The data root: it and each volume dir in it are watched. */
  root: string;
  /** The snapshot as text; printed only when it differs from the last one printed. */
  render: () => Promise<string>;
  /** Prints a snapshot that differs from the previous one. */
  print: (snapshot: string) => void;
  /** Reports a snapshot that could not be read, or a dir that cannot be watched; the watch goes on. */
  fail: (message: string) => void;
  /** Ends the watch (SIGINT, SIGTERM, or a test). */
  signal: AbortSignal;
  fallbackMs?: number;
  settleMs?: number;
}

/**
 * Prints the snapshot, then again each time it changes, until the signal aborts: woken by file
 * events in the data root and its volume dirs, and at the latest every fallbackMs.
 */
export async function watchStatus(options: StatusWatch): Promise<void> {
  const { signal } = options;
  const fallbackMs = options.fallbackMs ?? WATCH_FALLBACK_MS;
  const wake = new Wakeup();
  const watch = watchDirectory({
    root: options.root,
    subdirectories: true,
    onChange: () => wake.notify(),
    onError: (err) => options.fail(`${err.message}; read again every ${fallbackMs / 1000} s`),
    settleMs: options.settleMs ?? WATCH_SETTLE_MS,
    resyncMs: fallbackMs,
  });
  let last: string | undefined;
  try {
    // Watch first, then read: a change after the read wakes the next round.
    await watch.ready;
    while (!signal.aborted) {
      try {
        const snapshot = await options.render();
        if (snapshot !== last) {
          last = snapshot;
          options.print(snapshot);
        }
      } catch (err) {
        last = undefined;
        options.fail(errorMessage(err));
      }
      // The watch tells of a burst of events once it settled, and every fallbackMs anyway.
      await wake.wait(signal);
    }
  } finally {
    watch.close();
  }
}

/** A change flag a waiter can sleep on: set by notify, cleared by the wait it ends. */
class Wakeup {
  private pending = false;
  private resolve: (() => void) | undefined;

  notify(): void {
    this.pending = true;
    this.resolve?.();
  }

  /** Resolves on a change (also one before the call) or an abort. */
  async wait(signal: AbortSignal): Promise<void> {
    if (!this.pending && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          this.resolve = undefined;
          resolve();
        };
        signal.addEventListener('abort', done, { once: true });
        this.resolve = done;
      });
    }
    this.pending = false;
  }
}
