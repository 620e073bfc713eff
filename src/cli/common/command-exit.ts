import { reportFailure } from './command-failure.js';

/** The parts of `process` that decide how a command exits. */
export interface ExitingProcess {
  exitCode?: number | string | null | undefined;
  once(event: 'beforeExit', listener: () => void): unknown;
  off(event: 'beforeExit', listener: () => void): unknown;
}

/**
 * Makes the process exit with the command's status: the number it resolves with; when it
 * rejects, the exit status of the error's kind (commandFailure: 1 unless the command line
 * cannot be used), the message going to stderr; and 1 when the event loop empties while it is
 * still unsettled. Node exits 0 in that last case: a call whose answer can never come (its
 * connection dropped without a word) would otherwise look like a success.
 */
export function exitWithOutcome(
  outcome: Promise<number>,
  proc: ExitingProcess = process,
  stderr: { write(text: string): unknown } = process.stderr,
): void {
  const fail = (err: unknown) => {
    proc.exitCode = reportFailure(stderr, err);
  };
  const unsettled = () =>
    fail(new Error('the command ended without an outcome: no answer will come'));
  proc.once('beforeExit', unsettled);
  outcome.then(
    (code) => {
      proc.off('beforeExit', unsettled);
      proc.exitCode = code;
    },
    (err: unknown) => {
      proc.off('beforeExit', unsettled);
      fail(err);
    },
  );
}
