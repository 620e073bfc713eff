import { lstat, mkdir, readdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { CONTROL_SOCKET_NAME } from '../../src/volume-manager/control/control-protocol.js';
import {
  LEGACY_RENEW_DIR_NAME,
  LEGACY_STATUS_SOCKET_NAME,
} from '../../src/volume-manager/control/legacy-control-files.js';
import { runCli, startNode } from '../support/cli-process.js';
import { rejectionMessage, within } from '../support/eventually.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

// FIFOs named *.request in the renew dir took libuv's four threads (each
// blocking open of a FIFO without a writer parks one), and then nothing answered: publish,
// status (even with the plugin stopped), renew, SIGTERM. The renew dir is gone (one control
// socket serves renew and status); here a real `cert-csi node` and the real CLI with odd files
// where the channel lives: the renew dir an older version left (more FIFOs than threads), the
// old status socket's name, the control socket's name, and beside the volumes.

// Each CLI run includes a process start, slow on a busy machine: generous, and only there so
// that a hang fails its check instead of the whole file.
const CLI_DEADLINE_MS = 30_000;
const STOP_DEADLINE_MS = 20_000;

t.test('odd files in the data root: publish, status, renew and SIGTERM all answer', async (t) => {
  const dir = await tempDir(t, 'cert-csi-odd-renew-');
  const dataRoot = join(dir, 'volumes');
  const renewDir = join(dataRoot, LEGACY_RENEW_DIR_NAME);
  const controlSocket = join(dataRoot, CONTROL_SOCKET_NAME);
  await mkdir(renewDir, { recursive: true, mode: 0o700 });
  const make = await oddFileMaker(t);
  // Six FIFOs (more than the thread pool has) and one of every other kind; a link's target is
  // a request for every volume, which following it would renew.
  for (const n of [1, 2, 3, 4, 5, 6]) await make(join(renewDir, `fifo-${n}.request`), 'fifo');
  for (const kind of ODD_KINDS) {
    await make(join(renewDir, `${kind}.request`), kind, '{"all":true}');
  }
  await make(join(dataRoot, LEGACY_STATUS_SOCKET_NAME), 'fifo');
  await make(controlSocket, 'fifo');

  // No plugin ever ran: status reads the files alone, and opens none of those.
  const before = await runCli(['status', '--data-root', dataRoot], { timeoutMs: CLI_DEADLINE_MS });
  t.equal(before.code, 0, `status with no plugin answers: ${before.stderr}`);
  t.equal(before.stdout, `no volumes in ${dataRoot}\n`);
  t.equal(before.stderr, '', 'nothing to skip: the old renew dir is not read');

  const args = [
    '--endpoint',
    `unix://${join(dir, 'csi.sock')}`,
    '--data-root',
    dataRoot,
    '--state-dir',
    join(dir, 'state'),
    '--mount-mode',
    'direct',
    '--node-id',
    'odd-renew',
  ];
  // A FIFO at the control socket's name: the plugin says so and stops, it does not hang.
  const refused = await rejectionMessage(startNode(args));
  t.match(
    refused,
    `${controlSocket} is a FIFO, not a socket: cert-csi renew and status are served there; remove it`,
  );
  t.ok((await lstat(controlSocket)).isFIFO(), 'left as it is');
  await rm(controlSocket);

  const node = await startNode(args);
  let stopped = false;
  t.teardown(() => {
    if (!stopped) node.child.kill('SIGKILL');
  });
  // Beside the volumes, while it runs: none is a volume dir.
  await make(join(dataRoot, 'csi-fifo'), 'fifo');
  await symlink(dir, join(dataRoot, 'csi-link'));

  const publish = await runCli(
    [
      'publish',
      '--endpoint',
      `unix://${join(dir, 'csi.sock')}`,
      '--volume-id',
      'csi-odd-1',
      '--target',
      join(dir, 'target'),
      '--attr',
      'issuer-name=embedded-ca',
      '--attr',
      'issuer-kind=ClusterIssuer',
    ],
    { timeoutMs: CLI_DEADLINE_MS },
  );
  t.equal(publish.code, 0, `publish over the gRPC socket answers: ${publish.stderr}`);
  t.match(publish.stdout, /^not after: +\d{4}-/m);

  const [status, renew] = await Promise.all([
    runCli(['status', '--data-root', dataRoot], { timeoutMs: CLI_DEADLINE_MS }),
    runCli(['renew', '--data-root', dataRoot, '--all'], { timeoutMs: CLI_DEADLINE_MS }),
  ]);
  t.equal(status.code, 0, `status with the plugin running answers: ${status.stderr}`);
  t.equal(status.stdout.split('\n').filter((l) => l.startsWith('csi-')).length, 1, status.stdout);
  t.match(status.stdout, /^csi-odd-1 /m);
  t.equal(renew.code, 0, `renew --all answers: ${renew.stderr}`);
  t.equal(
    renew.stdout.split('\n').filter((l) => l !== '').length,
    1,
    'one volume renewed: no link was followed into a second request',
  );
  t.match(renew.stdout, /^renewed csi-odd-1: not after /m);

  // The old renew dir is emptied of what an older version could have made; a directory is not
  // that, so it and the dir stay. The FIFO at the old socket's name is no socket: left.
  t.same(await readdir(renewDir), ['directory.request']);
  t.ok((await lstat(join(dataRoot, LEGACY_STATUS_SOCKET_NAME))).isFIFO());
  const log = node.output();
  t.match(log, '"cannot remove the renew request dir of an older version; nothing uses it"');
  t.match(log, '"not the status socket of an older version: left as it is"');

  const stopping = Date.now();
  const code = await within(STOP_DEADLINE_MS, node.stop());
  stopped = code !== 'timed out';
  t.equal(code, 0, `SIGTERM stops the plugin (${Date.now() - stopping} ms)`);
  await t.rejects(lstat(controlSocket), { code: 'ENOENT' }, 'the socket went with it');

  // Stopped, with a FIFO at the socket's name: status answers from the files, renew at once.
  await make(controlSocket, 'fifo');
  const [after, renewAfter] = await Promise.all([
    runCli(['status', '--data-root', dataRoot], { timeoutMs: CLI_DEADLINE_MS }),
    runCli(['renew', '--data-root', dataRoot, '--all', '--timeout', '10m'], {
      timeoutMs: CLI_DEADLINE_MS,
    }),
  ]);
  t.equal(after.code, 0, `status with the plugin stopped answers: ${after.stderr}`);
  t.match(after.stdout, /^csi-odd-1 /m);
  t.equal(renewAfter.code, 1, 'renew with the plugin stopped fails at once');
  t.equal(
    renewAfter.stderr,
    `cert-csi renew: no plugin answers at ${controlSocket} (a FIFO is there, not a socket): is cert-csi node running with --data-root ${dataRoot}?\nsee cert-csi renew --help\n`,
  );
});
