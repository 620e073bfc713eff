import type { ErrorKind } from '../base/error-catalogue.js';

/** The error type of the volume layer; its message names the volume or path concerned. */
export class VolumeError extends Error {
  override readonly name: string = 'VolumeError';
  /** The volume the error is about, when one is known. */
  declare readonly volumeId?: string;

  constructor(message: string, options: { volumeId?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.volumeId !== undefined) this.volumeId = options.volumeId;
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_VOLUME_FAILED';
  }
}

/**
 * A target path the node's state forbids publishing to or unpublishing from (a symlink, a mount
 * or files of something else): nothing was changed; the operator fixes the node, then kubelet's
 * retry succeeds.
 */
export class TargetPathError extends VolumeError {
  override readonly name: string = 'TargetPathError';

  override get errorKind(): ErrorKind {
    return 'CERT_CSI_TARGET_PATH_REFUSED';
  }
}
