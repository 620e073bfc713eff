import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { errorMessage } from '../base/error-message.js';
import { ensureDirDurably } from '../fs/atomic-file.js';
import { errnoCode } from '../fs/errors.js';
import { fileOpsFor } from '../fs/volatile-fs.js';
import { applyDataPermissions } from './data-permissions.js';
import { VolumeError } from './errors.js';
import { isValidVolumeId, validateVolumeId } from './volume-id.js';

/** File names inside a volume dir. */
export const VolumeFile = {
  metadata: 'metadata.json',
  data: 'data',
  pendingKey: 'pending.key',
  pkcs12Password: 'pkcs12-password',
  jksPassword: 'jks-password',
} as const;

/**
 * Prefix of a volume dir being removed: renamed out of the volume namespace first (a `..` name is
 * never a volume id), so a crash mid-removal leaves no half-removed volume.
 */
export const REMOVING_PREFIX = '..removing-';

/**
 * The node-local data root: one 0700 dir per volume holding metadata.json, data/ (what the pod
 * sees), pending.key (the key of an in-flight request), pkcs12-password and jks-password (kept
 * out of metadata.json so the secrets never sit next to the non-secret state).
 */
export class DataRoot {
  /** Absolute path of the data root. */
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** `<root>/<id>`; throws VolumeError for an unsafe id. */
  volumeDir(id: string): string {
    validateVolumeId(id);
    return join(this.root, id);
  }

  /** `<root>/<id>/metadata.json`. */
  metadataPath(id: string): string {
    return join(this.volumeDir(id), VolumeFile.metadata);
  }

  /** `<root>/<id>/data`, the dir the atomic writer fills and the mount exposes. */
  dataDir(id: string): string {
    return join(this.volumeDir(id), VolumeFile.data);
  }

  /** `<root>/<id>/pending.key`, PEM PKCS#8 key of the request in flight. */
  pendingKeyPath(id: string): string {
    return join(this.volumeDir(id), VolumeFile.pendingKey);
  }

  /** `<root>/<id>/pkcs12-password`, the keystore password. */
  secretsPath(id: string): string {
    return join(this.volumeDir(id), VolumeFile.pkcs12Password);
  }

  /** `<root>/<id>/jks-password`, the JKS keystore password. */
  jksPasswordPath(id: string): string {
    return join(this.volumeDir(id), VolumeFile.jksPassword);
  }

  /** Creates the data root (mkdir -p, mode 0700) and finishes removals a crash interrupted. */
  async ensure(): Promise<void> {
    try {
      await ensureDirDurably(this.root, 0o700);
      const ops = fileOpsFor(this.root);
      await ops.chmod(this.root, 0o700);
      for (const name of await ops.readdir(this.root)) {
        if (name.startsWith(REMOVING_PREFIX)) await ops.removeTree(join(this.root, name));
      }
    } catch (err) {
      throw new VolumeError(`cannot create data root ${this.root}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }

  /** Names of the dirs in the root that are valid volume ids, sorted; anything else is ignored. */
  async listVolumeIds(): Promise<string[]> {
    let entries: Dirent[];
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return [];
      throw new VolumeError(`cannot list data root ${this.root}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    return entries
      .filter((e) => e.isDirectory() && isValidVolumeId(e.name))
      .map((e) => e.name)
      .sort();
  }

  /** Creates `<id>/` (0700) and `<id>/data/` (0550, group gid when set); idempotent. */
  async ensureVolume(id: string, gid?: number): Promise<void> {
    const dir = this.volumeDir(id);
    // The data root decides: the volume dir is created in it.
    const ops = fileOpsFor(this.root);
    try {
      await ensureDirDurably(dir, 0o700);
      await ops.chmod(dir, 0o700);
      const data = this.dataDir(id);
      await ops.mkdir(data, { mode: 0o700 }).catch((err: unknown) => {
        if (errnoCode(err) !== 'EEXIST') throw err;
      });
      await applyDataPermissions(data, gid);
      await ops.syncDir(dir);
    } catch (err) {
      throw new VolumeError(`cannot create volume ${id} in ${this.root}: ${errorMessage(err)}`, {
        volumeId: id,
        cause: err,
      });
    }
  }

  /** True when `<root>/<id>` is a directory. */
  async hasVolume(id: string): Promise<boolean> {
    const dir = this.volumeDir(id);
    try {
      // Missing is the usual answer at a first publish: no thrown ENOENT for it.
      return (await fileOpsFor(this.root).statIfExists(dir))?.isDirectory() === true;
    } catch (err) {
      throw new VolumeError(`cannot stat volume dir ${dir}: ${errorMessage(err)}`, {
        volumeId: id,
        cause: err,
      });
    }
  }

  /**
   * Removes `<root>/<id>` and everything in it; resolves false when it was already gone. The dir
   * leaves the volume namespace in one rename(2) before anything in it is removed: a crash sees
   * the whole volume or none, and ensure() removes what is left of it at the next start.
   */
  async removeVolume(id: string): Promise<boolean> {
    const dir = this.volumeDir(id);
    if (!(await this.hasVolume(id))) return false;
    const ops = fileOpsFor(this.root);
    const doomed = join(this.root, `${REMOVING_PREFIX}${id}.${randomBytes(6).toString('hex')}`);
    try {
      try {
        await ops.rename(dir, doomed);
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return false;
        throw err;
      }
      await ops.syncDir(this.root);
      await ops.removeTree(doomed);
    } catch (err) {
      throw new VolumeError(`cannot remove volume dir ${dir}: ${errorMessage(err)}`, {
        volumeId: id,
        cause: err,
      });
    }
    return true;
  }
}
