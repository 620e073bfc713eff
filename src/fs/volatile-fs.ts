import type { Stats } from 'node:fs';
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  statfsSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  symlink,
  unlink,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { processUmask, umaskKeeps } from './process-umask.js';
import {
  readRegularFile,
  readRegularFileSync,
  readRegularFileWithStats,
  readRegularFileWithStatsSync,
  type StatedContent,
} from './regular-file.js';

/** statfs(2) f_type of tmpfs (TMPFS_MAGIC in linux/magic.h). */
export const TMPFS_MAGIC = 0x01021994;

/** How writeNewFile creates a file. */
export interface NewFileOptions {
  /** Mode passed to open(2), so filtered by the umask. */
  openMode: number;
  /** Group set on the open file (fchown -1:gid) when given. */
  gid?: number;
  /**
   * Exact mode of the file when given, whatever the umask: passed to open(2) instead of openMode
   * when the umask keeps all of it (one call fewer per file), set on the open file (fchmod)
   * otherwise. The file may then have that mode while it is written: a caller that needs it
   * private until then creates it in a dir only the writer can enter.
   */
  mode?: number;
}

// The mode a new file is opened with, and the one still to set on it (fchmod) if any.
function creationMode(options: NewFileOptions): { openMode: number; chmodTo?: number } {
  const { mode } = options;
  if (mode === undefined) return { openMode: options.openMode };
  if (umaskKeeps(mode, processUmask())) return { openMode: mode };
  return { openMode: options.openMode, chmodTo: mode };
}

/**
 * The small-file operations of the atomic writers, in one flavour per kind of filesystem. Every
 * method returns a Promise either way, so callers are written once for both.
 */
export interface FileOps {
  /** True for the tmpfs flavour: synchronous calls, no fsync. */
  readonly volatile: boolean;
  /**
   * A regular file of at most maxBytes, never following a symlink at path and never blocking
   * on a FIFO or device (RefusedFileError, see regular-file.ts).
   */
  readFile(path: string, maxBytes: number): Promise<Buffer>;
  /** readFile with the fstat of the file read: its mode and owner without an lstat beside it. */
  readFileWithStats(path: string, maxBytes: number): Promise<StatedContent>;
  readdir(path: string): Promise<string[]>;
  readlink(path: string): Promise<string>;
  /** realpath(3): path with every symlink resolved. */
  realpath(path: string): Promise<string>;
  lstat(path: string): Promise<Stats>;
  /** lstat, or undefined when path does not exist. */
  lstatIfExists(path: string): Promise<Stats | undefined>;
  stat(path: string): Promise<Stats>;
  /** stat, or undefined when path does not exist. */
  statIfExists(path: string): Promise<Stats | undefined>;
  /** mkdir(2); with recursive, resolves the top-most dir it created (undefined when none). */
  mkdir(path: string, options: { mode: number; recursive?: boolean }): Promise<string | undefined>;
  chmod(path: string, mode: number): Promise<void>;
  chown(path: string, uid: number, gid: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** unlink; resolves false when path did not exist. */
  unlinkIfExists(path: string): Promise<boolean>;
  symlink(target: string, path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  /** rm -rf: a missing path is success. */
  removeTree(path: string): Promise<void>;
  /**
   * Creates path exclusively (O_EXCL) with data, sets group and mode on the open file, and in
   * the durable flavour fsyncs it before closing. A file it created is removed again when a later
   * step fails, so a failure leaves nothing behind.
   */
  writeNewFile(path: string, data: string | Uint8Array, options: NewFileOptions): Promise<void>;
  /** Flushes a dir's entries (new, renamed or removed names) to stable storage. */
  syncDir(dir: string): Promise<void>;
}

/**
 * Longest stretch of synchronous tmpfs work before the event loop gets a turn. Without it a
 * caller looping over these Promises (a reader polling readAtomically) would never let timers
 * or I/O run, as each one settles in a microtask.
 */
export const SYNC_BUDGET_MS = 1;

// When the current stretch of synchronous work began; undefined once the event loop turned.
let stretchStart: number | undefined;

// The turn every caller over budget waits for. One for all, not one each: they then resume
// together, in the order they arrived, and alternate call by call. With a turn each, the first
// to resume ran alone for a whole budget while the others got one call per turn (a reader
// polling readAtomically made each of a writer's ~20 calls wait a turn: 200 swaps took 12 s
// instead of 0.7 s).
let turn: Promise<void> | undefined;

function endStretch(): void {
  stretchStart = undefined;
}

// Runs call synchronously, after giving the event loop a turn when the stretch is over budget.
async function sync<T>(call: () => T): Promise<T> {
  if (stretchStart !== undefined && performance.now() - stretchStart > SYNC_BUDGET_MS) {
    // endStretch was queued first, so the stretch is over when this resolves.
    turn ??= nextTurn().then(() => {
      turn = undefined;
    });
    await turn;
  }
  if (stretchStart === undefined) {
    stretchStart = performance.now();
    setImmediate(endStretch);
  }
  return call();
}

/**
 * rm -rf of path, nothing when it is missing. Node's rmSync walks in JavaScript with an lstat
 * per entry and an rmdir tried (and thrown ENOTEMPTY) before each listing: a third of a renewal
 * storm's file work went to removing old generations that way. Here a dir is listed with its
 * entries' types, its files and links unlinked and its dirs removed the same way, then it is
 * removed itself. Nothing is followed: a symlink at path or below it is unlinked, and only an
 * entry of unknown type is looked up.
 */
function removeTreeSync(path: string): void {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return;
  if (stats.isDirectory()) removeDirSync(path);
  else unlinkIfPresent(path);
}

function removeDirSync(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const child = join(dir, entry.name);
    if (entry.isDirectory()) removeDirSync(child);
    else if (entry.isFile() || entry.isSymbolicLink()) unlinkIfPresent(child);
    else removeTreeSync(child);
  }
  try {
    rmdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * tmpfs lives in the page cache: an operation is a few µs of CPU and never waits for a disk, so
 * a synchronous call is cheaper than a thread-pool round trip (~100 µs) and cannot stall the
 * event loop for long (see SYNC_BUDGET_MS). fsync is skipped because Linux implements it as a
 * no-op on tmpfs (noop_fsync): there is no stable storage to flush, a killed process loses
 * nothing already written, a reboot loses everything anyway, and rename(2) atomicity alone
 * gives readers old or new.
 */
export const volatileFileOps: FileOps = {
  volatile: true,
  // A short read on tmpfs is the end of the file: one read per file, not two.
  readFile: (path, maxBytes) =>
    sync(() => readRegularFileSync(path, { maxBytes, shortReadEnds: true })),
  readFileWithStats: (path, maxBytes) =>
    sync(() => readRegularFileWithStatsSync(path, { maxBytes, shortReadEnds: true })),
  readdir: (path) => sync(() => readdirSync(path)),
  readlink: (path) => sync(() => readlinkSync(path)),
  // realpath(3), as fs/promises' realpath of the durable flavour: Node's JavaScript realpathSync
  // makes an lstat call per path component (nine for a kubelet target path).
  realpath: (path) => sync(() => realpathSync.native(path)),
  lstat: (path) => sync(() => lstatSync(path)),
  // A thrown ENOENT costs more than the call itself (~13 µs to build the error, ~3 µs not to).
  lstatIfExists: (path) => sync(() => lstatSync(path, { throwIfNoEntry: false })),
  stat: (path) => sync(() => statSync(path)),
  statIfExists: (path) => sync(() => statSync(path, { throwIfNoEntry: false })),
  mkdir: (path, options) => sync(() => mkdirSync(path, options)),
  chmod: (path, mode) => sync(() => chmodSync(path, mode)),
  chown: (path, uid, gid) => sync(() => chownSync(path, uid, gid)),
  rename: (from, to) => sync(() => renameSync(from, to)),
  unlink: (path) => sync(() => unlinkSync(path)),
  unlinkIfExists: (path) =>
    sync(() => {
      // Looked up first because a thrown ENOENT costs more than the call (the usual case for
      // `..data_tmp`); one removed in between is still reported as missing.
      if (lstatSync(path, { throwIfNoEntry: false }) === undefined) return false;
      try {
        unlinkSync(path);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw err;
      }
    }),
  symlink: (target, path) => sync(() => symlinkSync(target, path)),
  rmdir: (path) => sync(() => rmdirSync(path)),
  removeTree: (path) => sync(() => removeTreeSync(path)),
  writeNewFile: (path, data, options) =>
    sync(() => {
      const { openMode, chmodTo } = creationMode(options);
      const fd = openSync(path, 'wx', openMode);
      try {
        try {
          writeFileSync(fd, data);
          if (options.gid !== undefined) fchownSync(fd, -1, options.gid);
          if (chmodTo !== undefined) fchmodSync(fd, chmodTo);
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        // The first error is the one to report, not a failed clean-up.
        try {
          unlinkSync(path);
        } catch {}
        throw err;
      }
    }),
  syncDir: () => sync(() => undefined),
};

/** Today's behaviour on a real disk: thread-pool calls (an fsync there can take milliseconds) and an fsync at every step. */
export const durableFileOps: FileOps = {
  volatile: false,
  readFile: (path, maxBytes) => readRegularFile(path, { maxBytes }),
  readFileWithStats: (path, maxBytes) => readRegularFileWithStats(path, { maxBytes }),
  readdir: (path) => readdir(path),
  readlink: (path) => readlink(path),
  realpath: (path) => realpath(path),
  lstat: (path) => lstat(path),
  lstatIfExists: (path) =>
    lstat(path).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }),
  stat: (path) => stat(path),
  statIfExists: (path) =>
    stat(path).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }),
  mkdir: (path, options) => mkdir(path, options),
  chmod: (path, mode) => chmod(path, mode),
  chown: (path, uid, gid) => chown(path, uid, gid),
  rename: (from, to) => rename(from, to),
  unlink: (path) => unlink(path),
  // One call, not lstat + unlink: each is a thread-pool round trip here.
  unlinkIfExists: (path) =>
    unlink(path).then(
      () => true,
      (err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw err;
      },
    ),
  symlink: (target, path) => symlink(target, path),
  rmdir: (path) => rmdir(path),
  removeTree: (path) => rm(path, { recursive: true, force: true }),
  writeNewFile: (path, data, options) => writeNewFileThreaded(path, data, options, true),
  syncDir: async (dir) => {
    // O_DIRECTORY: whatever else may have taken the dir's name (a FIFO) fails, never blocks.
    const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/**
 * The durable flavour without its fsyncs, for a writer that flushes the dir once when done: a
 * copy that is made again from its source whenever it is found wrong (a direct-mode target).
 */
export const unflushedFileOps: FileOps = {
  ...durableFileOps,
  writeNewFile: (path, data, options) => writeNewFileThreaded(path, data, options, false),
  syncDir: async () => {},
};

async function writeNewFileThreaded(
  path: string,
  data: string | Uint8Array,
  options: NewFileOptions,
  flush: boolean,
): Promise<void> {
  const { openMode, chmodTo } = creationMode(options);
  const handle = await open(path, 'wx', openMode);
  try {
    try {
      await handle.writeFile(data);
      if (options.gid !== undefined) await handle.chown(-1, options.gid);
      if (chmodTo !== undefined) await handle.chmod(chmodTo);
      if (flush) await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    await unlink(path).catch(() => undefined);
    throw err;
  }
}

// True when nothing is at path; any error (ENOTDIR, ELOOP) is left for statfs to answer.
function isMissing(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}

// f_type of the filesystem holding path, or while it does not exist of its nearest existing
// parent (where it would be created); undefined when that cannot be found out.
function filesystemType(path: string): number | undefined {
  const parent = dirname(path);
  // A missing path (a target before its first publish) is passed over without a thrown ENOENT,
  // which costs several times the lookup; its parent is asked with statfs alone, as it
  // usually exists (kubelet made it).
  return statfsType(parent !== path && isMissing(path) ? parent : path);
}

function statfsType(path: string): number | undefined {
  try {
    return statfsSync(path).type;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const parent = dirname(path);
    if ((code === 'ENOENT' || code === 'ENOTDIR') && parent !== path) return filesystemType(parent);
    return undefined;
  }
}

/** True when path (or, while it does not exist, its nearest existing parent) is on tmpfs. */
export function isOnTmpfs(path: string, platform: NodeJS.Platform = process.platform): boolean {
  // Unknown (an error, another kernel, whose filesystem numbers differ) counts as not tmpfs:
  // the durable flavour is always safe.
  return platform === 'linux' && filesystemType(path) === TMPFS_MAGIC;
}

// Roots whose filesystem this process settled itself (the data root once its tmpfs is mounted):
// everything under one has the root's flavour, as nothing is ever mounted below it.
const pinnedRoots = new Map<string, FileOps>();

// Answers of isOnTmpfs for the current event-loop turn only. A publish asks for the same few dirs
// dozens of times in a row (a missing target costs a statfs per missing level each time); a mount
// made by someone else between two calls of one turn is seen at the next turn, as it would be
// by a statfs a microsecond earlier.
let memo = new Map<string, FileOps>();
let memoCleared = true;

function clearMemo(): void {
  memo = new Map();
  memoCleared = true;
}

function pinnedFlavour(dir: string): FileOps | undefined {
  for (const [root, ops] of pinnedRoots) {
    if (dir === root || dir.startsWith(root.endsWith('/') ? root : `${root}/`)) return ops;
  }
  return undefined;
}

/**
 * Settles the flavour of root and of every path under it from now on, without a statfs each time,
 * until the returned function is called. For a root this process prepared (its tmpfs mounted or
 * its disk medium chosen) and under which nothing is ever mounted.
 */
export function pinFileOps(root: string): () => void {
  const ops = isOnTmpfs(root) ? volatileFileOps : durableFileOps;
  pinnedRoots.set(root, ops);
  return () => {
    if (pinnedRoots.get(root) === ops) pinnedRoots.delete(root);
  };
}

/** The flavour for work in dir: volatileFileOps on tmpfs, durableFileOps anywhere else. */
export function fileOpsFor(dir: string): FileOps {
  const pinned = pinnedRoots.size > 0 ? pinnedFlavour(dir) : undefined;
  if (pinned) return pinned;
  let ops = memo.get(dir);
  if (ops === undefined) {
    ops = isOnTmpfs(dir) ? volatileFileOps : durableFileOps;
    if (memoCleared) {
      memoCleared = false;
      setImmediate(clearMemo);
    }
    memo.set(dir, ops);
  }
  return ops;
}
