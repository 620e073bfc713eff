/** The `cert-csi` subcommands: dispatch by name from the command table; each wires its own parts. */

import { quoted } from '../api/echoed-value.js';
import { didYouMean } from '../base/edit-distance.js';
import { kindOf } from '../base/error-catalogue.js';
import { COMMANDS, commandNamed } from './command-table.js';
import { reportFailure } from './common/command-failure.js';
import { UsageError } from './common/usage-error.js';

/** The column the command summaries start at in the top-level usage. */
const SUMMARY_COLUMN = 14;

/** The top-level usage's list of commands, from the command table. */
function commandList(): string {
  const indent = ' '.repeat(SUMMARY_COLUMN);
  return COMMANDS.flatMap(({ name, summary }) => {
    const [first = '', ...rest] = summary;
    return [`  ${name.padEnd(SUMMARY_COLUMN - 4)}  ${first}`, ...rest.map((l) => indent + l)];
  }).join('\n');
}

/** The top-level help: the commands only; each command's --help lists its flags. */
export const USAGE = `Usage: cert-csi <command> [flags]

Commands:
${commandList()}

Run "cert-csi <command> --help" for a command's flags.
`;

// Other words for a command: `cert-csi --version`, and the ways to ask for the usage.
const ALIASES: ReadonlyMap<string, string> = new Map([['--version', 'version']]);
const USAGE_WORDS: ReadonlySet<string> = new Set(['help', '--help', '-h']);

/** Runs `cert-csi ARGV` and resolves with its exit status. */
export async function runCommand(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || USAGE_WORDS.has(name)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const command = commandNamed(ALIASES.get(name) ?? name);
  if (command === undefined) {
    const names = COMMANDS.map((c) => c.name);
    const error = new UsageError(`unknown command ${quoted(name)}${didYouMean(name, names)}`);
    return reportFailure(process.stderr, error, 'cert-csi', true);
  }
  const run = await command.run();
  try {
    return await run(rest);
  } catch (err) {
    // A command line the command cannot use: one line, and where its help is.
    if (kindOf(err) !== 'CERT_CSI_INVALID_COMMAND_LINE') throw err;
    return reportFailure(process.stderr, err, `cert-csi ${command.name}`, command.name);
  }
}
