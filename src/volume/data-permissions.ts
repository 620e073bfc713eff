import { errorMessage } from '../base/error-message.js';
import { type FileOps, fileOpsFor } from '../fs/volatile-fs.js';
import { VolumeError } from './errors.js';

/**
 * Mode of a volume's data dir: 0550 like csi-driver (root writes through it, the pod's group
 * only reads). A non-root driver (direct mode on a workstation) keeps owner write, or it could
 * not write its own next generation.
 */
export function dataDirMode(uid: number | undefined = process.getuid?.()): number {
  return uid === 0 ? 0o550 : 0o750;
}

/**
 * True when a dir's lstat already shows what applyDataPermissions would set: the mode exactly,
 * and the group when one is asked for. A caller that has the stats skips the chmod then.
 */
export function hasDataPermissions(
  stats: { mode: number; gid: number },
  gid: number | undefined,
  mode: number = dataDirMode(),
): boolean {
  return (stats.mode & 0o7777) === mode && (gid === undefined || stats.gid === gid);
}

/** Sets dir's mode (dataDirMode() unless given) and, when gid is set, its group (chown -1:gid). */
export async function applyDataPermissions(
  dir: string,
  gid?: number,
  mode: number = dataDirMode(),
  ops: FileOps = fileOpsFor(dir),
): Promise<void> {
  try {
    if (gid !== undefined) await ops.chown(dir, -1, gid);
    await ops.chmod(dir, mode);
  } catch (err) {
    const group = gid === undefined ? '' : ` and group ${gid}`;
    throw new VolumeError(
      `cannot set mode ${mode.toString(8)}${group} on ${dir}: ${errorMessage(err)}`,
      { cause: err },
    );
  }
}
