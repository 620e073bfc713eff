import { type FSWatcher, watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Watches a directory and its direct subdirectories (inotify, through fs.watch) and calls
 * onChange on any entry added, removed, renamed or written in them: for a data root, a volume
 * dir appearing or going, and metadata.json replaced inside one. Not recursive on purpose: the
 * generations under data/ change only together with metadata.json. Call sync after each
 * change to follow subdirectories that came or went.
 */
export class DirectoryWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private closed = false;

  constructor(
    private readonly root: string,
    private readonly onChange: () => void,
    /** fs.watch without options; replaceable to show how a watcher's error is handled. */
    private readonly watchDir: (path: string, listener: () => void) => FSWatcher = (
      path,
      listener,
    ) => watch(path, { persistent: false }, listener),
  ) {}

  /**
   * Watches the root and each subdirectory it holds now, and stops watching those that are
   * gone. A root that cannot be read (removed, not yet there) is watched again at the next sync.
   */
  async sync(): Promise<void> {
    if (this.closed) return;
    this.watchPath(this.root);
    let names: string[];
    try {
      const entries = await readdir(this.root, { withFileTypes: true });
      names = entries.filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      names = [];
    }
    const wanted = new Set([this.root, ...names.map((name) => join(this.root, name))]);
    for (const [path, watcher] of this.watchers) {
      if (!wanted.has(path)) this.stopWatching(path, watcher);
    }
    for (const path of wanted) this.watchPath(path);
  }

  /** The paths being watched now (the root first when it is), for tests and diagnostics. */
  watchedPaths(): string[] {
    return [...this.watchers.keys()];
  }

  /** Stops every watcher; no onChange after this. */
  close(): void {
    this.closed = true;
    for (const [path, watcher] of this.watchers) this.stopWatching(path, watcher);
  }

  private watchPath(path: string): void {
    if (this.closed || this.watchers.has(path)) return;
    let watcher: FSWatcher;
    try {
      watcher = this.watchDir(path, () => this.changed());
    } catch {
      // Gone between readdir and watch, or not watchable: the next sync tries again.
      return;
    }
    // A watched dir that is removed ends its watcher with an error on some kernels.
    watcher.on('error', () => {
      this.stopWatching(path, watcher);
      this.changed();
    });
    this.watchers.set(path, watcher);
  }

  private stopWatching(path: string, watcher: FSWatcher): void {
    if (this.watchers.get(path) === watcher) this.watchers.delete(path);
    watcher.close();
  }

  private changed(): void {
    if (!this.closed) this.onChange();
  }
}
