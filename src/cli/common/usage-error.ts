import type { ErrorKind } from '../../base/error-catalogue.js';

/** A command line that cannot be used: an unknown command, or flags that do not fit. */
export class UsageError extends Error {
  readonly errorKind: ErrorKind = 'CERT_CSI_INVALID_COMMAND_LINE';
  override readonly name = 'UsageError';
}
