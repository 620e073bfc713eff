import { errorMessage } from '../../base/error-message.js';
import { DataRoot } from '../../volume/data-root.js';
import { ControlError } from '../../volume-manager/control/control-client.js';
import { reportFailure } from './command-failure.js';
import type { CommandOutput } from './command-output.js';
import { type HelpedCommand, usageError } from './command-start.js';
import { flagTimeout } from './flag-values.js';
import { isDirectory } from './is-directory.js';
import { PluginCallError } from './plugin-call-error.js';

// A call to a running plugin through its data root's control socket, as `cert-csi renew` makes
// it for volumes and for a Certificate of the embedded plugin.

/** The data root of a running plugin, and how long to wait for its answer. */
export interface ControlCall {
  root: string;
  dataRoot: DataRoot;
  timeoutMs: number;
  timeoutText: string;
}

/**
 * The call to the plugin of a data root (absolute) with the --timeout given; the exit status
 * of a usage error of command when the flag or the data root rule it out.
 */
export async function controlCall(
  out: CommandOutput,
  command: HelpedCommand,
  root: string,
  timeoutText: string,
): Promise<ControlCall | number> {
  let timeoutMs: number;
  try {
    timeoutMs = flagTimeout('--timeout', timeoutText);
  } catch (err) {
    return usageError(out, command, errorMessage(err));
  }
  if (!(await isDirectory(root))) {
    // The plugin creates it at start: without it, no plugin ever used this data root.
    return usageError(
      out,
      command,
      `data root ${root} does not exist or is not a directory: is cert-csi node running with --data-root ${root}?`,
    );
  }
  return { root, dataRoot: new DataRoot(root), timeoutMs, timeoutText };
}

/**
 * Reports why the plugin gave no answer, or the error it answered with, as a failed plugin call
 * (exit status 1). stillRunning tells what may yet happen when the plugin took the request.
 * Anything else is thrown again.
 */
export function controlCallFailed(
  out: CommandOutput,
  command: HelpedCommand,
  err: unknown,
  call: ControlCall,
  stillRunning: string,
): number {
  if (!(err instanceof ControlError)) throw err;
  const running = `is cert-csi node running with --data-root ${call.root}?`;
  // What went wrong, and whether the line names the command: a wait that ran out does not.
  const [message, named] = (
    {
      'no-plugin': [`no plugin answers at ${err.socketPath} (${err.detail}): ${running}`, true],
      'no-answer': [`no answer from the plugin within ${call.timeoutText}: ${running}`, false],
      late: [
        `the plugin took the request but did not answer within ${call.timeoutText}; ${stillRunning}`,
        false,
      ],
      lost: [`no complete answer from the plugin (${err.detail}); ${stillRunning}`, true],
      refused: [err.detail, true],
      unreadable: [`unreadable answer from the plugin: ${err.detail}`, true],
    } as const
  )[err.failure];
  return reportFailure(
    out.stderr,
    new PluginCallError(message, { cause: err }),
    named ? `cert-csi ${command.name}` : '',
    command.name,
  );
}
