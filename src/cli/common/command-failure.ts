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
 * `cert-csi renew`; the message alone for the prefix '') and the exit status of err's kind, 1
 * for an error of no kind.
 */
export function commandFailure(err: unknown, prefix = 'cert-csi'): CommandFailure {
  const message = errorMessage(err);
  return {
    line: prefix === '' ? message : `${prefix}: ${message}`,
    exitCode: errorSpecOf(err).exitCode,
  };
}

/**
 * Reports an error a command ends with: writes its line (see commandFailure) to stderr and
 * returns the exit status of its kind.
 */
export function reportFailure(
  stderr: { write(text: string): unknown },
  err: unknown,
  prefix?: string,
): number {
  const failure = commandFailure(err, prefix);
  stderr.write(`${failure.line}\n`);
  return failure.exitCode;
}
