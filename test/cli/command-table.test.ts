import { readFile } from 'node:fs/promises';
import t from 'tap';
import {
  type CommandReference,
  commandReferences,
  renderCliReference,
} from '../../src/cli/cli-reference.js';
import { COMMANDS, commandNamed } from '../../src/cli/command-table.js';
import { runCommand, USAGE } from '../../src/cli/commands.js';
import { packageVersion } from '../../src/cli/common/package-version.js';
import { projectPath } from '../support/project-files.js';

/** What a call printed on stdout; no assertion while stdout is replaced (tap reports there). */
async function stdoutOf(call: () => Promise<number>): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  try {
    return { code: await call(), stdout };
  } finally {
    process.stdout.write = write;
  }
}

t.test('docs/cli.md is what the command table and the helps render now', async (t) => {
  const written = await readFile(projectPath('docs', 'cli.md'), 'utf8');
  const rendered = renderCliReference(await commandReferences());
  t.ok(written === rendered, 'docs/cli.md is out of date: run `npm run docs:cli` and commit it');
  for (const { name } of COMMANDS) {
    t.ok(written.includes(`\n## \`cert-csi ${name}\`\n`), `docs/cli.md has a section for ${name}`);
  }
});

t.test('the reference: an index linking each command, then its summary and help', async (t) => {
  const commands: CommandReference[] = [
    { name: 'one', summary: ['do the first thing,', 'twice'], help: 'Usage: cert-csi one\n' },
    { name: 'two', summary: ['do the second'], help: 'Usage: cert-csi two [flags]\n\nFlags:\n' },
  ];
  const text = renderCliReference(commands);
  t.match(text, /^# `cert-csi` command reference\n/);
  t.match(text, /<!-- Written by `npm run docs:cli` /, 'says how it is made');
  t.ok(
    text.includes(
      [
        '| command | what it does |',
        '|---|---|',
        '| [`cert-csi one`](#cert-csi-one) | do the first thing, twice |',
        '| [`cert-csi two`](#cert-csi-two) | do the second |',
        '',
      ].join('\n'),
    ),
    'one row per command, its summary lines joined',
  );
  t.ok(
    text.endsWith(
      [
        '## `cert-csi one`',
        '',
        'Do the first thing, twice.',
        '',
        '```text',
        'Usage: cert-csi one',
        '```',
        '',
        '## `cert-csi two`',
        '',
        'Do the second.',
        '',
        '```text',
        'Usage: cert-csi two [flags]',
        '',
        'Flags:',
        '```',
        '',
      ].join('\n'),
    ),
    'each command: its heading, its summary as a sentence, its help as --help prints it',
  );
});

t.test("each command's --help prints the help the table gives for it", async (t) => {
  for (const command of COMMANDS) {
    if (command.name === 'version') continue;
    const help = await command.help();
    const run = await command.run();
    const printed = await stdoutOf(() => run(['--help']));
    t.equal(printed.code, 0, `${command.name} --help exits 0`);
    t.equal(printed.stdout, help, `${command.name} --help prints the table's help`);
    t.match(
      help,
      new RegExp(`^Usage: cert-csi ${command.name}\\b`),
      `${command.name}: usage first`,
    );
  }
  // `version` takes no flags: whatever follows it, it prints the version.
  const version = commandNamed('version');
  t.ok(version, 'version is a command');
  t.match(await version?.help(), /^Usage: cert-csi version\n/);
  for (const argv of [['version'], ['version', '--help'], ['--version']]) {
    const printed = await stdoutOf(() => runCommand(argv));
    t.same(printed, { code: 0, stdout: `${packageVersion()}\n` }, argv.join(' '));
  }
});

t.test('the top-level usage lists the table, in order, as it always read', async (t) => {
  t.equal(
    USAGE,
    `Usage: cert-csi <command> [flags]

Commands:
  node        run the CSI node plugin (embedded store and issuers, or --mode kubernetes)
  controller  run the controller stack (issuers, Certificates) against a cluster,
              leader-elected
  webhook     serve cert-manager's admission webhook (CertificateRequest identity
              and approval, validation) for a cluster without cert-manager
  publish     publish a volume through a running plugin, as kubelet would
  unpublish   unpublish a volume through a running plugin
  renew       make a running plugin renew a volume, or all, now; or mark a
              cert-manager Certificate for issuance (as cmctl renew)
  status      list this node's volumes, their certificates and renewal state;
              or show a cert-manager Certificate (as cmctl status certificate)
  approve     approve a CertificateRequest (as cmctl approve)
  deny        deny a CertificateRequest (as cmctl deny)
  inspect     describe a TLS Secret's certificate and check its chain and key
              (as cmctl inspect secret)
  check       check that the cert-manager API is ready (as cmctl check api)
  version     print the version

Run "cert-csi <command> --help" for a command's flags.
`,
  );
  t.same(
    [...USAGE.matchAll(/^ {2}(\S+) /gm)].map((m) => m[1]),
    COMMANDS.map((c) => c.name),
    'every command of the table, and only those',
  );
  t.equal(commandNamed('frobnicate'), undefined);
  t.equal(commandNamed('constructor'), undefined, 'no name reaches an object prototype');
});
