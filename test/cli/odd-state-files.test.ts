import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { VolumeStatus } from '../../src/volume-manager/control/volume-status.js';
import { runCli, startNode } from '../support/cli-process.js';
import { rejectionMessage, within } from '../support/eventually.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';
import { nodeArgs as embeddedNodeArgs } from './embedded-node-args.js';

// Beyond the renew dir: FIFOs, links, sockets and directories where the
// plugin and the CLI read a file of their own (metadata.json, pending.key, the state dir's
// objects and counter) or the operator's (--manifests). Start-up and status answer and say what
// they skipped; nothing is followed out of its dir.

// Each CLI run includes a process start, slow on a busy machine: generous, and only there so
// that a hang fails its check instead of the whole file.
const CLI_DEADLINE_MS = 30_000;
const STOP_DEADLINE_MS = 20_000;

// The two tests share nothing (a dir each): the refused start runs beside the long one.
t.jobs = 2;

t.test(
  'odd files as metadata.json, pending.key and state files: start-up and status answer',
  async (t) => {
    // On tmpfs, as the data root in bind mode: files there are read with synchronous calls,
    // where a blocking open would stop the whole process, not one thread.
    const base = await tmpfsBase();
    const dir = await tempDir(t, 'cert-csi-odd-state-', base);
    const dataRoot = join(dir, 'volumes');
    const stateDir = join(dir, 'state');
    const endpoint = `unix://${join(dir, 'csi.sock')}`;
    const nodeArgs = (extra: string[] = []) => [
      '--endpoint',
      endpoint,
      '--data-root',
      dataRoot,
      '--state-dir',
      stateDir,
      '--mount-mode',
      'direct',
      '--node-id',
      'odd-state',
      ...extra,
    ];
    const publish = (volumeId: string) =>
      runCli(
        [
          'publish',
          '--endpoint',
          endpoint,
          '--volume-id',
          volumeId,
          '--target',
          join(dir, 'targets', volumeId),
          '--attr',
          'issuer-name=embedded-ca',
          '--attr',
          'issuer-kind=ClusterIssuer',
        ],
        { timeoutMs: CLI_DEADLINE_MS },
      );
    const statusRows = async () => {
      const status = await runCli(['status', '--data-root', dataRoot, '--json'], {
        timeoutMs: CLI_DEADLINE_MS,
      });
      t.equal(status.code, 0, `status answers: ${status.stderr}`);
      return new Map(
        (JSON.parse(status.stdout || '[]') as VolumeStatus[]).map((r) => [r.volumeId, r]),
      );
    };

    const first = await startNode(nodeArgs());
    const published = await publish('csi-keep');
    t.equal(published.code, 0, published.stderr);
    t.equal(await within(STOP_DEADLINE_MS, first.stop()), 0, 'the first run stops');

    // Planted while the plugin is down.
    const make = await oddFileMaker(t, base);
    const keptMeta = JSON.parse(
      await readFile(join(dataRoot, 'csi-keep', 'metadata.json'), 'utf8'),
    );
    for (const kind of ODD_KINDS) {
      const id = `csi-odd-${kind}`;
      await mkdir(join(dataRoot, id, 'data'), { recursive: true });
      // A link's target is a valid record of that volume: following the link would manage it.
      await make(
        join(dataRoot, id, 'metadata.json'),
        kind,
        JSON.stringify({ ...keptMeta, volumeId: id }),
      );
    }
    // A request in flight whose key is a FIFO: resumed at start, asked again with a new key.
    const namespace = keptMeta.volumeContext['csi.storage.k8s.io/pod.namespace'];
    const pendingRequest = { name: 'gone', namespace, createdAt: new Date().toISOString() };
    await writeFile(
      join(dataRoot, 'csi-keep', 'metadata.json'),
      JSON.stringify({ ...keptMeta, pendingRequest }),
    );
    await make(join(dataRoot, 'csi-keep', 'pending.key'), 'fifo');
    const issuers = join(stateDir, 'cert-manager.io', 'clusterissuers', '_cluster');
    for (const kind of ODD_KINDS) await make(join(issuers, `odd-${kind}.json`), kind, '{}');
    await rm(join(stateDir, 'resource-version'), { force: true });
    await make(join(stateDir, 'resource-version'), 'fifo');

    const stopped = await statusRows();
    for (const kind of ODD_KINDS) {
      t.match(
        stopped.get(`csi-odd-${kind}`),
        { state: 'corrupt', detail: /^metadata file metadata\.json is not a regular file but a / },
        `plugin stopped: the ${kind} metadata.json is its volume's row`,
      );
    }

    const second = await startNode(nodeArgs());
    let running = true;
    t.teardown(() => {
      if (running) second.child.kill('SIGKILL');
    });
    const log = () => second.output();
    t.equal(
      log()
        .split('\n')
        .filter((l) => l.includes('"unreadable metadata.json moved aside"')).length,
      ODD_KINDS.length,
      'each odd metadata.json is named and set aside',
    );
    t.equal(
      log()
        .split('\n')
        .filter((l) => l.includes('"state file could not be read; moved aside"')).length,
      ODD_KINDS.length + 1,
      'each odd state file and the counter are named and set aside',
    );
    const newPublish = await publish('csi-new');
    t.equal(newPublish.code, 0, `a publish answers: ${newPublish.stderr}`);
    // The renewal resumes the request in flight: its key is refused, a new one asked for.
    const renew = await runCli(['renew', '--data-root', dataRoot, '--volume-id', 'csi-keep'], {
      timeoutMs: CLI_DEADLINE_MS,
    });
    t.equal(renew.code, 0, `renew answers: ${renew.stderr}`);
    t.match(renew.stdout, /^renewed csi-keep: not after /);
    t.match(log(), '"pending key refused: asking again with a new key"');
    const renewed = JSON.parse(await readFile(join(dataRoot, 'csi-keep', 'metadata.json'), 'utf8'));
    t.equal(renewed.pendingRequest, undefined, 'the request in flight is done with');
    const live = await statusRows();
    t.match(live.get('csi-keep'), { state: 'ok' }, 'plugin running: the resumed volume is ok');
    t.match(live.get('csi-new'), { state: 'ok' });
    t.match(live.get('csi-odd-fifo'), { state: 'corrupt', detail: /^metadata\.json\.corrupt-/ });

    // A Certificate's file that is a FIFO: status --certificate says so instead of waiting.
    const certificates = join(stateDir, 'cert-manager.io', 'certificates', 'default');
    await mkdir(certificates, { recursive: true });
    await make(join(certificates, 'fifo-cert.json'), 'fifo');
    const certificate = await runCli(
      ['status', '--certificate', 'default/fifo-cert', '--state-dir', stateDir],
      { timeoutMs: CLI_DEADLINE_MS },
    );
    t.equal(certificate.code, 1);
    t.match(
      certificate.stderr,
      /unreadable state file \S+fifo-cert\.json: it is not a regular file but a FIFO/,
    );

    const code = await within(STOP_DEADLINE_MS, second.stop());
    running = code === 'timed out';
    t.equal(code, 0, 'SIGTERM stops the plugin');
  },
);

t.test('a manifest that is a FIFO: the start is refused at once, naming it', async (t) => {
  const dir = await tempDir(t, 'cert-csi-odd-manifests-');
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  const make = await oddFileMaker(t);
  await make(join(manifests, 'issuer.yaml'), 'link-to-fifo');
  const refusal = await rejectionMessage(
    startNode(embeddedNodeArgs(dir, ['--manifests', manifests], 'odd-manifests')),
  );
  t.match(refusal, /exited with 1 before starting/);
  t.match(refusal, `${join(manifests, 'issuer.yaml')}: is not a regular file but a FIFO`);
});
