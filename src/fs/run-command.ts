import { errorMessage } from '../base/error-message.js';
import { CommandHelper, type CommandReply } from './command-helper.js';
import { FsError } from './errors.js';

/** How long a command may run before it is killed and reported as failed. */
export const COMMAND_TIMEOUT_MS = 60_000;

const helper = new CommandHelper();

/**
 * Runs a command without a shell, in the helper process (command-helper.ts); resolves its
 * stdout. FsError naming the command line and its stderr on failure, or that it ran out of time.
 */
export async function runCommand(
  command: string,
  args: readonly string[],
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<string> {
  const line = [command, ...args].join(' ');
  let reply: CommandReply;
  try {
    reply = await helper.run(command, args, timeoutMs);
  } catch (err) {
    throw new FsError(`${line} failed: ${errorMessage(err)}`, { cause: err });
  }
  if (reply.ok) return reply.stdout;
  const stderr = reply.stderr.trim();
  const why = reply.killed
    ? `no result within ${timeoutMs} ms: killed`
    : stderr !== ''
      ? stderr
      : reply.code === 'ENOENT'
        ? `${command} not found`
        : reply.message;
  throw new FsError(`${line} failed: ${why}`);
}
