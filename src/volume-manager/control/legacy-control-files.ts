import { lstat, opendir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../api/logger.js';
import { errorMessage } from '../../base/error-message.js';
import type { DataRoot } from '../../volume/data-root.js';
import { fileKind } from './file-kind.js';

// Before the control socket, `cert-csi renew` wrote request files into `<data-root>/..renew`
// and `cert-csi status` asked `<data-root>/..status.sock`. Nothing reads either any more. The
// request dir is removed rather than left: a request there would never be answered, and a CLI
// of the older version run against this plugin fails at once ("..renew does not exist")
// instead of waiting its whole --timeout for an answer nobody writes.

/** The request dir of versions before the control socket. */
export const LEGACY_RENEW_DIR_NAME = '..renew';
/** The status socket of versions before the control socket. */
export const LEGACY_STATUS_SOCKET_NAME = '..status.sock';

/**
 * Removes the request dir and the status socket older versions left in the data root; never
 * throws: a leftover costs nothing but its name. Only what those versions made is removed (a
 * socket at the socket's name; a directory at the dir's name, emptied with unlink, which never
 * follows a link or opens a FIFO); anything else is left as it is, with a warning.
 */
export async function removeLegacyControlFiles(dataRoot: DataRoot, logger: Logger): Promise<void> {
  await removeLegacySocket(join(dataRoot.root, LEGACY_STATUS_SOCKET_NAME), logger);
  await removeLegacyRenewDir(join(dataRoot.root, LEGACY_RENEW_DIR_NAME), logger);
}

async function removeLegacySocket(path: string, logger: Logger): Promise<void> {
  // Nothing there (the usual case), or nothing that can be looked at: nothing to remove.
  const stats = await lstat(path).catch(() => undefined);
  if (!stats) return;
  if (!stats.isSocket()) {
    logger.warn(
      { path, kind: fileKind(stats) },
      'not the status socket of an older version: left as it is',
    );
    return;
  }
  try {
    await unlink(path);
    logger.info({ path }, 'removed the status socket of an older version');
  } catch (err) {
    logger.warn(
      { path, err: errorMessage(err) },
      'cannot remove the status socket of an older version',
    );
  }
}

async function removeLegacyRenewDir(dir: string, logger: Logger): Promise<void> {
  const stats = await lstat(dir).catch(() => undefined);
  if (!stats) return;
  if (!stats.isDirectory()) {
    logger.warn(
      { path: dir, kind: fileKind(stats) },
      'not the renew request dir of an older version: left as it is',
    );
    return;
  }
  let dropped = 0;
  try {
    for await (const entry of await opendir(dir)) {
      // Older versions made no directories in it: one stays, and so does the dir.
      if (entry.isDirectory()) continue;
      await unlink(join(dir, entry.name));
      if (entry.name.endsWith('.request')) dropped++;
    }
    await rmdir(dir);
    logger.info(
      { path: dir, droppedRequests: dropped },
      'removed the renew request dir of an older version',
    );
  } catch (err) {
    logger.warn(
      { path: dir, err: errorMessage(err) },
      'cannot remove the renew request dir of an older version; nothing uses it',
    );
  }
}
