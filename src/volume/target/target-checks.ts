import type { Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errorMessage } from '../../base/error-message.js';
import { holdsOnlyWriterFiles } from '../../fs/atomic-writer.js';
import { errnoCode } from '../../fs/errors.js';
import { type FileOps, fileOpsFor } from '../../fs/volatile-fs.js';
import { TargetPathError, VolumeError } from '../errors.js';

// Paths in messages are cut to this many characters: kubelet's are ~150, an attacker's unbounded.
const SHOWN_PATH_LENGTH = 100;

/** path quoted for a message, cut to its last 100 characters (the end names the pod and volume). */
export function shownPath(path: string): string {
  const cut = path.length > SHOWN_PATH_LENGTH;
  return JSON.stringify(cut ? `…${path.slice(-SHOWN_PATH_LENGTH)}` : path);
}

/** What a mount at the target shows: nothing mounted, this volume's data dir, or something else. */
export type TargetMount = { kind: 'none' } | { kind: 'ours' } | { kind: 'foreign'; what: string };

// The path itself or its deepest ancestor that exists, with its lstat.
async function deepestExisting(
  path: string,
  ops: FileOps,
  known: Stats | undefined,
): Promise<{ path: string; stats: Stats }> {
  if (known) return { path, stats: known };
  for (let current = path; ; current = dirname(current)) {
    try {
      // A missing path is the usual case at a first publish: looked up without a thrown ENOENT.
      const stats = await ops.lstatIfExists(current);
      if (stats) return { path: current, stats };
    } catch (err) {
      // Missing, under a file, or a symlink loop on the way: look at the parent (`/` exists).
      if (!['ENOENT', 'ENOTDIR', 'ELOOP'].includes(errnoCode(err) ?? '')) {
        throw new VolumeError(
          `cannot stat target path ${shownPath(current)}: ${errorMessage(err)}`,
          {
            cause: err,
          },
        );
      }
    }
  }
}

/**
 * Refuses (TargetPathError) a target path that is a symlink or lies under one: the part of it
 * that exists must resolve to itself, so a mount or a write lands where the path says and
 * nowhere else. Also refuses a path under something that is not a directory. A caller that
 * settled the path's file operations or has just lstat'ed it (statTarget) passes them on.
 * Returns the target's lstat, undefined when it does not exist.
 */
export async function refuseSymlinks(
  targetPath: string,
  ops: FileOps = fileOpsFor(resolve(targetPath)),
  lstatOfTarget?: Stats,
): Promise<Stats | undefined> {
  const lexical = resolve(targetPath);
  // Only an lstat of the lexical path itself: one of `a/../b` went through `a`.
  const known = lexical === targetPath ? lstatOfTarget : undefined;
  const existing = await deepestExisting(lexical, ops, known);
  const refuse = (where: string): never => {
    throw new TargetPathError(
      `target path ${shownPath(lexical)} ${where}; symlinks are not followed`,
    );
  };
  if (existing.path === lexical && existing.stats.isSymbolicLink()) refuse('is a symlink');
  // A dangling or looping symlink on the way does not resolve at all: not followed either.
  const real = await ops.realpath(existing.path).catch(() => undefined);
  if (real !== existing.path) {
    refuse(
      real === undefined
        ? `goes through a symlink: ${shownPath(existing.path)} does not resolve`
        : `goes through a symlink: ${shownPath(existing.path)} resolves to ${shownPath(real)}`,
    );
  }
  if (existing.path !== lexical && !existing.stats.isDirectory()) {
    throw new TargetPathError(
      `target path ${shownPath(lexical)} lies under ${shownPath(existing.path)}, which is not a directory`,
    );
  }
  return existing.path === lexical ? existing.stats : undefined;
}

/** lstat of a target path; undefined when it does not exist, VolumeError naming it otherwise. */
export async function statTarget(
  targetPath: string,
  ops: FileOps = fileOpsFor(targetPath),
): Promise<Stats | undefined> {
  try {
    return await ops.lstatIfExists(targetPath);
  } catch (err) {
    throw new VolumeError(
      `cannot stat target path ${shownPath(targetPath)}: ${errorMessage(err)}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * Refuses (TargetPathError) a target a volume must not be published at: a symlink or a path
 * under one, something that is not a directory, a mount of something else, or a non-empty
 * directory holding files this volume did not write. `recorded`: the volume's metadata.json names
 * this target, so atomic-writer files in it are the volume's own (a republish). mountAt tells
 * what is mounted at the target (bind mode; direct mode mounts nothing).
 */
export async function checkTarget(
  targetPath: string,
  options: { recorded: boolean; mountAt?: (target: string) => Promise<TargetMount> },
): Promise<void> {
  const stats = await refuseSymlinks(targetPath);
  if (!stats) return;
  const target = resolve(targetPath);
  if (!stats.isDirectory()) {
    throw new TargetPathError(`target path ${shownPath(target)} exists and is not a directory`);
  }
  const mount = (await options.mountAt?.(target)) ?? { kind: 'none' };
  if (mount.kind === 'ours') return;
  if (mount.kind === 'foreign') {
    throw new TargetPathError(
      `target path ${shownPath(target)} is already a mount of ${mount.what}, not of this volume`,
    );
  }
  const entries = await fileOpsFor(target).readdir(target);
  if (entries.length === 0) return;
  if (options.recorded && (await holdsOnlyWriterFiles(target, entries))) return;
  // Name an entry of the owner's, not one of the atomic writer's `..` entries, when there is one.
  const sorted = entries.sort();
  const example = sorted.find((name) => !name.startsWith('..')) ?? sorted[0] ?? '';
  throw new TargetPathError(
    `target path ${shownPath(target)} is a non-empty directory this volume did not create (${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}, such as ${shownPath(example)}); refusing to hide or overwrite it`,
  );
}
