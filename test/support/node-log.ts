import type { NodeProcess } from './cli-process.js';

/** One JSON log line of a `cert-csi node` process (pino). */
export interface LogLine {
  level?: string;
  msg?: string;
  volumeId?: string;
  [field: string]: unknown;
}

/**
 * Follows a node process's JSON log as it is written, so a test can wait for an event the
 * plugin logs (a renewal, an error) instead of polling files.
 */
export class NodeLog {
  readonly lines: LogLine[] = [];
  private offset = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly node: NodeProcess) {
    this.scan();
    // startNode's own listener runs first, so output() already holds the chunk.
    const onData = () => this.scan();
    node.child.stdout?.on('data', onData);
    node.child.stderr?.on('data', onData);
  }

  /** Lines whose msg is msg, optionally of one volume. */
  find(msg: string, volumeId?: string): LogLine[] {
    return this.lines.filter(
      (l) => l.msg === msg && (volumeId === undefined || l.volumeId === volumeId),
    );
  }

  /** Resolves true once check() holds (re-checked on every new log line), false after timeoutMs. */
  waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
    if (check()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (result: boolean) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(result);
      };
      const listener = () => {
        if (check()) done(true);
      };
      const timer = setTimeout(() => done(check()), timeoutMs);
      this.listeners.add(listener);
    });
  }

  private scan(): void {
    const text = this.node.output();
    let added = false;
    for (;;) {
      const end = text.indexOf('\n', this.offset);
      if (end < 0) break;
      const raw = text.slice(this.offset, end);
      this.offset = end + 1;
      if (!raw.startsWith('{')) continue;
      try {
        this.lines.push(JSON.parse(raw) as LogLine);
        added = true;
      } catch {
        // Not a log line (a runtime warning on stderr): ignored.
      }
    }
    if (added) for (const listener of [...this.listeners]) listener();
  }
}
