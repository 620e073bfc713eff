import type { Logger } from '../../api/logger.js';
import { errorMessage } from '../../base/error-message.js';
import { errnoCode } from '../../fs/errors.js';
import { fileOpsFor } from '../../fs/volatile-fs.js';
import { VolumeError } from '../errors.js';

/** mkdir -p of a pod's target path; VolumeError naming it on failure. */
export async function ensureTargetDir(path: string, mode = 0o750): Promise<void> {
  try {
    await fileOpsFor(path).mkdir(path, { recursive: true, mode });
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
