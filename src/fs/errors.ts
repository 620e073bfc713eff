import type { ErrorKind } from '../base/error-catalogue.js';

/**
 * The error of a durable-file primitive (src/fs); its message names the file, directory or
 * command concerned. The thin wrappers of system calls (volatile-fs, atomic-file) let Node's own
 * errors through instead, so that callers can tell a missing file by its errno code.
 */
export class FsError extends Error {
  override readonly name: string = 'FsError';
  /** The file or directory the error is about, when one is known. */
  declare readonly path?: string;

  constructor(message: string, options: { path?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.path !== undefined) this.path = options.path;
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_FILE_OPERATION_FAILED';
  }
}

/** The errno code of a Node system error, if it is one. */
export function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}
