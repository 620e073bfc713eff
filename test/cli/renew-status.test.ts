import { readdir, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join, relative } from 'node:path';
import t, { type Test } from 'tap';
import { runRenew } from '../../src/cli/renew/renew-command.js';
import { runStatus } from '../../src/cli/status/status-command.js';
import { formatTable } from '../../src/cli/status/volumes-table.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { readMetadata, writeMetadata } from '../../src/volume/metadata.js';
import type { ControlHandlers } from '../../src/volume-manager/control/control-connection.js';
import {
  CONTROL_SOCKET_NAME,
  controlSocketOf,
  type RenewOutcome,
  type RenewTarget,
} from '../../src/volume-manager/control/control-protocol.js';
import {
  type ControlServer,
  serveControl,
} from '../../src/volume-manager/control/control-server.js';
import type { VolumeStatus } from '../../src/volume-manager/control/volume-status.js';
import { runCli, startCommand } from '../support/cli-process.js';
import { until, within } from '../support/eventually.js';
import { runInProcess } from '../support/in-process-command.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';
import {
  heldIssuance,
  manage,
  managerControlHandlers,
  testParts,
} from '../volume-manager/parts-fixture.js';
import { makeVolume } from '../volume-manager/renew-fixtures.js';

// Child processes start slowly on a busy 2-core machine; the in-process cases stay fast.
t.setTimeout(300_000);

const DAY_MS = 24 * 3600 * 1000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t, 'cert-csi-renew-'), 'volumes'));
  await root.ensure();
  return root;
}

/** Runs the plugin's side in this process with handle standing in for the volume manager. */
async function plugin(
  t: Test,
  root: DataRoot,
  handle: ControlHandlers['renew'],
): Promise<ControlServer> {
  const server = await serveControl(
    root,
    { renew: handle, unsavedFailures: () => [], renewalsAsked: () => [] },
    recordingLogger(),
  );
  t.teardown(() => server.close());
  return server;
}

/** A plugin of the test's making at the data root's socket: answer gets each connection. */
async function fakePlugin(t: Test, root: DataRoot, answer: (socket: Socket) => void) {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    answer(socket);
  });
  await new Promise<void>((resolve) => server.listen(controlSocketOf(root), resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
}

/** What `renew` says when no plugin listens at the data root, and why. */
const noPlugin = (root: DataRoot, why: string) =>
  `cert-csi renew: no plugin answers at ${controlSocketOf(root)} (${why}): is cert-csi node running with --data-root ${root.root}?\nsee cert-csi renew --help\n`;

/** Like the manager: issue again whatever the renewal time, save the new times, report them. */
function renewer(root: DataRoot, id: string) {
  const renewedAt: number[] = [];
  const handle = async (target: RenewTarget): Promise<RenewOutcome> => {
    if (!('volumeId' in target) || target.volumeId !== id) throw new Error('unexpected target');
    const meta = await readMetadata(root, id);
    meta.notAfter = inDays(120);
    meta.nextIssuanceTime = inDays(80);
    await writeMetadata(root, meta);
    renewedAt.push(Date.now());
    return {
      renewed: [{ volumeId: id, notAfter: meta.notAfter, nextIssuanceTime: meta.nextIssuanceTime }],
      failed: [],
    };
  };
  return { renewedAt, handle };
}

t.test(
  'from a child process: renew, failure, timeout, no plugin, bad flags, status --json',
  async (t) => {
    const id = 'csi-0123';
    const good = await dataRoot(t);
    await makeVolume(good, id, { notAfter: inDays(90), nextIssuanceTime: inDays(60) });
    const { renewedAt, handle } = renewer(good, id);
    await plugin(t, good, handle);
    const failing = await dataRoot(t);
    await plugin(t, failing, async () => ({
      renewed: [{ volumeId: 'csi-a', notAfter: '2030-01-01T00:00:00.000Z' }],
      failed: [{ volumeId: 'csi-b', error: 'issuer embedded-ca not ready' }],
    }));
    // A plugin that takes connections and never answers.
    const silent = await dataRoot(t);
    await fakePlugin(t, silent, () => undefined);
    const idle = await dataRoot(t);

    // Spawned together: each child starts slowly, and they do not share a data root.
    const [renew, failed, timedOut, none, badFlags, help] = await Promise.all([
      runCli(['renew', '--data-root', good.root, '--volume-id', id]),
      runCli(['renew', '--data-root', failing.root, '--all']),
      runCli(['renew', '--data-root', silent.root, '--volume-id', 'csi-a', '--timeout', '1s']),
      runCli(['renew', '--data-root', idle.root, '--volume-id', 'csi-a']),
      runCli(['renew', '--data-root', good.root]),
      runCli(['--help']),
    ]);

    t.equal(renew.code, 0, renew.stderr);
    t.match(
      renew.stdout,
      new RegExp(`^renewed ${id}: not after \\S+Z, next renewal \\S+Z\\n$`),
      'one line for the volume',
    );
    t.equal(renewedAt.length, 1, 'renewed once');
    t.same(
      (await readdir(good.root)).sort(),
      [CONTROL_SOCKET_NAME, id],
      'nothing written but the renewal',
    );
    const meta = await readMetadata(good, id);
    t.ok(renew.stdout.includes(meta.notAfter ?? '?'), 'renew printed the new not-after');

    t.equal(failed.code, 1, 'a failed volume exits 1');
    t.equal(
      failed.stdout,
      'renewed csi-a: not after 2030-01-01T00:00:00.000Z\nfailed csi-b: issuer embedded-ca not ready\n',
    );

    t.equal(timedOut.code, 1, 'no answer: exit 1');
    t.equal(
      timedOut.stderr,
      `no answer from the plugin within 1s: is cert-csi node running with --data-root ${silent.root}?\nsee cert-csi renew --help\n`,
    );

    t.equal(none.code, 1, 'no plugin: exit 1, without waiting for --timeout');
    t.equal(none.stderr, noPlugin(idle, 'no socket there'));
    t.same(await readdir(idle.root), [], 'nothing written');

    t.equal(badFlags.code, 2);
    t.match(badFlags.stderr, /give either --volume-id ID or --all/);

    t.match(help.stdout, /renew +make a running plugin renew/);
    t.match(help.stdout, /status +list this node's volumes/);

    const status = await runCli(['status', '--data-root', good.root, '--json']);
    t.equal(status.code, 0, status.stderr);
    const rows = JSON.parse(status.stdout) as VolumeStatus[];
    t.match(rows, [{ volumeId: id, state: 'ok', notAfter: meta.notAfter, renewalPending: false }]);
  },
);

t.test('renew: the new certificate is reported well within 2 s', async (t) => {
  const root = await dataRoot(t);
  const id = 'csi-fast';
  await makeVolume(root, id, { notAfter: inDays(90), nextIssuanceTime: inDays(60) });
  const { renewedAt, handle } = renewer(root, id);
  await plugin(t, root, handle);
  const started = Date.now();
  const renew = await runInProcess(runRenew, ['--data-root', root.root, '--volume-id', id]);
  const elapsed = Date.now() - started;
  t.equal(renew.code, 0, renew.stderr);
  t.ok(elapsed < 2000, `answered in ${elapsed} ms`);
  t.equal(renewedAt.length, 1);
  const status = await runInProcess(runStatus, ['--data-root', root.root, '--json']);
  const [row] = JSON.parse(status.stdout) as VolumeStatus[];
  t.equal(row?.notAfter, (await readMetadata(root, id)).notAfter, 'status --json shows it');
});

t.test('renew --all prints each volume as soon as it is done', async (t) => {
  const root = await dataRoot(t);
  let stdout = '';
  let releaseLast: () => void = () => {};
  const lastMayFinish = new Promise<void>((resolve) => {
    releaseLast = resolve;
  });
  let seenBeforeTheEnd = false;
  const server = await plugin(t, root, async (_target, progress) => {
    const outcome: RenewOutcome = { renewed: [], failed: [] };
    outcome.renewed.push({ volumeId: 'csi-fast', notAfter: '2030-01-01T00:00:00.000Z' });
    progress(outcome);
    outcome.failed.push({ volumeId: 'csi-broken', error: 'issuer not ready' });
    progress(outcome);
    // The last volume stays busy until the command has shown the first two, or 20 s passed.
    try {
      await until(() => stdout.includes('failed csi-broken'), { timeoutMs: 20_000 });
      seenBeforeTheEnd = true;
    } catch {
      // The command printed nothing yet: the assertion below says so.
    }
    releaseLast();
    await lastMayFinish;
    outcome.renewed.push({ volumeId: 'csi-slow', notAfter: '2030-02-01T00:00:00.000Z' });
    return outcome;
  });
  const code = await runRenew(['--data-root', root.root, '--all'], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
  });
  t.ok(seenBeforeTheEnd, 'the finished volumes were printed while the last one was renewing');
  t.equal(code, 1, 'one failed');
  t.equal(
    stdout,
    [
      'renewed csi-fast: not after 2030-01-01T00:00:00.000Z',
      'failed csi-broken: issuer not ready',
      'renewed csi-slow: not after 2030-02-01T00:00:00.000Z',
      '',
    ].join('\n'),
    'each volume once',
  );
  await until(() => server.connections === 0, { what: 'the connection to be closed' });
  t.same(await readdir(root.root), [CONTROL_SOCKET_NAME], 'nothing written');
});

t.test('two renew commands at once are each answered', async (t) => {
  const root = await dataRoot(t);
  const targets: RenewTarget[] = [];
  let bothTaken: () => void = () => {};
  const taken = new Promise<void>((resolve) => {
    bothTaken = resolve;
  });
  await plugin(t, root, async (target) => {
    targets.push(target);
    if (targets.length === 2) bothTaken();
    // Each waits for the other: both are served at the same time.
    await taken;
    const id = 'volumeId' in target ? target.volumeId : 'csi-all';
    return { renewed: [{ volumeId: id, notAfter: '2030-01-01T00:00:00.000Z' }], failed: [] };
  });
  const [one, all] = await Promise.all([
    runInProcess(runRenew, ['--data-root', root.root, '--volume-id', 'csi-one']),
    runInProcess(runRenew, ['--data-root', root.root, '--all']),
  ]);
  t.same([one.code, one.stdout], [0, 'renewed csi-one: not after 2030-01-01T00:00:00.000Z\n']);
  t.same([all.code, all.stdout], [0, 'renewed csi-all: not after 2030-01-01T00:00:00.000Z\n']);
});

t.test('a renew command killed mid-renewal leaves nothing behind', async (t) => {
  const root = await dataRoot(t);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let finished = false;
  const server = await plugin(t, root, async (_target, progress) => {
    const outcome: RenewOutcome = { renewed: [], failed: [] };
    outcome.renewed.push({ volumeId: 'csi-first', notAfter: '2030-01-01T00:00:00.000Z' });
    progress(outcome);
    await held;
    outcome.renewed.push({ volumeId: 'csi-second', notAfter: '2030-01-01T00:00:00.000Z' });
    progress(outcome);
    finished = true;
    return outcome;
  });
  const renew = await startCommand(
    ['renew', '--data-root', root.root, '--all'],
    'renewed csi-first',
  );
  const exited = new Promise((resolve) => renew.child.once('exit', resolve));
  renew.child.kill('SIGKILL');
  await exited;
  await until(() => server.connections === 0, { what: 'the connection released' });
  release();
  await until(() => finished, { what: 'the renewal to finish' });
  t.same(await readdir(root.root), [CONTROL_SOCKET_NAME], 'nothing left in the data root');
  const again = await runInProcess(runRenew, ['--data-root', root.root, '--all']);
  t.equal(again.code, 0, 'the next command is served');
});

t.test('renew --all with no volumes says so and succeeds', async (t) => {
  const root = await dataRoot(t);
  await plugin(t, root, async () => ({ renewed: [], failed: [] }));
  const renew = await runInProcess(runRenew, ['--data-root', root.root, '--all']);
  t.equal(renew.code, 0);
  t.equal(renew.stdout, 'no volumes to renew\n');
});

t.test('an unknown volume id is refused by the plugin: exit 1 with its message', async (t) => {
  const root = await dataRoot(t);
  await plugin(t, root, async () => {
    throw new Error('unknown volume id "csi-nope"');
  });
  const renew = await runInProcess(runRenew, ['--data-root', root.root, '--volume-id', 'csi-nope']);
  t.equal(renew.code, 1);
  t.match(renew.stderr, /cert-csi renew: unknown volume id "csi-nope"/);
});

t.test('an answer that cannot be parsed exits 1', async (t) => {
  const root = await dataRoot(t);
  // A plugin of another version: it answers with something this CLI does not understand.
  await fakePlugin(t, root, (socket) => socket.end('{"type":"accepted"}\n{"ok":"maybe"}\n'));
  const renew = await runInProcess(runRenew, ['--data-root', root.root, '--all']);
  t.equal(renew.code, 1);
  t.equal(
    renew.stderr,
    'cert-csi renew: unreadable answer from the plugin: type missing or not a string: not an answer\nsee cert-csi renew --help\n',
  );
});

t.test('a plugin that stops before its answer is complete exits 1', async (t) => {
  const root = await dataRoot(t);
  await fakePlugin(t, root, (socket) =>
    socket.end('{"type":"accepted"}\n{"type":"renewed","volumeId":"csi-a","notAfter":"x"}\n'),
  );
  const renew = await runInProcess(runRenew, ['--data-root', root.root, '--all']);
  t.equal(renew.code, 1);
  t.equal(renew.stdout, 'renewed csi-a: not after x\n', 'what came is printed');
  t.equal(
    renew.stderr,
    'cert-csi renew: no complete answer from the plugin (the plugin closed the connection before its answer was complete); the renewal may still complete (see cert-csi status)\nsee cert-csi renew --help\n',
  );
});

t.test('a plugin that takes the request but answers too late', async (t) => {
  const root = await dataRoot(t);
  let release = () => {};
  const slow = new Promise<void>((resolve) => {
    release = resolve;
  });
  let taken = false;
  let finished = false;
  const server = await plugin(t, root, async () => {
    taken = true;
    await slow;
    finished = true;
    return { renewed: [], failed: [] };
  });
  const renew = await runInProcess(runRenew, [
    '--data-root',
    root.root,
    '--all',
    '--timeout',
    '2s',
  ]);
  t.ok(taken, 'the plugin took the request');
  t.equal(renew.code, 1);
  t.match(renew.stderr, /the plugin took the request but did not answer within 2s/);
  // The command is gone: the renewal finishes all the same, and its answer goes nowhere.
  await until(() => server.connections === 0, { what: 'the connection released' });
  release();
  await until(() => finished, { what: 'the renewal to finish' });
  t.same(await readdir(root.root), [CONTROL_SOCKET_NAME], 'nothing left in the data root');
});

t.test(
  'something at the socket name that is no listening socket is an error, not a wait',
  async (t) => {
    const make = await oddFileMaker(t);
    const what = {
      fifo: 'a FIFO is there, not a socket',
      'link-to-fifo': 'a symbolic link is there, not a socket',
      // What a killed plugin leaves.
      socket: 'nothing listens on the socket (left by a plugin that stopped)',
      directory: 'a directory is there, not a socket',
      'link-to-file': 'a symbolic link is there, not a socket',
    } as const;
    for (const kind of ODD_KINDS) {
      const root = await dataRoot(t);
      // A link's target is a well-formed answer: only following the link would take it.
      await make(controlSocketOf(root), kind, '{"type":"accepted"}\n{"type":"done"}\n');
      const renew = await within(
        30_000,
        runInProcess(runRenew, ['--data-root', root.root, '--all', '--timeout', '10m']),
      );
      t.not(renew, 'timed out', `${kind}: answered at once`);
      if (renew === 'timed out') continue;
      t.equal(renew.code, 1, kind);
      t.equal(renew.stderr, noPlugin(root, what[kind]), kind);
    }
    const root = await dataRoot(t);
    await writeFile(controlSocketOf(root), '{"type":"done"}\n');
    const file = await runInProcess(runRenew, ['--data-root', root.root, '--all']);
    t.equal(file.stderr, noPlugin(root, 'a regular file is there, not a socket'));
  },
);

t.test('renew flag errors exit 2 with a clear message', async (t) => {
  const root = await dataRoot(t);
  const r = root.root;
  const cases: Array<[string[], RegExp]> = [
    [['--data-root', r], /give either --volume-id ID or --all/],
    [['--data-root', r, '--all', '--volume-id', 'csi-a'], /give either --volume-id ID or --all/],
    [['--all'], /--data-root is required/],
    [['--data-root', r, '--volume-id', '../x'], /invalid volume id/],
    [['--data-root', r, '--all', '--timeout', 'soon'], /--timeout: time: invalid duration "soon"/],
    [['--data-root', r, '--all', '--timeout', '0s'], /--timeout: must be positive/],
    [['--data-root', r, '--all', '--timeout', '600h'], /at most 596h/],
    [['--data-root', r, '--all', '--frob'], /unknown flag --frob/],
    [
      ['--data-root', join(r, 'absent'), '--all'],
      /data root \S+absent does not exist or is not a directory: is cert-csi node running/,
    ],
  ];
  for (const [args, message] of cases) {
    const result = await runInProcess(runRenew, args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.stderr, message, args.join(' '));
    t.match(
      result.stderr,
      /^cert-csi renew: [^\n]+\nsee cert-csi renew --help\n$/,
      'one line, then where the help is',
    );
  }
});

t.test('help: renew and status document their flags', async (t) => {
  const renew = await runInProcess(runRenew, ['--help']);
  t.equal(renew.code, 0);
  for (const flag of ['--data-root', '--volume-id', '--all', '--timeout', 'default 2m']) {
    t.match(renew.stdout, flag);
  }
  const status = await runInProcess(runStatus, ['-h']);
  t.equal(status.code, 0);
  for (const flag of ['--data-root', '--json', 'corrupt', '--watch', '--requests', '--namespace'])
    t.match(status.stdout, flag);
});

t.test('status: a table of every volume, from the files alone', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-a', { notAfter: inDays(90), nextIssuanceTime: inDays(60) });
  await makeVolume(root, 'csi-b', {
    failures: 2,
    lastError: { message: `issuer not ready: ${'x'.repeat(100)}`, time: inDays(0) },
  });
  await root.ensureVolume('csi-c');
  await writeFile(join(root.volumeDir('csi-c'), 'metadata.json.corrupt-20260101'), '{');
  const status = await runInProcess(runStatus, ['--data-root', root.root]);
  t.equal(status.code, 0, status.stderr);
  const lines = status.stdout.trimEnd().split('\n');
  t.match(lines[0], /^VOLUME +POD +ISSUER +STATE +NOT AFTER +NEXT RENEWAL +LAST ERROR$/);
  t.match(lines[1], /^csi-a +shop\/web-0 +ClusterIssuer\/embedded-ca +ok +\S+Z +\S+Z +-$/);
  t.match(lines[2], /^csi-b .* failing +- +- +issuer not ready: x+…$/, 'failing implies a retry');
  t.ok((lines[2]?.split('issuer not ready')[1]?.length ?? 0) < 60, 'the error is truncated');
  t.match(lines[3], /^csi-c +- +- +corrupt +- +- +metadata\.json\.corrupt-20260101$/);

  const json = await runInProcess(runStatus, ['--data-root', root.root, '--json']);
  const rows = JSON.parse(json.stdout) as VolumeStatus[];
  t.same(
    rows.map((r) => [r.volumeId, r.state]),
    [
      ['csi-a', 'ok'],
      ['csi-b', 'failing'],
      ['csi-c', 'corrupt'],
    ],
  );
  t.equal(rows[1]?.lastError?.message.length, 'issuer not ready: '.length + 100, 'JSON is whole');

  // --volume-id: the one volume a timed-out publish names (cert-csi publish says to look here).
  const one = await runInProcess(runStatus, ['--data-root', root.root, '--volume-id', 'csi-b']);
  t.equal(one.code, 0, one.stderr);
  t.same(
    one.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split(' ')[0]),
    ['VOLUME', 'csi-b'],
    'that volume only',
  );
  const none = await runInProcess(runStatus, ['--data-root', root.root, '--volume-id', 'csi-z']);
  t.equal(none.stdout, `no volumes in ${root.root}\n`);
  const wrongForm = await runInProcess(runStatus, ['--requests', '--volume-id', 'csi-b']);
  t.equal(wrongForm.code, 2);
  t.equal(
    wrongForm.stderr,
    'cert-csi status: --volume-id: only used with --data-root\nsee cert-csi status --help\n',
  );
});

t.test(
  'status: a volume whose cert-csi renew is not finished is pending, until it is',
  async (t) => {
    // The plugin's side as the node plugin wires it, over the manager's manual renewal; each
    // issuance waits for the test.
    const issuance = heldIssuance();
    const { parts } = await testParts(t, issuance.issue);
    const root = parts.dataRoot;
    await makeVolume(root, 'csi-a', { notAfter: inDays(90), nextIssuanceTime: inDays(60) });
    await makeVolume(root, 'csi-b', { notAfter: inDays(90), nextIssuanceTime: inDays(60) });
    await makeVolume(root, 'csi-x', { notAfter: inDays(-1) });
    for (const id of ['csi-a', 'csi-b', 'csi-x']) await manage(parts, id);
    const server = await serveControl(root, managerControlHandlers(parts), recordingLogger());
    t.teardown(() => server.close());
    const states = async () => {
      const table = await runInProcess(runStatus, ['--data-root', root.root]);
      t.equal(table.code, 0, table.stderr);
      return table.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(/ {2,}/).slice(0, 4).join(' '));
    };

    const renews = [
      runInProcess(runRenew, ['--data-root', root.root, '--volume-id', 'csi-a']),
      runInProcess(runRenew, ['--data-root', root.root, '--volume-id', 'csi-x']),
    ];
    await until(() => issuance.held().length === 2, { what: 'both renewals issuing' });
    t.same(
      await states(),
      [
        'csi-a shop/web-0 ClusterIssuer/embedded-ca pending',
        'csi-b shop/web-0 ClusterIssuer/embedded-ca ok',
        'csi-x shop/web-0 ClusterIssuer/embedded-ca expired+pending',
      ],
      'the table: pending, or the state with +pending',
    );
    const json = await runInProcess(runStatus, ['--data-root', root.root, '--json']);
    t.same(
      (JSON.parse(json.stdout) as VolumeStatus[]).map((r) => [
        r.volumeId,
        r.state,
        r.renewalPending,
      ]),
      [
        ['csi-a', 'pending', true],
        ['csi-b', 'ok', false],
        ['csi-x', 'expired', true],
      ],
      '--json: renewalPending',
    );

    issuance.release('csi-a');
    issuance.release('csi-x');
    for (const renew of await Promise.all(renews)) {
      t.equal(renew.code, 0, renew.stderr);
      t.match(renew.stdout, /^renewed csi-[ax]: not after \S+Z, next renewal \S+Z\n$/);
    }
    // The stand-in issuance writes no files: csi-x is still expired, no longer pending.
    t.same(
      await states(),
      [
        'csi-a shop/web-0 ClusterIssuer/embedded-ca ok',
        'csi-b shop/web-0 ClusterIssuer/embedded-ca ok',
        'csi-x shop/web-0 ClusterIssuer/embedded-ca expired',
      ],
      'nothing pending once the renewals are done',
    );
  },
);

t.test('status: empty and missing data roots, bad flags', async (t) => {
  const root = await dataRoot(t);
  const empty = await runInProcess(runStatus, ['--data-root', root.root]);
  t.equal(empty.code, 0);
  t.equal(empty.stdout, `no volumes in ${root.root}\n`);
  const relativeRoot = await runInProcess(runStatus, [
    '--data-root',
    relative(process.cwd(), root.root),
  ]);
  t.equal(relativeRoot.stdout, `no volumes in ${root.root}\n`, 'a relative root is resolved');
  const emptyJson = await runInProcess(runStatus, ['--data-root', root.root, '--json']);
  t.equal(emptyJson.stdout, '[]\n');
  const missing = await runInProcess(runStatus, ['--data-root', join(root.root, 'absent')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /does not exist or is not a directory/);
  const noFlag = await runInProcess(runStatus, []);
  t.equal(noFlag.code, 2);
  t.match(noFlag.stderr, /--data-root is required/);
  const unknown = await runInProcess(runStatus, ['--data-root', root.root, '--verbose']);
  t.equal(unknown.code, 2);
  t.equal(unknown.stderr, 'cert-csi status: unknown flag --verbose\nsee cert-csi status --help\n');
});

t.test('status: no cell grows past its column width, however long the value', (t) => {
  const kubeletId = `csi-${'a'.repeat(64)}`;
  const table = formatTable([
    {
      volumeId: kubeletId,
      state: 'failing',
      renewalPending: false,
      pod: { namespace: 'n'.repeat(63), name: 'p'.repeat(253) },
      issuer: { name: 'i'.repeat(5000), kind: 'ClusterIssuer', group: 'cert-manager.io' },
      notAfter: `not a time ${'t'.repeat(1000)}`,
      lastError: { message: `🔑${'e'.repeat(5000)}`, time: '2026-01-01T00:00:00Z' },
    },
  ]);
  const row = table.split('\n')[1] ?? '';
  t.ok(row.length < 400, `one short row (${row.length} characters)`);
  t.match(row, new RegExp(`^${kubeletId} `), "kubelet's volume ids stay whole");
  t.match(row, / n{47}… /, 'the pod is shortened with a marker');
  t.match(row, / ClusterIssuer\/i{33}… /, 'so is the issuer');
  t.match(row, / not a time t{12}… /, 'and an unparsable time');
  t.match(row, / 🔑e{58}…$/u, 'the last error too, without splitting a character');
  t.end();
});

t.test('status table cells', (t) => {
  const table = formatTable([
    {
      volumeId: 'csi-x',
      state: 'expired',
      renewalPending: true,
      issuer: { name: 'pca', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' },
      notAfter: 'sometime',
      detail: 'line one\n  line two',
    },
  ]);
  t.match(table, /csi-x +- +AWSPCAIssuer\.awspca\.cert-manager\.io\/pca +expired\+pending/);
  t.match(table, / sometime +- +line one line two\n$/);
  t.notOk(
    table.split('\n').some((l) => l.endsWith(' ')),
    'no trailing spaces',
  );
  t.end();
});
