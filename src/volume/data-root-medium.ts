// Where the data root keeps private keys in bind mode, and what start-up does about what it finds
// at the data root. The decision is a pure function so every case is a row of a table test; the
// bind mounter carries it out.

/** Where bind mode keeps the data root (and so every key): `tmpfs` (the default) or `disk`. */
export const DATA_ROOT_MEDIA = ['tmpfs', 'disk'] as const;

/** One of DATA_ROOT_MEDIA. */
export type DataRootMedium = (typeof DATA_ROOT_MEDIA)[number];

/** The medium when none is asked for: keys never reach the node's disk. */
export const DEFAULT_DATA_ROOT_MEDIUM: DataRootMedium = 'tmpfs';

/** True when text names a medium. */
export function isDataRootMedium(text: string): text is DataRootMedium {
  return (DATA_ROOT_MEDIA as readonly string[]).includes(text);
}

/** What start-up finds at the data root. */
export interface DataRootFound {
  /**
   * Filesystem type of the mount on top at the data root (what the path shows), or undefined
   * when the data root is a plain directory of the filesystem around it.
   */
  mountedFsType: string | undefined;
  /** Volume dirs (with a metadata.json) it holds now: a tmpfs mounted over them hides them. */
  volumes: number;
}

/**
 * What to do with the data root:
 * - `mount-tmpfs`: mount a new tmpfs over it (a plain dir, or a mount of another filesystem such
 *   as the hostPath a DaemonSet mounts there);
 * - `reuse-tmpfs`: a tmpfs is on top already (mounted by an earlier run and kept across the
 *   restart, or by the operator): use it, never stack a second one;
 * - `keep-tmpfs`: the medium is disk but a tmpfs is on top: keep it, its volumes live on it;
 * - `use-disk`: the medium is disk: use the dir as it is, keys on its filesystem;
 * - `refuse-hidden-volumes`: a tmpfs would hide volumes stored on the filesystem underneath
 *   (their pods would keep files nobody renews and their unpublish would fail): start-up stops.
 */
export type DataRootAction =
  | 'mount-tmpfs'
  | 'reuse-tmpfs'
  | 'keep-tmpfs'
  | 'use-disk'
  | 'refuse-hidden-volumes';

/** Decides what start-up does with the data root in bind mode (see DataRootAction). */
export function dataRootAction(found: DataRootFound, medium: DataRootMedium): DataRootAction {
  const onTmpfs = found.mountedFsType === 'tmpfs';
  if (medium === 'disk') return onTmpfs ? 'keep-tmpfs' : 'use-disk';
  if (onTmpfs) return 'reuse-tmpfs';
  return found.volumes > 0 ? 'refuse-hidden-volumes' : 'mount-tmpfs';
}
