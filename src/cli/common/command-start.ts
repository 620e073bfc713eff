import { errorMessage } from '../../base/error-message.js';
import { reportFailure } from './command-failure.js';
import type { CommandOutput } from './command-output.js';
import { type FlagTable, type ParsedFlags, parseFlags } from './flag-table.js';
import { UsageError } from './usage-error.js';

/** A command that answers a command line it cannot use with a line pointing at its help (`renew`, `status`); its flags include HELP_FLAG. */
export interface HelpedCommand<T extends FlagTable = FlagTable> {
  name: string;
  help: string;
  flags: T;
  /** Whether it takes arguments besides its flags (`approve NAME`). */
  positionals?: boolean;
}

/** Writes `cert-csi NAME: message` and where the command's help is to stderr; exit status 2. */
export function usageError(out: CommandOutput, command: HelpedCommand, message: string): number {
  return reportFailure(
    out.stderr,
    new UsageError(message),
    `cert-csi ${command.name}`,
    command.name,
  );
}

/**
 * Parses the flags (a bad one is a usage error) and answers --help. Returns the exit status
 * when that already ended the command.
 */
export function startCommand<T extends FlagTable>(
  args: string[],
  out: CommandOutput,
  command: HelpedCommand<T>,
): ParsedFlags<T> | number {
  let parsed: ParsedFlags<T>;
  try {
    parsed = parseFlags(command.flags, args, { positionals: command.positionals === true });
  } catch (err) {
    return usageError(out, command, errorMessage(err));
  }
  if (parsed.explicit.has('help')) {
    out.stdout.write(command.help);
    return 0;
  }
  return parsed;
}
