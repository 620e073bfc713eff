import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Marks the temporary files writeFileAtomic leaves behind if the process dies mid-write. */
export const ATOMIC_TEMP_MARKER = '.tmp-';

/** True for a name writeFileAtomic uses for its temporary files. */
export function isAtomicTempFile(name: string): boolean {
  return name.startsWith('.') && name.includes(ATOMIC_TEMP_MARKER);
}

/**
 * Replaces path with data so that a reader, or the next start after a crash, sees either the
 * old content or the new, never a mix: temp file in the same directory, fsync, rename, fsync
 * of the directory. Resolves once the new content is durable.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
): Promise<void> {
  const dir = dirname(path);
  const temp = join(
    dir,
    `.${basename(path)}${ATOMIC_TEMP_MARKER}${randomBytes(6).toString('hex')}`,
  );
  const file = await open(temp, 'wx', mode);
  try {
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dir);
}

/** Removes path durably; resolves false when it did not exist. */
export async function removeFileDurably(path: string): Promise<boolean> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  await fsyncDir(dirname(path));
  return true;
}

/** Renames from to to and makes the rename durable in both directories. */
export async function renameDurably(from: string, to: string): Promise<void> {
  await rename(from, to);
  await fsyncDir(dirname(to));
  if (dirname(from) !== dirname(to)) await fsyncDir(dirname(from));
}

/** Creates dir and its missing parents, fsyncing each parent so the new entries survive a crash. */
export async function ensureDirDurably(dir: string, mode = 0o700): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode });
  if (first === undefined) return;
  // mkdir reports the top-most directory it created; every directory from its parent
  // down to dir has a new entry to flush.
  for (let current = dir; ; current = dirname(current)) {
    await fsyncDir(dirname(current));
    if (current === first || dirname(current) === current) return;
  }
}

/** Flushes a directory's entries (new, renamed or removed files) to disk. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
