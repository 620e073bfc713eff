import { join } from 'node:path';
import { compareCodeUnits } from '../base/code-unit-order.js';
import { errorMessage } from '../base/error-message.js';
import { errnoCode, FsError } from './errors.js';
import { dropHandoff, heldGeneration, holdForMirror, takeHandoff } from './mirror-handoff.js';
import { byteSizeText, RefusedFileError, type StatedContent } from './regular-file.js';
import { uniqueSuffix } from './unique-suffix.js';
import { type FileOps, fileOpsFor, unflushedFileOps } from './volatile-fs.js';

/** The symlink naming the current generation. */
export const DATA_LINK = '..data';
/** The symlink built next to DATA_LINK and renamed over it. */
export const DATA_TMP_LINK = '..data_tmp';

/**
 * The largest file writeAtomically writes and readAtomically reads back: far above a chain,
 * a keystore or a trust bundle (a ConfigMap or Secret holds at most 1 MiB), and a bound on
 * what a file planted in a generation can make a reader hold.
 */
export const VOLUME_FILE_MAX_BYTES = 16 * 1024 * 1024;

/** File modes and ownership of a generation. */
export interface AtomicWriteOptions {
  /** Group of every file and of the generation dir; unset leaves the writer's group. */
  gid?: number;
  /** Mode of every file; 0440 by default. */
  fileMode?: number;
  /**
   * On a disk: no fsync per step, one of dir when done. For a copy made again from its source
   * whenever it is found wrong (a direct-mode target, mirrored at every publish): a power loss
   * may leave it torn until then, where the default leaves the old set or the new one.
   */
  syncOnce?: boolean;
  /**
   * The files are about to be copied elsewhere (a direct-mode target): held in memory for the
   * next readToMirror of dir, which then reads nothing back (mirror-handoff.ts).
   */
  handOff?: boolean;
  /**
   * The caller knows these bytes differ from the current generation's (a new certificate): no
   * comparison with it, the write always happens.
   */
  knownNew?: boolean;
  /** dir's file operations when the caller has settled them (fileOpsFor(dir) otherwise). */
  fileOps?: FileOps;
}

/** Files to write: name (one path segment) to content. */
export type AtomicPayload = ReadonlyMap<string, Uint8Array> | Record<string, Uint8Array>;

const GENERATION = /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.[A-Za-z0-9_-]+$/;

/** True for a generation dir name (`..YYYY_MM_DD_HH_MM_SS.<unique>`). */
export function isGenerationName(name: string): boolean {
  return GENERATION.test(name);
}

/** True for the entries the atomic writer owns in a dir: `..data`, `..data_tmp` and generation dirs. */
export function isWriterInternalName(name: string): boolean {
  return name === DATA_LINK || name === DATA_TMP_LINK || isGenerationName(name);
}

/** Throws FsError unless name can be a file of the writer: one segment, not `..`-prefixed. */
export function validateFileName(name: string): void {
  const fail = (why: string): never => {
    throw new FsError(`invalid file name ${JSON.stringify(name)}: ${why}`);
  };
  if (name.length === 0) fail('it is empty');
  if (name.includes('/')) fail('it must not contain "/"');
  if (name.includes('\0')) fail('it must not contain a NUL character');
  if (name === '.') fail('it must not be "."');
  // `..`-prefixed names are the writer's own entries (`..data`, generation dirs).
  if (name.startsWith('..')) fail('it must not start with ".."');
  if (Buffer.byteLength(name) > 255) fail('it is longer than 255 bytes');
}

function toEntries(files: AtomicPayload): [string, Uint8Array][] {
  const entries = files instanceof Map ? [...files.entries()] : Object.entries(files);
  for (const [name, content] of entries) {
    validateFileName(name);
    // What readAtomically would refuse is never written.
    if (content.byteLength > VOLUME_FILE_MAX_BYTES) {
      throw new FsError(
        `file ${JSON.stringify(name)} is ${content.byteLength} bytes, more than the ${byteSizeText(VOLUME_FILE_MAX_BYTES)} a volume file may have`,
      );
    }
  }
  return entries.sort(([a], [b]) => compareCodeUnits(a, b));
}

function generationPrefix(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `..${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(
    now.getUTCHours(),
  )}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
}

/**
 * The generation dir `..data` points to; undefined when there is none, or when the link is
 * dangling or points elsewhere (never ours to read or remove: the next swap replaces it).
 */
async function currentGeneration(ops: FileOps, dir: string): Promise<string | undefined> {
  // A dir never written (a first publish) has no link: looked up without a thrown ENOENT.
  if ((await ops.lstatIfExists(join(dir, DATA_LINK))) === undefined) return undefined;
  let target: string;
  try {
    target = await ops.readlink(join(dir, DATA_LINK));
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  if (!isGenerationName(target)) return undefined;
  if (!(await ops.lstatIfExists(join(dir, target)))?.isDirectory()) return undefined;
  return target;
}

async function namesIn(ops: FileOps, dir: string): Promise<string[]> {
  try {
    return (await ops.readdir(dir)).sort();
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return [];
    throw err;
  }
}

// True when the current generation already holds exactly these bytes, modes and group.
async function isUpToDate(
  ops: FileOps,
  generationDir: string,
  existing: readonly string[],
  entries: readonly [string, Uint8Array][],
  fileMode: number,
  gid: number | undefined,
): Promise<boolean> {
  if (existing.length !== entries.length) return false;
  for (const [i, [name, content]] of entries.entries()) {
    if (existing[i] !== name) return false;
    let found: StatedContent;
    try {
      // Mode, group and size from the fstat of the descriptor read, not from an lstat beside it:
      // anything but the regular file this writer makes (a link, a FIFO, a larger file) is
      // refused unread and replaced.
      found = await ops.readFileWithStats(join(generationDir, name), content.byteLength);
    } catch (err) {
      // EACCES: a file whose mode someone took away (the lstat this replaced saw the wrong mode).
      if (err instanceof RefusedFileError || errnoCode(err) === 'EACCES') return false;
      throw err;
    }
    const { stats } = found;
    if (stats.size !== content.byteLength) return false;
    if ((stats.mode & 0o7777) !== fileMode || (gid !== undefined && stats.gid !== gid))
      return false;
    if (!found.content.equals(content)) return false;
  }
  return true;
}

async function writeGeneration(
  ops: FileOps,
  dir: string,
  entries: readonly [string, Uint8Array][],
  fileMode: number,
  gid: number | undefined,
): Promise<string> {
  const name = `${generationPrefix(new Date())}.${uniqueSuffix()}`;
  const path = join(dir, name);
  await ops.mkdir(path, { mode: 0o700 });
  try {
    for (const [file, content] of entries) {
      // Exact mode whatever the umask; a file may have it while written, as the dir is 0700 until
      // every file is done.
      await ops.writeNewFile(join(path, file), content, {
        openMode: 0o600,
        mode: fileMode,
        ...(gid === undefined ? {} : { gid }),
      });
    }
    if (gid !== undefined) await ops.chown(path, -1, gid);
    await ops.chmod(path, 0o755);
    await ops.syncDir(path);
  } catch (err) {
    await ops.removeTree(path);
    throw err;
  }
  return name;
}

// Points `..data` at the new generation with one rename(2): a reader resolves either link.
async function swapDataLink(ops: FileOps, dir: string, generation: string): Promise<void> {
  const tmp = join(dir, DATA_TMP_LINK);
  try {
    await ops.symlink(generation, tmp);
  } catch (err) {
    // Left by a crash between its creation and the rename: replaced (the usual case needs no lookup).
    if (errnoCode(err) !== 'EEXIST') throw err;
    await ops.unlinkIfExists(tmp);
    await ops.symlink(generation, tmp);
  }
  await ops.rename(tmp, join(dir, DATA_LINK));
  await ops.syncDir(dir);
}

async function isSymlink(ops: FileOps, path: string): Promise<boolean> {
  return (await ops.lstatIfExists(path))?.isSymbolicLink() === true;
}

async function exists(ops: FileOps, path: string): Promise<boolean> {
  return (await ops.lstatIfExists(path)) !== undefined;
}

// Adds `<name> -> ..data/<name>` for new names and drops the links of names that are gone;
// returns whether the dir changed.
async function syncUserLinks(
  ops: FileOps,
  dir: string,
  names: readonly string[],
  previous: readonly string[],
  /** dir's entries, when just listed: looked up there instead of one lstat per name. */
  listing?: ReadonlySet<string>,
): Promise<boolean> {
  let changed = false;
  for (const name of names) {
    const path = join(dir, name);
    if (previous.includes(name)) {
      // Linked with the previous generation: only a crash before its links left none.
      if (listing ? listing.has(name) : await exists(ops, path)) continue;
      await ops.symlink(join(DATA_LINK, name), path);
      changed = true;
      continue;
    }
    // A name new to this generation has no link yet (the usual case, one call instead of two);
    // whatever already holds the name is left alone, as the lookup above leaves it.
    try {
      await ops.symlink(join(DATA_LINK, name), path);
      changed = true;
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
  }
  for (const name of previous) {
    if (names.includes(name)) continue;
    const path = join(dir, name);
    if (!(await isSymlink(ops, path))) continue;
    await ops.unlink(path);
    changed = true;
  }
  return changed;
}

// Removes every generation except the current one: the one just replaced, and any a crash left
// behind before its swap. The replaced one's names were listed before the write: its files are
// unlinked by name and the dir removed, without a walk's lstat and listing; anything in the way
// (an entry added since, one that is not a file) leaves the rest to the walk.
async function removeOldGenerations(
  ops: FileOps,
  dir: string,
  keep: string,
  listing: Iterable<string>,
  replaced: { name: string; names: readonly string[] } | undefined,
): Promise<boolean> {
  let removed = false;
  for (const name of listing) {
    if (name === keep || !isGenerationName(name)) continue;
    const path = join(dir, name);
    if (name !== replaced?.name || !(await removeListedDir(ops, path, replaced.names))) {
      await ops.removeTree(path);
    }
    removed = true;
  }
  return removed;
}

// Unlinks names in path and removes path; false when a step failed (the caller walks the rest).
async function removeListedDir(
  ops: FileOps,
  path: string,
  names: readonly string[],
): Promise<boolean> {
  try {
    for (const name of names) await ops.unlink(join(path, name));
    await ops.rmdir(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes files into dir the way kubelet's AtomicWriter does: a new generation dir
 * (`..<UTC time>.<unique suffix>`, files fileMode and group gid), `..data` swapped to it with
 * rename(2), `<name> -> ..data/<name>` links, the old generation removed. Every step is fsynced,
 * so a crash leaves the old or the new set, never a mix (on tmpfs: synchronous calls, no fsync,
 * see volatile-fs.ts). Nothing is written (written: false)
 * when the current generation already holds the same names and bytes. Not safe for two
 * concurrent writers of one dir; the caller serialises them.
 */
export async function writeAtomically(
  dir: string,
  files: AtomicPayload,
  options: AtomicWriteOptions = {},
): Promise<{ written: boolean }> {
  const entries = toEntries(files);
  const fileMode = options.fileMode ?? 0o440;
  const { gid } = options;
  const found = options.fileOps ?? fileOpsFor(dir);
  const ops = options.syncOnce && !found.volatile ? unflushedFileOps : found;
  // The one fsync of a syncOnce write, once anything changed.
  const flushOnce = () => (ops === found ? Promise.resolve() : found.syncDir(dir));
  try {
    const current = await currentGeneration(ops, dir);
    const previous = current === undefined ? [] : await namesIn(ops, join(dir, current));
    const names = entries.map(([name]) => name);
    if (
      current !== undefined &&
      !options.knownNew &&
      (await isUpToDate(ops, join(dir, current), previous, entries, fileMode, gid))
    ) {
      // Repairs what a crash between the swap and the links may have left.
      if (await syncUserLinks(ops, dir, names, previous)) {
        await ops.syncDir(dir);
        await flushOnce();
      }
      return { written: false };
    }
    const generation = await writeGeneration(ops, dir, entries, fileMode, gid);
    await swapDataLink(ops, dir, generation);
    // One listing after the swap serves both: which links exist, which generations to remove.
    const listing = new Set(await namesIn(ops, dir));
    const linksChanged = await syncUserLinks(ops, dir, names, previous, listing);
    const replaced = current === undefined ? undefined : { name: current, names: previous };
    const removed = await removeOldGenerations(ops, dir, generation, listing, replaced);
    if (linksChanged || removed) await ops.syncDir(dir);
    await flushOnce();
    if (options.handOff) holdForMirror(dir, generation, entries);
    return { written: true };
  } catch (err) {
    throw new FsError(`cannot write files into ${dir}: ${errorMessage(err)}`, {
      path: dir,
      cause: err,
    });
  }
}

/** Removes everything writeAtomically put into dir (links, `..data`, generations); other entries stay. */
export async function removeAtomicFiles(dir: string): Promise<void> {
  const ops = fileOpsFor(dir);
  dropHandoff(dir);
  try {
    const current = await currentGeneration(ops, dir);
    const names = current === undefined ? [] : await namesIn(ops, join(dir, current));
    for (const name of names) {
      const path = join(dir, name);
      if ((await isSymlink(ops, path)) && (await ops.readlink(path)) === join(DATA_LINK, name)) {
        await ops.unlink(path);
      }
    }
    for (const name of await namesIn(ops, dir)) {
      if (isWriterInternalName(name)) await ops.removeTree(join(dir, name));
    }
  } catch (err) {
    throw new FsError(`cannot remove written files from ${dir}: ${errorMessage(err)}`, {
      path: dir,
      cause: err,
    });
  }
}

/**
 * True when every entry of dir (names, when already listed) is one writeAtomically makes:
 * `..data`, `..data_tmp`, generation dirs, and `<name> -> ..data/<name>` links.
 */
export async function holdsOnlyWriterFiles(
  dir: string,
  names?: readonly string[],
): Promise<boolean> {
  const ops = fileOpsFor(dir);
  for (const name of names ?? (await namesIn(ops, dir))) {
    if (isWriterInternalName(name)) continue;
    const path = join(dir, name);
    if (!(await isSymlink(ops, path)) || (await ops.readlink(path)) !== join(DATA_LINK, name)) {
      return false;
    }
  }
  return true;
}

/**
 * One file of dir's current generation, read through the same file operations as the writer
 * (synchronous on tmpfs: no thread-pool round trips in a renewal); undefined when nothing was
 * written yet or the generation holds no such file.
 */
export async function readCurrentFile(
  dir: string,
  name: string,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const ops = fileOpsFor(dir);
  try {
    return await ops.readFile(join(dir, DATA_LINK, name), maxBytes);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Reads the current generation of dir as one consistent set (resolving `..data` once, the way
 * readers should); undefined when nothing was written yet. Retries when a swap removed the
 * generation mid-read.
 */
export async function readAtomically(dir: string): Promise<Map<string, Buffer> | undefined> {
  const ops = fileOpsFor(dir);
  for (let attempt = 1; ; attempt++) {
    try {
      const generation = await currentGeneration(ops, dir);
      if (generation === undefined) return undefined;
      const files = new Map<string, Buffer>();
      for (const name of await namesIn(ops, join(dir, generation))) {
        files.set(name, await ops.readFile(join(dir, generation, name), VOLUME_FILE_MAX_BYTES));
      }
      // An empty listing may be a generation removed between readlink and readdir.
      if (files.size > 0 || (await exists(ops, join(dir, generation)))) return files;
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT' || attempt >= 5) {
        throw new FsError(`cannot read files from ${dir}: ${errorMessage(err)}`, {
          path: dir,
          cause: err,
        });
      }
    }
  }
}

/**
 * readAtomically for the copy a write with `handOff` announced: the bytes that write held, when
 * `..data` still names its generation, instead of reading them back, and whether they were
 * handed off (the bytes of a generation written a moment ago, which no copy has held yet, so the
 * copy need not compare them with its own) or read back.
 */
export async function readToMirror(
  dir: string,
): Promise<{ files: Map<string, Buffer>; handedOff: boolean } | undefined> {
  const held = await takeHandoffIfCurrent(fileOpsFor(dir), dir);
  if (held) return { files: held, handedOff: true };
  const files = await readAtomically(dir);
  return files === undefined ? undefined : { files, handedOff: false };
}

// The files held for dir when `..data` still names their generation: one readlink, without the
// lookups currentGeneration makes before a read (nothing is read from that generation). Anything
// else (no link, another target) lets the held files go and leaves the answer to a read.
async function takeHandoffIfCurrent(
  ops: FileOps,
  dir: string,
): Promise<Map<string, Buffer> | undefined> {
  if (heldGeneration(dir) === undefined) return undefined;
  const target = await ops.readlink(join(dir, DATA_LINK)).catch(() => undefined);
  if (target !== undefined) return takeHandoff(dir, target);
  dropHandoff(dir);
  return undefined;
}
