import { basename, dirname, join } from 'node:path';
import { uniqueSuffix } from './unique-suffix.js';
import { type FileOps, fileOpsFor } from './volatile-fs.js';

/** Marks the temporary files writeFileAtomic leaves behind if the process dies mid-write. */
export const ATOMIC_TEMP_MARKER = '.tmp-';

/** True for a name writeFileAtomic uses for its temporary files. */
export function isAtomicTempFile(name: string): boolean {
  return name.startsWith('.') && name.includes(ATOMIC_TEMP_MARKER);
}

/**
 * Replaces path with data so that a reader, or the next start after a crash, sees either the
 * old content or the new, never a mix: temp file in the same directory, fsync, rename, fsync
 * of the directory. Resolves once the new content is durable. On tmpfs the same steps run as
 * synchronous calls without the fsyncs (see volatile-fs.ts). ops is the flavour of path's dir,
 * for a caller that settled it once; asked of the dir otherwise.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
  ops: FileOps = fileOpsFor(dirname(path)),
): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}${ATOMIC_TEMP_MARKER}${uniqueSuffix()}`);
  await ops.writeNewFile(temp, data, { openMode: mode });
  try {
    await ops.rename(temp, path);
  } catch (err) {
    await ops.unlink(temp).catch(() => undefined);
    throw err;
  }
  await ops.syncDir(dir);
}

/** Removes path durably; resolves false when it did not exist. ops as for writeFileAtomic. */
export async function removeFileDurably(
  path: string,
  ops: FileOps = fileOpsFor(dirname(path)),
): Promise<boolean> {
  const dir = dirname(path);
  if (!(await ops.unlinkIfExists(path))) return false;
  await ops.syncDir(dir);
  return true;
}

/** Renames from to to and makes the rename durable in both directories. */
export async function renameDurably(from: string, to: string): Promise<void> {
  // A rename that succeeded stayed on one filesystem (else EXDEV): one flavour fits both dirs.
  const ops = fileOpsFor(dirname(to));
  await ops.rename(from, to);
  await ops.syncDir(dirname(to));
  if (dirname(from) !== dirname(to)) await ops.syncDir(dirname(from));
}

/** Creates dir and its missing parents, fsyncing each parent so the new entries survive a crash. */
export async function ensureDirDurably(dir: string, mode = 0o700): Promise<void> {
  // Decided by the nearest existing parent, which is where the new dirs are created.
  const ops = fileOpsFor(dir);
  const first = await ops.mkdir(dir, { recursive: true, mode });
  if (first === undefined) return;
  // mkdir reports the top-most directory it created; every directory from its parent
  // down to dir has a new entry to flush.
  for (let current = dir; ; current = dirname(current)) {
    await ops.syncDir(dirname(current));
    if (current === first || dirname(current) === current) return;
  }
}

/** Flushes a directory's entries (new, renamed or removed files) to disk; nothing to do on tmpfs. */
export async function fsyncDir(dir: string): Promise<void> {
  await fileOpsFor(dir).syncDir(dir);
}
