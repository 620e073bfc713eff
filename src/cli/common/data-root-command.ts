import { stat } from 'node:fs/promises';
import { errorMessage } from '../../base/error-message.js';
import { commandFailure } from './command-failure.js';
import { UsageError } from './usage-error.js';

/** Where a command writes; the process streams, or a test's buffers. */
export interface CommandOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** The process's own streams. */
export const processOutput: CommandOutput = { stdout: process.stdout, stderr: process.stderr };

/** A command that works on a plugin's data root (`renew`, `status`). */
export interface DataRootCommand<V> {
  name: string;
  help: string;
  /** Parses the flags; throws on an unknown or malformed one. */
  parse: (args: string[]) => V;
}

/** Writes `cert-csi NAME: message` and the command's help to stderr; exit status 2. */
export function usageError(
  out: CommandOutput,
  command: DataRootCommand<unknown>,
  message: string,
): number {
  const failure = commandFailure(new UsageError(message), `cert-csi ${command.name}`);
  out.stderr.write(`${failure.line}\n\n${command.help}`);
  return failure.exitCode;
}

/**
 * Parses the flags (a bad one is a usage error) and answers --help. Returns the exit status
 * when that already ended the command.
 */
export function startCommand<V extends { help?: boolean }>(
  args: string[],
  out: CommandOutput,
  command: DataRootCommand<V>,
): { values: V } | number {
  let values: V;
  try {
    values = command.parse(args);
  } catch (err) {
    return usageError(out, command, errorMessage(err));
  }
  if (values.help) {
    out.stdout.write(command.help);
    return 0;
  }
  return { values };
}

/** True when path exists and is a directory. */
export function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
