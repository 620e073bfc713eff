/** The parts of `process` that decide how a command exits. */
import { errorMessage } from '../../base/error-message.js';
export interface ExitingProcess {
  exitCode?: number | string | null | undefined;
  once(event: 'beforeExit', listener: () => void): unknown;
  off(event: 'beforeExit', listener: () => void): unknown;
}

/**
 * Makes the process exit with the command's status: the number it resolves with, 1 when it
 * rejects (the message goes to stderr), and 1 when the event loop empties while it is still
 * unsettled. Node exits 0 in that last case: a call whose answer can never come (its
 * connection dropped without a word) would otherwise look like a success.
 */
export function exitWithOutcome(
  outcome: Promise<number>,
  proc: ExitingProcess = process,
  stderr: { write(text: string): unknown } = process.stderr,
): void {
  const unsettled = () => {
    stderr.write('cert-csi: the command ended without an outcome: no answer will come\n');
    proc.exitCode = 1;
  };
  proc.once('beforeExit', unsettled);
  outcome.then(
    (code) => {
      proc.off('beforeExit', unsettled);
      proc.exitCode = code;
    },
    (err: unknown) => {
      proc.off('beforeExit', unsettled);
      stderr.write(`cert-csi: ${errorMessage(err)}\n`);
      proc.exitCode = 1;
    },
  );
}
