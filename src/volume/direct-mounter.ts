import { chmod, mkdir } from 'node:fs/promises';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../base/error-message.js';
import { KeyedMutex } from '../base/keyed-mutex.js';
import { readToMirror, removeAtomicFiles, writeAtomically } from '../fs/atomic-writer.js';
import { fileOpsFor } from '../fs/volatile-fs.js';
import { applyDataPermissions, hasDataPermissions } from './data-permissions.js';
import { VolumeError } from './errors.js';
import type { Mounter } from './mounter.js';
import { checkTarget, refuseSymlinks, statTarget } from './target/target-checks.js';
import { ensureTargetDir, removeEmptyDir } from './target/target-dir.js';

// The group the data dir was given (fs-group); the writer's own group means none was set.
async function groupOf(dir: string): Promise<number | undefined> {
  const { gid } = await fileOpsFor(dir).stat(dir);
  return gid === process.getgid?.() ? undefined : gid;
}

/**
 * Without root (or off Linux) nothing can be mounted: the target path gets its own copy of the
 * volume's files, written with the same atomic writer, so readers see the same `..data` scheme.
 */
export class DirectMounter implements Mounter {
  readonly mode = 'direct';
  private readonly logger: Logger;
  // The atomic writer takes one writer per dir: a republish and a renewal may both mirror one
  // target at once, and each removes every generation but its own (`..data` left pointing at a
  // removed one). Mirrors of a target run one at a time, each reading the data dir inside its
  // turn, so the last one writes the newest files.
  private readonly targets = new KeyedMutex();

  constructor(logger: Logger) {
    this.logger = logger;
  }

  /** Creates the data root (0700); no tmpfs without root. */
  async prepareDataRoot(root: string): Promise<void> {
    try {
      await mkdir(root, { recursive: true, mode: 0o700 });
      await chmod(root, 0o700);
    } catch (err) {
      throw new VolumeError(`cannot create data root ${root}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }

  /** Creates targetPath and mirrors dataDir's current files into it, with the data dir's group. */
  async publish(dataDir: string, targetPath: string): Promise<void> {
    let gid: number | undefined;
    try {
      gid = await groupOf(dataDir);
    } catch (err) {
      throw new VolumeError(`cannot stat data dir ${dataDir}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    await this.checkTarget(dataDir, targetPath, true);
    await ensureTargetDir(targetPath);
    await this.refresh(dataDir, targetPath, gid);
  }

  /** Refuses a symlinked or foreign-filled target (see Mounter.checkTarget); nothing is mounted here. */
  async checkTarget(_dataDir: string, targetPath: string, recorded: boolean): Promise<void> {
    await checkTarget(targetPath, { recorded });
  }

  /**
   * Mirrors dataDir's current generation into targetPath; nothing when targetPath is gone
   * (unpublished) or nothing was written yet. A symlink in the path is refused, never written through.
   */
  async refresh(dataDir: string, targetPath: string, gid?: number): Promise<void> {
    const release = await this.targets.lock(targetPath);
    try {
      await this.mirror(dataDir, targetPath, gid);
    } finally {
      release();
    }
  }

  private async mirror(dataDir: string, targetPath: string, gid?: number): Promise<void> {
    // One statfs for the whole mirror, not one per step (five, as a step's answer is kept for
    // one event-loop turn only). A mount made over the target meanwhile can only turn tmpfs
    // calls into durable ones, always safe, or leave one mirror unflushed on a disk: it is made
    // again at the next refresh, and at every start.
    const ops = fileOpsFor(targetPath);
    const stats = await statTarget(targetPath, ops);
    if (!stats) return;
    await refuseSymlinks(targetPath, ops, stats);
    if (!stats.isDirectory()) return;
    // What the issuance just wrote, when it still is the data dir's current generation.
    const read = await readToMirror(dataDir);
    if (read === undefined) return;
    // The lstat above shows them already at every start and at most refreshes: no chmod then.
    if (!hasDataPermissions(stats, gid))
      await applyDataPermissions(targetPath, gid, undefined, ops);
    // A mirror: made again from the data dir at every publish and refresh, so one fsync will do.
    // Handed-off files are a generation no mirror has copied yet: not compared with the target's
    // (a renewal's differs anyway; at worst a race repeats one copy, never loses one).
    const { written } = await writeAtomically(targetPath, read.files, {
      syncOnce: true,
      knownNew: read.handedOff,
      fileOps: ops,
      ...(gid === undefined ? {} : { gid }),
    });
    if (written) this.logger.debug({ targetPath }, 'mirrored volume files to target path');
  }

  /**
   * When owned (the volume's recorded target), removes the mirrored files and the target dir
   * when empty; otherwise touches nothing. A missing target is success; a symlinked one is refused.
   */
  async unpublish(_dataDir: string, targetPath: string, owned: boolean): Promise<void> {
    const release = await this.targets.lock(targetPath);
    try {
      const stats = await statTarget(targetPath);
      if (!stats) return;
      await refuseSymlinks(targetPath);
      if (!owned || !stats.isDirectory()) return;
      await removeAtomicFiles(targetPath);
      await removeEmptyDir(targetPath, this.logger);
    } finally {
      release();
    }
  }
}
