import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { RENEW_DIR_NAME } from '../../src/volume-manager/control/renew-protocol.js';
import { runCli, startNode } from '../support/cli-process.js';
import { within } from '../support/eventually.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

// FIFOs named *.request in the renew dir took libuv's four threads (each
// blocking open of a FIFO without a writer parks one), and then nothing answered: publish,
// status (even with the plugin stopped), renew, SIGTERM. Here a real `cert-csi node` and the
// real CLI, with more FIFOs than threads, there before the start and made while it runs.

// Each CLI run includes a process start, slow on a busy machine: generous, and only there so
// that a hang fails its check instead of the whole file.
const CLI_DEADLINE_MS = 30_000;
const STOP_DEADLINE_MS = 20_000;

t.test('odd files in the renew dir: publish, status, renew and SIGTERM all answer', async (t) => {
  const dir = await tempDir(t, 'cert-csi-odd-renew-');
  const dataRoot = join(dir, 'volumes');
  const renewDir = join(dataRoot, RENEW_DIR_NAME);
  await mkdir(renewDir, { recursive: true, mode: 0o700 });
  const make = await oddFileMaker(t);
  const plant = async (prefix: string) => {
    // Six FIFOs (more than the thread pool has) and one of every other kind.
    for (const n of [1, 2, 3, 4, 5, 6])
      await make(join(renewDir, `${prefix}-fifo-${n}.request`), 'fifo');
    for (const kind of ODD_KINDS) {
      // A link's target is a valid request for every volume: following it would renew them.
      await make(join(renewDir, `${prefix}-${kind}.request`), kind, '{"all":true}');
    }
  };
  const planted = 6 + ODD_KINDS.length;
  await plant('early');

  // No plugin ever ran: status reads the files alone.
  const before = await runCli(['status', '--data-root', dataRoot], { timeoutMs: CLI_DEADLINE_MS });
  t.equal(before.code, 0, `status with no plugin answers: ${before.stderr}`);
  t.equal(before.stdout, `no volumes in ${dataRoot}\n`);
  const warned = before.stderr.split('\n').filter((l) => l.includes('renewal request skipped'));
  t.equal(warned.length, 6, 'five skipped files named, then a count');
  t.match(
    warned[0],
    /^cert-csi status: warning: renewal request skipped: file "\S+\.request" is not a regular file but a /,
  );
  t.equal(warned[5], `cert-csi status: warning: renewal request skipped: ${planted - 5} more`);

  const endpoint = `unix://${join(dir, 'csi.sock')}`;
  const node = await startNode([
    '--endpoint',
    endpoint,
    '--data-root',
    dataRoot,
    '--state-dir',
    join(dir, 'state'),
    '--mount-mode',
    'direct',
    '--node-id',
    'odd-renew',
  ]);
  let stopped = false;
  t.teardown(() => {
    if (!stopped) node.child.kill('SIGKILL');
  });
  await plant('late');

  const publish = await runCli(
    [
      'publish',
      '--endpoint',
      endpoint,
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
  t.match(status.stdout, /^csi-odd-1 /m);
  t.equal(renew.code, 0, `renew --all answers: ${renew.stderr}`);
  t.match(renew.stdout, /^renewed csi-odd-1: not after /m);
  t.equal(renew.stdout.split('\n').length, 2, 'no link was followed into a second request');

  // Every odd request was answered with why and taken away; a directory cannot be.
  const refused = node
    .output()
    .split('\n')
    .filter((l) => l.includes('"renewal request refused"'));
  t.equal(refused.length, 2 * planted, 'one warning per odd entry');
  t.same((await readdir(renewDir)).filter((n) => n.endsWith('.request')).sort(), [
    'early-directory.request',
    'late-directory.request',
  ]);

  const stopping = Date.now();
  const code = await within(STOP_DEADLINE_MS, node.stop());
  stopped = code !== 'timed out';
  t.equal(code, 0, `SIGTERM stops the plugin (${Date.now() - stopping} ms)`);

  // Stopped, with new odd files: status still answers.
  await plant('after');
  const after = await runCli(['status', '--data-root', dataRoot], { timeoutMs: CLI_DEADLINE_MS });
  t.equal(after.code, 0, `status with the plugin stopped answers: ${after.stderr}`);
  t.match(after.stdout, /^csi-odd-1 /m);
  t.match(
    after.stderr,
    /renewal request skipped: file "\S+after-\S+\.request" is not a regular file/,
  );
});
