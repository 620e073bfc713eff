import { readFile } from 'node:fs/promises';
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

/** Reads and parses the mount table of this process's mount namespace. */
export async function readMountInfo(path = '/proc/self/mountinfo'): Promise<MountInfo[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new VolumeError(`cannot read mount table ${path}: ${errorMessage(err)}`, { cause: err });
  }
  return parseMountInfo(text);
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
