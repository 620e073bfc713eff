import { chmod, lstat, mkdir, realpath } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../base/error-message.js';
import { removeAtomicFiles } from '../fs/atomic-writer.js';
import { runCommand } from '../fs/run-command.js';
import { DataRoot, VolumeFile } from './data-root.js';
import {
  type DataRootMedium,
  DEFAULT_DATA_ROOT_MEDIUM,
  dataRootAction,
} from './data-root-medium.js';
import { TargetPathError, VolumeError } from './errors.js';
import type { Mounter } from './mounter.js';
import {
  findMount,
  type MountInfo,
  mountContaining,
  readMountInfo,
  readMountsAt,
} from './mountinfo.js';
import {
  checkTarget,
  refuseSymlinks,
  shownPath,
  statTarget,
  type TargetMount,
} from './target/target-checks.js';
import { ensureTargetDir, removeEmptyDir } from './target/target-dir.js';

/** tmpfs size of the data root: key, chain, CA and keystore are a few KiB per volume. */
export const DEFAULT_TMPFS_SIZE = '64m';

/** The tmpfs source name, so `mount` output shows whose it is. */
export const TMPFS_SOURCE = 'cert-csi';

// At most this many stacked mounts are removed from one target before giving up.
const MAX_UNMOUNTS = 8;

async function resolveDir(path: string, what: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    throw new VolumeError(`cannot resolve ${what} ${path}: ${errorMessage(err)}`, { cause: err });
  }
}

/** True when mount shows exactly source (same filesystem and same subdir of it). */
function mountsSource(mounts: readonly MountInfo[], mount: MountInfo, source: string): boolean {
  const home = mountContaining(mounts, source);
  if (!home) return false;
  const expectedRoot = join(home.root, relative(home.mountPoint, source));
  return home.device === mount.device && mount.root === expectedRoot;
}

/** Volume dirs (holding a metadata.json) in root: what a tmpfs mounted over root would hide. */
async function volumesIn(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const id of await new DataRoot(root).listVolumeIds()) {
    const metadata = await lstat(join(root, id, VolumeFile.metadata)).catch(() => undefined);
    if (metadata) found.push(id);
  }
  return found;
}

/** Root on Linux: one tmpfs for the data root, read-only bind mounts of each data dir. */
export class BindMounter implements Mounter {
  readonly mode = 'bind';
  private readonly tmpfsSize: string;
  private readonly medium: DataRootMedium;
  private readonly logger: Logger;

  constructor(options: { tmpfsSize: string; medium?: DataRootMedium; logger: Logger }) {
    if (!/^\d+[kmg%]?$/i.test(options.tmpfsSize)) {
      throw new VolumeError(`invalid tmpfs size ${JSON.stringify(options.tmpfsSize)}`);
    }
    this.tmpfsSize = options.tmpfsSize;
    this.medium = options.medium ?? DEFAULT_DATA_ROOT_MEDIUM;
    this.logger = options.logger;
  }

  /**
   * Puts the data root on a tmpfs (mode 0700, size limit): mounts one over a plain dir or over a
   * mount of another filesystem (a DaemonSet's hostPath), reuses the one on top (kept across
   * restarts), never stacks a second. With the disk medium mounts nothing and warns. Refuses
   * (VolumeError) to hide volumes already stored underneath. See dataRootAction.
   */
  async prepareDataRoot(root: string): Promise<void> {
    try {
      await mkdir(root, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new VolumeError(`cannot create data root ${root}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    const path = await resolveDir(root, 'data root');
    const mounts = await readMountInfo();
    const top = findMount(mounts, path);
    const fsType = (top ?? mountContaining(mounts, path))?.fsType;
    // Only a tmpfs about to be mounted could hide volumes: no need to look otherwise.
    const mayMount = top?.fsType !== 'tmpfs' && this.medium === 'tmpfs';
    const volumes = mayMount ? await volumesIn(path) : [];
    const action = dataRootAction(
      { mountedFsType: top?.fsType, volumes: volumes.length },
      this.medium,
    );
    switch (action) {
      case 'refuse-hidden-volumes':
        throw new VolumeError(
          `data root ${path} is on ${fsType}, not a tmpfs, and holds ${volumes.length} volume(s) ` +
            `(such as ${volumes[0]}): a tmpfs mounted over it would hide them from renewal and ` +
            'unpublish; start with --data-root-medium disk until no pod uses them',
        );
      case 'reuse-tmpfs':
        this.logger.info({ path }, 'reusing mounted tmpfs');
        break;
      case 'keep-tmpfs':
        this.logger.warn(
          { path, medium: this.medium },
          'data root is a tmpfs already: kept although the medium is disk (its volumes live on it)',
        );
        break;
      case 'use-disk':
        this.logger.warn(
          { path, fsType, medium: this.medium },
          'keys are stored on disk: the data root medium is disk, no tmpfs is mounted',
        );
        break;
      case 'mount-tmpfs':
        await runCommand('mount', [
          '-t',
          'tmpfs',
          '-o',
          `mode=0700,size=${this.tmpfsSize}`,
          TMPFS_SOURCE,
          path,
        ]);
        this.logger.info({ path, size: this.tmpfsSize, over: fsType }, 'mounted new tmpfs');
        return;
    }
    // Keys live here: the root stays private whatever mounted it.
    await chmod(path, 0o700);
  }

  /** Refuses a symlinked, foreign-mounted or foreign-filled target (see Mounter.checkTarget). */
  async checkTarget(dataDir: string, targetPath: string, recorded: boolean): Promise<void> {
    await checkTarget(targetPath, { recorded, mountAt: (target) => this.mountAt(dataDir, target) });
  }

  /** What is mounted on top at target: nothing, dataDir (same filesystem and subdir), or else. */
  private async mountAt(dataDir: string, target: string): Promise<TargetMount> {
    const mounts = await readMountInfo();
    const mount = findMount(mounts, target);
    if (!mount) return { kind: 'none' };
    const source = await realpath(dataDir).catch(() => undefined);
    if (source !== undefined && mountsSource(mounts, mount, source)) return { kind: 'ours' };
    return { kind: 'foreign', what: `${mount.source}:${mount.root}` };
  }

  /** Bind-mounts dataDir read-only at targetPath; an existing mount of the same dir is success. */
  async publish(dataDir: string, targetPath: string): Promise<void> {
    const source = await resolveDir(dataDir, 'data dir');
    await this.checkTarget(dataDir, targetPath, true);
    const created = await ensureTargetDir(targetPath);
    // Against a symlink swapped into the path since the check: mount only where the path says.
    await refuseSymlinks(targetPath);
    const target = resolve(targetPath);
    // A dir made a moment ago holds no mount: one read of the mount table fewer (most publishes).
    const existing = created ? undefined : findMount(await readMountsAt(target), target);
    if (existing) {
      // checkTarget proved it is a mount of source.
      if (existing.options.includes('ro')) return;
      // A crash between the bind and the remount left it writable: finish the job.
    } else if (await this.bindReadOnly(source, target)) {
      return;
    }
    try {
      await runCommand('mount', ['-o', 'remount,bind,ro', target]);
    } catch (err) {
      // Never leave a writable view of the data dir behind.
      await runCommand('umount', [target]).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Bind-mounts source at target read-only with one spawn (util-linux >= 2.27 remounts read-only
   * itself; each spawn costs ~2.5 ms). True when target is now a read-only mount; false when it
   * is a writable one (an older mount ignores `ro` for a bind, or failed before its remount) for
   * the caller to remount. Falls back to a plain bind when the one-step form failed to mount.
   */
  private async bindReadOnly(source: string, target: string): Promise<boolean> {
    let failure: unknown;
    try {
      await runCommand('mount', ['--bind', '-o', 'ro', source, target]);
    } catch (err) {
      failure = err;
    }
    const mount = findMount(await readMountsAt(target), target);
    if (mount) return mount.options.includes('ro');
    if (failure !== undefined) {
      this.logger.debug(
        { target, err: errorMessage(failure) },
        'one-step read-only bind mount failed; binding and remounting',
      );
    }
    await runCommand('mount', ['--bind', source, target]);
    return false;
  }

  /** Nothing to do: the bind mount shows each new generation. */
  async refresh(): Promise<void> {}

  /**
   * Unmounts every stacked mount of dataDir at targetPath, never another one (TargetPathError:
   * left mounted); when owned, then removes direct-mode leftovers and the dir when empty. A
   * missing target is success; a symlinked one is refused.
   */
  async unpublish(dataDir: string, targetPath: string, owned: boolean): Promise<void> {
    const stats = await statTarget(targetPath);
    if (!stats) return;
    await refuseSymlinks(targetPath);
    const target = resolve(targetPath);
    for (let i = 0; ; i++) {
      const mount = await this.mountAt(dataDir, target);
      if (mount.kind === 'none') break;
      if (mount.kind === 'foreign') {
        throw new TargetPathError(
          `target path ${shownPath(target)} is a mount of ${mount.what}, not of this volume; left mounted`,
        );
      }
      if (i >= MAX_UNMOUNTS) {
        throw new VolumeError(
          `target path ${shownPath(target)} is still mounted after ${i} unmounts`,
        );
      }
      await runCommand('umount', [target]);
    }
    if (!owned || !stats.isDirectory()) return;
    // Files a direct-mode run may have mirrored here before a switch to bind mode.
    await removeAtomicFiles(target);
    await removeEmptyDir(target, this.logger);
  }
}
