import { resolve, sep } from 'node:path';
import { fileOpsFor } from '../../fs/volatile-fs.js';
import type { DataRoot } from '../data-root.js';
import { TargetPathError } from '../errors.js';
import { isRecordedTarget, readMetadata, type VolumeMetadata } from '../metadata.js';
import type { Mounter } from '../mounter.js';
import { shownPath } from './target-checks.js';

// Which target a volume owns: the one its metadata.json records. A publish never reaches into
// the data root, and an unpublish touches only what that record allows.

/** True when target is the data root, inside it, or one of its ancestors. */
export function overlapsDataRoot(target: string, root: string): boolean {
  const within = (path: string, dir: string) =>
    path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
  const t = resolve(target);
  const r = resolve(root);
  return within(t, r) || within(r, t);
}

/**
 * The checks of a publish, run before any key is generated or directory created: the target
 * must not overlap the data root (by its path or its real path) and must pass the mounter's
 * checkTarget. metadata: the volume's, when it exists.
 */
export async function checkPublishTarget(
  dataRoot: DataRoot,
  mounter: Mounter,
  volumeId: string,
  targetPath: string,
  metadata: VolumeMetadata | undefined,
): Promise<void> {
  const real = await fileOpsFor(dataRoot.root)
    .realpath(dataRoot.root)
    .catch(() => dataRoot.root);
  const roots = [dataRoot.root, real];
  if (roots.some((root) => overlapsDataRoot(targetPath, root))) {
    throw new TargetPathError(
      `target path ${shownPath(targetPath)} overlaps the data root ${shownPath(dataRoot.root)}; volumes are never published there`,
    );
  }
  await mounter.checkTarget(
    dataRoot.dataDir(volumeId),
    targetPath,
    metadata !== undefined && isRecordedTarget(metadata, targetPath),
  );
}

/** What an unpublish of a volume at a target may touch (see unpublishScope). */
export type UnpublishScope =
  | { kind: 'unknown' }
  | { kind: 'recorded' }
  | { kind: 'unrecorded' }
  | { kind: 'elsewhere'; recordedTarget: string };

/**
 * What an unpublish of volumeId at targetPath may touch: `unknown` (no volume dir: nothing),
 * `recorded` (metadata.json names this target: unmount and clean it), `unrecorded` (the dir has
 * no readable metadata.json: only a mount of its data dir is undone) or `elsewhere` (the volume
 * is published at recordedTarget, another target: nothing).
 */
export async function unpublishScope(
  dataRoot: DataRoot,
  volumeId: string,
  targetPath: string,
): Promise<UnpublishScope> {
  if (!(await dataRoot.hasVolume(volumeId))) return { kind: 'unknown' };
  let metadata: VolumeMetadata;
  try {
    metadata = await readMetadata(dataRoot, volumeId);
  } catch {
    return { kind: 'unrecorded' };
  }
  return isRecordedTarget(metadata, targetPath)
    ? { kind: 'recorded' }
    : { kind: 'elsewhere', recordedTarget: metadata.targetPath };
}
