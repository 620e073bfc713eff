import type { Logger } from '../../api/logger.js';
import { errorMessage } from '../../base/error-message.js';
import { errnoCode } from '../../fs/errors.js';
import { fileOpsFor } from '../../fs/volatile-fs.js';
import { VolumeError } from '../errors.js';

/**
 * mkdir -p of a pod's target path; true when this call created it (nothing can be mounted on
 * it yet), false when it was there. VolumeError naming it on failure.
 */
export async function ensureTargetDir(path: string, mode = 0o750): Promise<boolean> {
  try {
    // The top-most dir created, if any: the target is created whenever one is.
    return (await fileOpsFor(path).mkdir(path, { recursive: true, mode })) !== undefined;
  } catch (err) {
    throw new VolumeError(`cannot create target path ${path}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

/** rmdir that accepts a missing dir and leaves a non-empty one in place with a warning. */
export async function removeEmptyDir(path: string, logger: Logger): Promise<void> {
  try {
    await fileOpsFor(path).rmdir(path);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') {
      logger.warn({ path }, 'target path is not empty after unpublish; leaving it');
      return;
    }
    throw new VolumeError(`cannot remove target path ${path}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}
