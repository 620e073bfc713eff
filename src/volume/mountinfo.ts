import { readFileSync } from 'node:fs';
import { errorMessage } from '../base/error-message.js';
import { VolumeError } from './errors.js';

/** One line of /proc/<pid>/mountinfo (proc(5)), paths unescaped. */
export interface MountInfo {
  id: number;
  parentId: number;
  /** `major:minor` of the filesystem. */
  device: string;
  /** Path inside the filesystem that is mounted here (not `/` for bind mounts of a subdir). */
  root: string;
  mountPoint: string;
  /** Per-mount options, e.g. `ro`, `nosuid`. */
  options: string[];
  fsType: string;
  source: string;
  superOptions: string[];
}

/** Undoes the kernel's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` backslash). */
export function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, oct: string) =>
    String.fromCharCode(Number.parseInt(oct, 8)),
  );
}

/** Parses mountinfo text; throws VolumeError naming the line that is malformed. */
export function parseMountInfo(text: string): MountInfo[] {
  const mounts: MountInfo[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const fields = line.split(' ');
    const separator = fields.indexOf('-', 6);
    const [id, parentId, device, root, mountPoint, options] = fields;
    const [fsType, source, superOptions] = separator < 0 ? [] : fields.slice(separator + 1);
    if (
      separator < 0 ||
      id === undefined ||
      parentId === undefined ||
      device === undefined ||
      root === undefined ||
      mountPoint === undefined ||
      options === undefined ||
      fsType === undefined ||
      source === undefined ||
      superOptions === undefined ||
      !/^\d+$/.test(id) ||
      !/^\d+$/.test(parentId)
    ) {
      throw new VolumeError(`malformed mountinfo line ${index + 1}: ${JSON.stringify(line)}`);
    }
    mounts.push({
      id: Number(id),
      parentId: Number(parentId),
      device,
      root: unescapeMountPath(root),
      mountPoint: unescapeMountPath(mountPoint),
      options: options.split(','),
      fsType,
      source: unescapeMountPath(source),
      superOptions: superOptions.split(','),
    });
  }
  return mounts;
}

/** Escapes a path as mountinfo shows it: space, tab, newline and backslash as octal escapes. */
export function escapeMountPath(path: string): string {
  return path.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

// The mount table's text. Read synchronously: the kernel writes it from memory, never waiting on
// a disk, and a read through the thread pool took five times as long (1.3 against 0.25 ms for
// 320 mounts on the bench machine: a file of unknown size is read in several round trips).
function readMountTable(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new VolumeError(`cannot read mount table ${path}: ${errorMessage(err)}`, { cause: err });
  }
}

/** Reads and parses the mount table of this process's mount namespace. */
export async function readMountInfo(path = '/proc/self/mountinfo'): Promise<MountInfo[]> {
  return parseMountInfo(readMountTable(path));
}

/**
 * The mounts of the table (as readMountInfo reads it) at exactly mountPoint, in table order:
 * what findMount needs, without parsing every line. Only lines holding the escaped path as a
 * whole field are parsed (a tenth of a full parse for 320 mounts, and a node may have thousands).
 */
export async function readMountsAt(
  mountPoint: string,
  path = '/proc/self/mountinfo',
): Promise<MountInfo[]> {
  const field = ` ${escapeMountPath(mountPoint)} `;
  const candidates = readMountTable(path)
    .split('\n')
    .filter((line) => line.includes(field));
  return parseMountInfo(candidates.join('\n')).filter((m) => m.mountPoint === mountPoint);
}

/**
 * The mount on top at exactly mountPoint, the one the path shows. Of stacked mounts the top is
 * the one no other mount there sits on (a mount over a mount point has the one below as its
 * parent). The parent links decide, not the listing order: a mount put beneath another
 * (move_mount(2) MOVE_MOUNT_BENEATH) is listed after the one above it. Only when the links do
 * not decide (mounts there under different parents, one hidden by a mount over a parent dir)
 * does the last one listed win.
 */
export function findMount(mounts: readonly MountInfo[], mountPoint: string): MountInfo | undefined {
  const here = mounts.filter((m) => m.mountPoint === mountPoint);
  const top = here.findLast((m) => !here.some((other) => other !== m && other.parentId === m.id));
  // Links that form a loop (never written by the kernel) decide nothing either.
  return top ?? here.at(-1);
}

/** The mount a path lives on: the top mount (findMount) at the longest mount point that is path or one of its parents. */
export function mountContaining(mounts: readonly MountInfo[], path: string): MountInfo | undefined {
  let longest: string | undefined;
  for (const m of mounts) {
    const inside =
      m.mountPoint === path || m.mountPoint === '/' || path.startsWith(`${m.mountPoint}/`);
    if (inside && (longest === undefined || m.mountPoint.length > longest.length)) {
      longest = m.mountPoint;
    }
  }
  return longest === undefined ? undefined : findMount(mounts, longest);
}
