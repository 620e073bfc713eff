import { COMMANDS, type CommandEntry } from './command-table.js';

/** What the reference shows of one command: its name, its summary lines and its help text. */
export interface CommandReference {
  name: string;
  summary: readonly string[];
  help: string;
}

/** docs/cli.md: an index of the commands, then each command's help as `--help` prints it. */
export function renderCliReference(commands: readonly CommandReference[]): string {
  const index = commands.map(
    ({ name, summary }) => `| [\`cert-csi ${name}\`](#cert-csi-${name}) | ${summary.join(' ')} |`,
  );
  const sections = commands.map(
    ({ name, summary, help }) =>
      `## \`cert-csi ${name}\`\n\n${capitalized(summary.join(' '))}.\n\n\`\`\`text\n${help}\`\`\`\n`,
  );
  return [
    '# `cert-csi` command reference',
    '',
    "<!-- Written by `npm run docs:cli` from src/cli/command-table.ts and each command's help: edit those and run it again, not this file. -->",
    '',
    'Every `cert-csi` command with what its `--help` prints: its usage, what it does, its exit',
    'codes and its flags. [README.md](../README.md) tells how the commands work together.',
    '',
    '| command | what it does |',
    '|---|---|',
    ...index,
    '',
    sections.join('\n'),
  ].join('\n');
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The reference of each command of the table, its help loaded. */
export async function commandReferences(
  commands: readonly CommandEntry[] = COMMANDS,
): Promise<CommandReference[]> {
  return Promise.all(
    commands.map(async ({ name, summary, help }) => ({ name, summary, help: await help() })),
  );
}
