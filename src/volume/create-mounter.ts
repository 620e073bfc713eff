import type { Logger } from '../api/logger.js';
import { silentLogger } from '../api/logger.js';
import { BindMounter, DEFAULT_TMPFS_SIZE } from './bind-mounter.js';
import type { DataRootMedium } from './data-root-medium.js';
import { DirectMounter } from './direct-mounter.js';
import type { Mounter } from './mounter.js';

/** Options of createMounter. */
export interface MounterOptions {
  /** `auto` (default): bind when running as root on Linux, else direct. */
  mode?: 'bind' | 'direct' | 'auto';
  /** tmpfs `size=` option of the data root in bind mode; DEFAULT_TMPFS_SIZE by default. */
  tmpfsSize?: string;
  /** Bind mode: where the data root keeps keys (DEFAULT_DATA_ROOT_MEDIUM, tmpfs, by default). */
  dataRootMedium?: DataRootMedium;
  logger?: Logger;
}

/** The mode `auto` resolves to: bind mounts need root and Linux. */
export function autoMountMode(
  platform: NodeJS.Platform = process.platform,
  uid: number | undefined = process.getuid?.(),
): 'bind' | 'direct' {
  return platform === 'linux' && uid === 0 ? 'bind' : 'direct';
}

/** Creates the mounter for a mode (auto: bind when root on Linux, else direct). */
export function createMounter(options: MounterOptions = {}): Mounter {
  const logger = options.logger ?? silentLogger;
  const mode = !options.mode || options.mode === 'auto' ? autoMountMode() : options.mode;
  if (mode === 'bind') {
    return new BindMounter({
      tmpfsSize: options.tmpfsSize ?? DEFAULT_TMPFS_SIZE,
      ...(options.dataRootMedium ? { medium: options.dataRootMedium } : {}),
      logger,
    });
  }
  return new DirectMounter(logger);
}
