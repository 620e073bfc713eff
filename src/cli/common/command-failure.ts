import { errorSpecOf } from '../../base/error-catalogue.js';
import { errorMessage } from '../../base/error-message.js';

// The one place an error becomes what a command prints: one line saying what is wrong (and what
// to do, as the error's own message says it), then, for a command named, where its help is.
// Never the whole help: the line would scroll away above it.

/** How an error ends a command: the line it writes to stderr and the exit status. */
export interface CommandFailure {
  /** `PREFIX: message`, on one line, without a newline. */
  line: string;
  exitCode: number;
  /** What the command writes: the line, then `see cert-csi COMMAND --help` for a command named. */
  text: string;
}

/** The line after an error that points at a command's help. */
export function seeHelpLine(command: string | undefined): string {
  return command === undefined ? 'see cert-csi --help' : `see cert-csi ${command} --help`;
}

/**
 * How err ends a command: the line `PREFIX: message` (prefix `cert-csi` unless told, e.g.
 * `cert-csi renew`; the message alone for the prefix ''), its line breaks folded into one line,
 * and the exit status of err's kind, 1 for an error of no kind. With help, the text points at the
 * help of that command (help `true`: the top-level help).
 */
export function commandFailure(
  err: unknown,
  prefix = 'cert-csi',
  help?: string | true,
): CommandFailure {
  const message = oneLine(errorMessage(err));
  const line = prefix === '' ? message : `${prefix}: ${message}`;
  return {
    line,
    exitCode: errorSpecOf(err).exitCode,
    text:
      help === undefined
        ? `${line}\n`
        : `${line}\n${seeHelpLine(help === true ? undefined : help)}\n`,
  };
}

/** text on one line: each line break and the blanks around it become `; `. */
function oneLine(text: string): string {
  return text
    .trim()
    .split(/\s*\n\s*/)
    .filter((part) => part !== '')
    .join('; ');
}

/**
 * Reports an error a command ends with: writes its text (see commandFailure) to stderr and
 * returns the exit status of its kind.
 */
export function reportFailure(
  stderr: { write(text: string): unknown },
  err: unknown,
  prefix?: string,
  help?: string | true,
): number {
  const failure = commandFailure(err, prefix, help);
  stderr.write(failure.text);
  return failure.exitCode;
}
