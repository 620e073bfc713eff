import type { Logger } from '../api/logger.js';
import { silentLogger } from '../api/logger.js';
import { BindMounter, DEFAULT_TMPFS_SIZE } from './bind-mounter.js';
import { DirectMounter } from './direct-mounter.js';

/** How a volume's files reach the pod's target path. */
export interface Mounter {
  readonly mode: 'bind' | 'direct';
  /** Prepares the data root (tmpfs when bind mode). */
  prepareDataRoot(root: string): Promise<void>;
  /**
   * Makes the volume's files visible at targetPath: a read-only bind mount of dataDir, or in
   * direct mode a mirror of its current files. Idempotent: an existing mount of the same source
   * is success.
   */
  publish(dataDir: string, targetPath: string): Promise<void>;
  /** Called after each new generation was written into dataDir; direct mode mirrors the files into targetPath with writeAtomically; bind mode does nothing. */
  refresh(dataDir: string, targetPath: string, gid?: number): Promise<void>;
  /** Unmounts (bind) or removes the mirrored files (direct) and removes the target dir if empty; success when targetPath does not exist or is not mounted. */
  unpublish(targetPath: string): Promise<void>;
}

/** Options of createMounter. */
export interface MounterOptions {
  /** `auto` (default): bind when running as root on Linux, else direct. */
  mode?: 'bind' | 'direct' | 'auto';
  /** tmpfs `size=` option of the data root in bind mode; DEFAULT_TMPFS_SIZE by default. */
  tmpfsSize?: string;
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
    return new BindMounter({ tmpfsSize: options.tmpfsSize ?? DEFAULT_TMPFS_SIZE, logger });
  }
  return new DirectMounter(logger);
}
