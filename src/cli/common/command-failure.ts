import { errorSpecOf } from '../../base/error-catalogue.js';
import { errorMessage } from '../../base/error-message.js';

/** How an error ends a command: the line it writes to stderr and the exit status. */
export interface CommandFailure {
  /** `PREFIX: message`, without a newline. */
  line: string;
  exitCode: number;
}

/**
 * How err ends a command: the line `PREFIX: message` (prefix `cert-csi` unless told, e.g.
 * `cert-csi renew`) and the exit status of err's kind, 1 for an error of no kind.
 */
export function commandFailure(err: unknown, prefix = 'cert-csi'): CommandFailure {
  return { line: `${prefix}: ${errorMessage(err)}`, exitCode: errorSpecOf(err).exitCode };
}
