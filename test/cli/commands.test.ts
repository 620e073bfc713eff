import { EventEmitter } from 'node:events';
import t from 'tap';
import { runCommand, USAGE } from '../../src/cli/commands.js';
import { type ExitingProcess, exitWithOutcome } from '../../src/cli/common/command-exit.js';

function fakeProcess(): ExitingProcess & EventEmitter {
  return Object.assign(new EventEmitter(), { exitCode: undefined as number | undefined });
}

t.test('a command that never settles exits 1 when the event loop empties, not 0', async (t) => {
  const proc = fakeProcess();
  const written: string[] = [];
  exitWithOutcome(new Promise<number>(() => {}), proc, { write: (s: string) => written.push(s) });
  proc.emit('beforeExit');
  t.equal(proc.exitCode, 1);
  t.match(written.join(''), /ended without an outcome/);
});

t.test(
  'a settled command exits with its status; a thrown error exits 1 with its message',
  async (t) => {
    const proc = fakeProcess();
    const written: string[] = [];
    const out = { write: (s: string) => written.push(s) };
    exitWithOutcome(Promise.resolve(3), proc, out);
    await new Promise((resolve) => setImmediate(resolve));
    proc.emit('beforeExit');
    t.equal(proc.exitCode, 3, 'the status, and the guard is gone');
    t.equal(proc.listenerCount('beforeExit'), 0);

    const failing = fakeProcess();
    exitWithOutcome(Promise.reject(new Error('--attr "x": expected KEY=VALUE')), failing, out);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(failing.exitCode, 1);
    t.equal(failing.listenerCount('beforeExit'), 0);
    t.same(written, ['cert-csi: --attr "x": expected KEY=VALUE\n']);
  },
);

/** Runs `cert-csi ARGS` in this process: its exit status and what it printed. */
async function inProcess(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const captured = { stdout: '', stderr: '' };
  const proc = fakeProcess();
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  // No assertion while these are replaced: tap reports on stdout too.
  process.stdout.write = ((chunk: string | Uint8Array) => {
    captured.stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    captured.stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    const outcome = runCommand(args);
    exitWithOutcome(outcome, proc);
    await outcome.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  return { code: Number(proc.exitCode), ...captured };
}

t.test('help documents every flag with its default; bad commands and flags say why', async (t) => {
  const top = await inProcess(['--help']);
  t.equal(top.code, 0);
  t.equal(top.stdout, USAGE);
  const node = await inProcess(['node', '--help']);
  t.equal(node.code, 0);
  for (const flag of [
    '--endpoint',
    '--node-id',
    '--driver-name',
    '--data-root',
    '--state-dir',
    '--manifests',
    '--log-level',
  ]) {
    t.match(node.stdout, flag);
  }
  t.match(node.stdout, /default csi\.cert-manager\.io/);
  const unknown = await inProcess(['frobnicate']);
  t.equal(unknown.code, 2);
  t.equal(unknown.stderr, 'cert-csi: unknown command "frobnicate"\nsee cert-csi --help\n');
  const typo = await inProcess(['pubish']);
  t.equal(typo.code, 2);
  t.equal(
    typo.stderr,
    'cert-csi: unknown command "pubish" (did you mean publish?)\nsee cert-csi --help\n',
    'the nearest command, and where the help is: never the whole help',
  );
  const badFlag = await inProcess(['node', '--endpint', 'unix:///x']);
  t.equal(badFlag.code, 2);
  t.equal(
    badFlag.stderr,
    'cert-csi node: unknown flag --endpint (did you mean --endpoint?)\nsee cert-csi node --help\n',
  );
  const badLevel = await inProcess(['node', '--log-level', 'loud']);
  t.equal(badLevel.code, 1);
  t.equal(badLevel.stderr, 'cert-csi: --log-level: unknown level "loud"\n');
  const longLevel = await inProcess(['node', '--log-level', 'x'.repeat(5000)]);
  t.equal(longLevel.code, 1);
  t.equal(
    longLevel.stderr,
    `cert-csi: --log-level: unknown level "${'x'.repeat(100)}"…(5000 characters)\n`,
    'a long value is echoed shortened',
  );
});

t.test('a rejection that is not an Error is reported too', async (t) => {
  const proc = fakeProcess();
  const written: string[] = [];
  exitWithOutcome(Promise.reject('plain text'), proc, { write: (s: string) => written.push(s) });
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(proc.exitCode, 1);
  t.same(written, ['cert-csi: plain text\n']);
});

t.test('top-level help lists the commands only; each command has its own flags', async (t) => {
  t.notMatch(USAGE, /--endpoint|--data-root|--log-level/, 'no command flags in the overview');
  for (const command of ['node', 'controller', 'publish', 'unpublish', 'renew', 'status']) {
    t.match(USAGE, new RegExp(`^  ${command} `, 'm'));
  }
  const written: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  const codes: number[] = [];
  try {
    // No assertion in here: tap reports on stdout too.
    for (const args of [['--help'], ['publish', '--help'], ['unpublish', '--help']]) {
      codes.push(await runCommand(args));
    }
  } finally {
    process.stdout.write = write;
  }
  t.same(codes, [0, 0, 0]);
  t.equal(written[0], USAGE);
  t.match(
    written[1],
    /^ {2}--timeout DURATION +how long to wait for the answer, Go syntax \(default 2m\)$/m,
  );
  t.match(
    written[2],
    /^ {2}--timeout DURATION +how long to wait for the answer, Go syntax \(default 2m\)$/m,
  );
  t.match(written[2], /^ {2}--target DIR/m);
});
