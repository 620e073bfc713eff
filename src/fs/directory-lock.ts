import { spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ErrorKind } from '../base/error-catalogue.js';
import { errorMessage } from '../base/error-message.js';
import { FsError } from './errors.js';

/**
 * Name of the lock file cert-csi keeps in each directory it owns (data root, state dir). `..`-prefixed
 * names are never volume ids (src/volume/volume-id.ts), so it cannot collide with a volume dir.
 */
export const LOCK_FILE = '..cert-csi.lock';

// flock's exit code when the lock is held by someone else (its -E option); 1 is its own failure.
const CONFLICT_EXIT_CODE = 75;
// A child that has not settled by then is killed: flock -n never waits for the lock itself.
const FLOCK_DEADLINE_MS = 10_000;

/** An exclusive lock this process holds until release() or its death. */
export interface HeldLock {
  /** The lock file. */
  readonly path: string;
  /** Releases the lock (closes the file); idempotent. */
  release(): void;
}

/** Another process holds the lock: names the directory, what it is, and the holder's pid when recorded. */
export class LockHeldError extends FsError {
  override readonly name: string = 'LockHeldError';
  /** The lock file. */
  declare readonly path: string;

  constructor(
    path: string,
    readonly holderPid: number | undefined,
    what: string,
  ) {
    super(
      `${what} is in use by another cert-csi process (${holderPid === undefined ? 'pid unknown' : `pid ${holderPid}`}; lock file ${path}): refusing to start a second instance on it`,
      { path },
    );
  }

  override get errorKind(): ErrorKind {
    return 'CERT_CSI_LOCK_HELD';
  }
}

/**
 * Takes an exclusive flock(2) on `<dir>/..cert-csi.lock`, writes this pid into it, and keeps the
 * file open for the life of the process. Throws LockHeldError naming the holder's pid when another
 * process holds it.
 *
 * Why flock(2) through an inherited descriptor: Node has no flock binding. The file is opened
 * here, and util-linux `flock --nonblock 3` locks the open file description it inherits as fd 3,
 * then exits; a flock lock belongs to the open file description, so this process keeps it through
 * its own descriptor. The kernel drops it the moment this process dies (kill -9 included), so a
 * restart never waits for a stale-lock timeout (proper-lockfile's mtime scheme does) and a reused
 * pid never looks like a live holder (a pid file checked against /proc does); no helper process
 * outlives the call. The pid in the file is only there to name the holder in the refusal.
 */
export async function lockDirectory(dir: string, what: string): Promise<HeldLock> {
  const path = join(dir, LOCK_FILE);
  let fd: number;
  try {
    // O_NOFOLLOW: a symlink planted at the lock's name never makes us create or truncate another
    // file. O_NONBLOCK: a FIFO or device planted there is refused below, never waited on.
    fd = openSync(
      path,
      constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o600,
    );
  } catch (err) {
    throw new FsError(`cannot open lock file ${path} of ${what}: ${errorMessage(err)}`, {
      path,
      cause: err,
    });
  }
  try {
    if (!fstatSync(fd).isFile()) {
      throw new FsError(`lock file ${path} of ${what} is not a file`, { path });
    }
    const code = await flockNonBlocking(fd);
    if (code === CONFLICT_EXIT_CODE) throw new LockHeldError(path, holderPid(fd), what);
    if (code !== 0) throw new FsError(`cannot lock ${path} of ${what}: ${code}`, { path });
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`, 0);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let open = true;
  return {
    path,
    release() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** Runs `flock --nonblock 3` on fd; resolves its exit code, or a description of why it did not run. */
function flockNonBlocking(fd: number): Promise<number | string> {
  return new Promise((resolve) => {
    const child = spawn(
      'flock',
      ['--nonblock', '--conflict-exit-code', String(CONFLICT_EXIT_CODE), '3'],
      { stdio: ['ignore', 'ignore', 'pipe', fd] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), FLOCK_DEADLINE_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve(`flock could not run (util-linux flock is required): ${err.message}`);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 || code === CONFLICT_EXIT_CODE) resolve(code);
      else resolve(`flock ${signal ? `killed by ${signal}` : `exited ${code}`}: ${stderr.trim()}`);
    });
  });
}

/** The pid the holder wrote into the lock file, if it did (it writes it just after locking). */
function holderPid(fd: number): number | undefined {
  const buffer = Buffer.alloc(32);
  const length = readSync(fd, buffer, 0, buffer.length, 0);
  const pid = Number.parseInt(buffer.subarray(0, length).toString('utf8').trim(), 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}
