import { stat } from 'node:fs/promises';
import { errorMessage } from '../base/error-message.js';
import { ensureDirDurably } from '../fs/atomic-file.js';
import { type HeldLock, lockDirectory } from '../fs/directory-lock.js';
import { pinFileOps } from '../fs/volatile-fs.js';
import type { DataRoot } from './data-root.js';
import { VolumeError } from './errors.js';
import type { Mounter } from './mounter.js';

/** The identity of the directory a path shows now: a tmpfs mounted over it shows another one. */
async function dirIdentity(path: string): Promise<string> {
  const info = await stat(path);
  return `${info.dev}:${info.ino}`;
}

/**
 * Makes this process the only one managing the data root, then prepares it (finishes interrupted
 * removals, mounts the tmpfs in bind mode). Throws LockHeldError naming the holder's pid when
 * another plugin holds it; nothing in the root is touched then.
 *
 * The lock file lives in the root itself: it is the one path every instance shares (a DaemonSet
 * pod sees only the data root's hostPath, not its parent). Mounting the tmpfs hides the lock file
 * of the dir underneath, so the lock is taken twice: on what the path shows before the mount (two
 * instances starting together contend there; the loser never mounts a second tmpfs) and, when the
 * mount changed what it shows, on the tmpfs (an instance starting after the mount contends there
 * with the holder). Holding both until stop, exactly one instance passes both.
 */
export async function claimDataRoot(dataRoot: DataRoot, mounter: Mounter): Promise<HeldLock> {
  const root = dataRoot.root;
  try {
    await ensureDirDurably(root, 0o700);
  } catch (err) {
    throw new VolumeError(`cannot create data root ${root}: ${errorMessage(err)}`, { cause: err });
  }
  const what = `data root ${root}`;
  const first = await lockDirectory(root, what);
  const locks = [first];
  const releaseAll = () => {
    for (const lock of [...locks].reverse()) lock.release();
  };
  try {
    const before = await dirIdentity(root);
    await dataRoot.ensure();
    await mounter.prepareDataRoot(root);
    if ((await dirIdentity(root)) !== before) locks.push(await lockDirectory(root, what));
  } catch (err) {
    releaseAll();
    throw err;
  }
  // The medium is settled (the tmpfs mounted or the disk kept): no statfs per file from now on.
  const unpin = pinFileOps(root);
  return {
    path: first.path,
    release: () => {
      unpin();
      releaseAll();
    },
  };
}
