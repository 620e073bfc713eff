import { chmod, mkdir, readlink, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { writeAtomically } from '../../src/fs/atomic-writer.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { askRenew } from '../../src/volume-manager/control/control-client.js';
import type { ControlHandlers } from '../../src/volume-manager/control/control-connection.js';
import { serveControl } from '../../src/volume-manager/control/control-server.js';
import { LEGACY_RENEW_DIR_NAME } from '../../src/volume-manager/control/legacy-control-files.js';
import {
  readVolumeStatuses,
  type VolumeStatus,
} from '../../src/volume-manager/control/volume-status.js';
import { until } from '../support/eventually.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { importedUrl, moduleFileUrl } from '../support/project-files.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';
import { heldIssuance, manage, managerControlHandlers, testParts } from './parts-fixture.js';
import { certificatePem, makeVolume } from './renew-fixtures.js';

const NOW = new Date();
const DAY_MS = 24 * 3600 * 1000;
const inDays = (days: number) => new Date(NOW.getTime() + days * DAY_MS).toISOString();

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t), 'volumes'));
  await root.ensure();
  return root;
}

async function statusOf(root: DataRoot, id: string): Promise<VolumeStatus | undefined> {
  return (await readVolumeStatuses(root, NOW)).find((s) => s.volumeId === id);
}

/** Serves the control socket of root with handlers, until the test ends. */
async function servePlugin(t: Test, root: DataRoot, handlers: ControlHandlers): Promise<void> {
  const server = await serveControl(root, handlers, recordingLogger());
  t.teardown(() => server.close());
}

const CALL = { timeoutMs: 60_000 };

t.test('a healthy volume: pod, issuer, times, state ok', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-ok', { notAfter: inDays(90), nextIssuanceTime: inDays(60) });
  t.same(await readVolumeStatuses(root, NOW), [
    {
      volumeId: 'csi-ok',
      state: 'ok',
      renewalPending: false,
      pod: { namespace: 'shop', name: 'web-0' },
      issuer: { name: 'embedded-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      notAfter: inDays(90),
      nextRenewal: inDays(60),
    },
  ]);
});

t.test('notAfter comes from the certificate file when metadata has none', async (t) => {
  const root = await dataRoot(t);
  // Dated from NOW, like the check below: dated from its own clock reading, the certificate ends
  // past NOW + 90 days whenever the wall-clock second changed since NOW was taken.
  const pem = await certificatePem(90, NOW);
  // Legacy keys still name the issuer and the file; kind and group take their defaults.
  await makeVolume(
    root,
    'csi-legacy',
    {
      nextIssuanceTime: inDays(60),
      volumeContext: {
        'csi.certmanager.k8s.io/issuer-name': 'team-ca',
        'csi.certmanager.k8s.io/certificate-file': 'cert.pem',
      },
    },
    { 'cert.pem': pem },
  );
  const status = await statusOf(root, 'csi-legacy');
  t.same(status?.issuer, { name: 'team-ca', kind: 'Issuer', group: 'cert-manager.io' });
  t.notOk(status?.pod, 'no pod keys, no pod');
  t.equal(status?.state, 'ok');
  const days = (Date.parse(status?.notAfter ?? '') - NOW.getTime()) / DAY_MS;
  t.ok(days > 89 && days <= 90, `not after is ~90 days away (${days.toFixed(2)})`);
});

t.test('an unreadable certificate file gives no notAfter, not an error', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-garbled', {}, { 'tls.crt': 'not a certificate' });
  const status = await statusOf(root, 'csi-garbled');
  t.equal(status?.notAfter, undefined);
  t.equal(status?.state, 'pending');
  t.equal(status?.detail, 'no certificate issued yet');
});

t.test('a request in flight is pending', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-pending', {
    notAfter: inDays(10),
    nextIssuanceTime: inDays(-1),
    pendingRequest: { name: 'web-0-abc', namespace: 'shop', createdAt: inDays(0) },
  });
  const status = await statusOf(root, 'csi-pending');
  t.equal(status?.state, 'pending');
  t.equal(status?.renewalPending, true);
  t.equal(status?.detail, 'waiting for CertificateRequest shop/web-0-abc');
});

t.test('failures without a valid certificate are failing; the retry time is next', async (t) => {
  const root = await dataRoot(t);
  const lastError = { message: 'issuer embedded-ca not ready', time: inDays(0) };
  await makeVolume(root, 'csi-failing', {
    failures: 3,
    lastError,
    nextRetryTime: inDays(0.01),
  });
  const status = await statusOf(root, 'csi-failing');
  t.equal(status?.state, 'failing');
  t.same(status?.lastError, lastError);
  t.equal(status?.nextRenewal, inDays(0.01));
  t.equal(status?.renewalPending, true, 'a retry is due');
});

t.test('failures while a valid certificate is served are a pending renewal', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-retrying', {
    notAfter: inDays(5),
    nextIssuanceTime: inDays(-1),
    failures: 1,
    lastError: { message: 'denied', time: inDays(0) },
  });
  const status = await statusOf(root, 'csi-retrying');
  t.equal(status?.state, 'pending');
  t.equal(status?.nextRenewal, inDays(-1), 'no retry time: the planned renewal is shown');
  t.equal(status?.lastError?.message, 'denied');
});

t.test('a past notAfter is expired', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-expired', {
    notAfter: inDays(-1),
    lastError: { message: 'denied', time: inDays(0) },
  });
  t.equal((await statusOf(root, 'csi-expired'))?.state, 'expired');
});

t.test('metadata moved aside by the manager is corrupt, named in detail', async (t) => {
  const root = await dataRoot(t);
  await root.ensureVolume('csi-moved');
  const dir = root.volumeDir('csi-moved');
  await writeFile(join(dir, 'metadata.json.corrupt-2026-01-01T00-00-00Z'), '{nope');
  await writeFile(join(dir, 'metadata.json.corrupt-2026-02-01T00-00-00Z'), '{nope');
  await writeAtomically(root.dataDir('csi-moved'), {
    'tls.crt': Buffer.from(await certificatePem(30)),
  });
  const status = await statusOf(root, 'csi-moved');
  t.equal(status?.state, 'corrupt');
  t.equal(status?.detail, 'metadata.json.corrupt-2026-02-01T00-00-00Z', 'the latest one');
  t.ok(status?.notAfter, 'the certificate still served is dated');
});

t.test('metadata that cannot be parsed is corrupt, with the reason', async (t) => {
  const root = await dataRoot(t);
  await root.ensureVolume('csi-broken');
  await writeFile(root.metadataPath('csi-broken'), '{"volumeId": "csi-bro');
  const status = await statusOf(root, 'csi-broken');
  t.equal(status?.state, 'corrupt');
  t.match(status?.detail, /^metadata file metadata\.json is not valid JSON/);
});

t.test('a volume dir without metadata is incomplete', async (t) => {
  const root = await dataRoot(t);
  await mkdir(join(root.root, 'csi-empty'));
  t.same(await readVolumeStatuses(root, NOW), [
    {
      volumeId: 'csi-empty',
      state: 'incomplete',
      renewalPending: false,
      detail: 'no metadata.json',
    },
  ]);
});

t.test('sorted by id; what is no volume dir is no row', async (t) => {
  const root = await dataRoot(t);
  const fields = { notAfter: inDays(90), nextIssuanceTime: inDays(60) };
  await makeVolume(root, 'csi-b', fields);
  await makeVolume(root, 'csi-a', fields);
  await mkdir(join(root.root, 'csi-c'));
  // The request dir of an older version, with a request in it: no volume, and no renewal
  // pending: no plugin of this version answers it.
  const dir = join(root.root, LEGACY_RENEW_DIR_NAME);
  await mkdir(dir);
  await writeFile(join(dir, 'one.request'), JSON.stringify({ all: true }));
  const statuses = await readVolumeStatuses(root, NOW);
  t.same(
    statuses.map((s) => [s.volumeId, s.state, s.renewalPending]),
    [
      ['csi-a', 'ok', false],
      ['csi-b', 'ok', false],
      ['csi-c', 'incomplete', false],
    ],
  );
});

t.test(
  'cert-csi renew asked of the plugin and not finished marks its volumes pending',
  async (t) => {
    const issuance = heldIssuance();
    const { parts } = await testParts(t, issuance.issue);
    const root = parts.dataRoot;
    const fields = { notAfter: inDays(90), nextIssuanceTime: inDays(60) };
    await makeVolume(root, 'csi-a', fields);
    await makeVolume(root, 'csi-b', fields);
    await mkdir(join(root.root, 'csi-c'));
    await manage(parts, 'csi-a');
    await manage(parts, 'csi-b');
    await servePlugin(t, root, managerControlHandlers(parts));
    const rows = async () =>
      (await readVolumeStatuses(root, NOW)).map((s) => [s.volumeId, s.state, s.renewalPending]);

    const one = askRenew(root, { volumeId: 'csi-a' }, CALL);
    await until(() => issuance.held().length === 1, { what: 'the renewal of csi-a issuing' });
    t.same(
      await rows(),
      [
        ['csi-a', 'pending', true],
        ['csi-b', 'ok', false],
        ['csi-c', 'incomplete', false],
      ],
      'sorted by id; the control socket is no volume',
    );

    // csi-a waits for the renewal under way, then renews again; csi-b issues at once.
    const all = askRenew(root, { all: true }, CALL);
    await until(() => issuance.held().length === 2, { what: 'the renewal of csi-b issuing' });
    t.same(
      (await readVolumeStatuses(root, NOW)).map((s) => s.renewalPending),
      [true, true, false],
      'every volume of the plugin; csi-c has no metadata: no volume --all renews',
    );

    issuance.release('csi-a');
    t.same(
      (await one).renewed.map((r) => r.volumeId),
      ['csi-a'],
    );
    t.equal((await statusOf(root, 'csi-a'))?.state, 'pending', 'csi-a: --all is not done with it');
    issuance.release('csi-b');
    await until(() => issuance.held().includes('csi-a'), { what: '--all renewing csi-a' });
    issuance.release('csi-a');
    t.same((await all).renewed.map((r) => r.volumeId).sort(), ['csi-a', 'csi-b']);
    t.same(
      await rows(),
      [
        ['csi-a', 'ok', false],
        ['csi-b', 'ok', false],
        ['csi-c', 'incomplete', false],
      ],
      'nothing pending once every renewal is done',
    );
  },
);

t.test('a volume the plugin names is pending whatever its state; others add no row', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-expired', { notAfter: inDays(-1) });
  await makeVolume(root, 'csi-ok', { notAfter: inDays(90), nextIssuanceTime: inDays(60) });
  await mkdir(join(root.root, 'csi-empty'));
  await servePlugin(t, root, {
    renew: () => Promise.reject(new Error('no renewal in this test')),
    unsavedFailures: () => [],
    renewalsAsked: () => ['csi-empty', 'csi-expired', 'csi-gone'],
  });
  t.same(
    (await readVolumeStatuses(root, NOW)).map((s) => [s.volumeId, s.state, s.renewalPending]),
    [
      ['csi-empty', 'incomplete', true],
      ['csi-expired', 'expired', true],
      ['csi-ok', 'ok', false],
    ],
  );
});

t.test('odd files are skipped at once, each named in a warning, at most five a kind', async (t) => {
  const root = await dataRoot(t);
  const make = await oddFileMaker(t);
  const fields = { notAfter: inDays(90), nextIssuanceTime: inDays(60) };
  await makeVolume(root, 'csi-a', fields);
  // The request dir of an older version, full of odd entries: never opened.
  const dir = join(root.root, LEGACY_RENEW_DIR_NAME);
  await mkdir(dir);
  for (const kind of ODD_KINDS) {
    for (const n of [1, 2, 3]) await make(join(dir, `${kind}-${n}.request`), kind, '{"all":true}');
  }
  // Certificates the pods see that are odd, more than a kind's named warnings, and a
  // metadata.json that is a FIFO. Three FIFOs and more: more blocking opens than libuv has
  // threads.
  const certPaths: string[] = [];
  const oddCertificates = [...ODD_KINDS, 'fifo', 'fifo'] as const;
  for (const [n, kind] of oddCertificates.entries()) {
    const id = `csi-odd-cert-${n}`;
    await makeVolume(root, id, {}, { 'tls.crt': 'x' });
    const generation = await readlink(join(root.dataDir(id), '..data'));
    const certPath = join(root.dataDir(id), generation, 'tls.crt');
    await chmod(dirname(certPath), 0o700);
    await rm(certPath);
    await make(certPath, kind);
    certPaths.push(certPath);
  }
  await makeVolume(root, 'csi-fifo-meta');
  await rm(root.metadataPath('csi-fifo-meta'));
  await make(root.metadataPath('csi-fifo-meta'), 'fifo');

  const warnings: string[] = [];
  const statuses = await readVolumeStatuses(root, NOW, (message) => warnings.push(message));
  t.same(
    statuses.map((s) => [s.volumeId, s.state, s.renewalPending, s.detail]),
    [
      ['csi-a', 'ok', false, undefined],
      [
        'csi-fifo-meta',
        'corrupt',
        false,
        'metadata file metadata.json is not a regular file but a FIFO: only regular files are read',
      ],
      ...oddCertificates.map((_, n) => [
        `csi-odd-cert-${n}`,
        'pending',
        false,
        'no certificate issued yet',
      ]),
    ],
    'no odd certificate read; the odd metadata.json is its volume row',
  );
  const named = (path: string, kind: string) =>
    `certificate files not read: cannot read files from ${dirname(dirname(path))}: file ${JSON.stringify(path)} is not a regular file but ${kind}: only regular files are read`;
  t.same(
    warnings,
    [
      named(certPaths[0] ?? '', 'a FIFO'),
      named(certPaths[1] ?? '', 'a symbolic link'),
      named(certPaths[2] ?? '', 'a socket'),
      named(certPaths[3] ?? '', 'a directory'),
      named(certPaths[4] ?? '', 'a symbolic link'),
      `certificate files not read: ${oddCertificates.length - 5} more`,
    ],
    'five named, then a count; nothing of the old request dir',
  );
  t.same(
    (await readVolumeStatuses(root, NOW)).map((s) => s.volumeId),
    ['csi-a', 'csi-fifo-meta', ...oddCertificates.map((_, n) => `csi-odd-cert-${n}`)],
    'without a listener, the same rows',
  );
});

t.test('a missing data root has no volumes; a ..renew that is a file is ignored', async (t) => {
  t.same(await readVolumeStatuses(new DataRoot(join(await tempDir(t), 'absent'))), []);
  const root = await dataRoot(t);
  await writeFile(join(root.root, LEGACY_RENEW_DIR_NAME), 'not a dir');
  await makeVolume(root, 'csi-a', { notAfter: inDays(1) });
  t.equal((await statusOf(root, 'csi-a'))?.state, 'ok');
});

t.test('an unexpected error for one volume becomes its row', async (t) => {
  const { readVolumeStatuses: readMocked } = await t.mockImport<
    typeof import('../../src/volume-manager/control/volume-status.js')
  >(moduleFileUrl('src/volume-manager/control/volume-status.ts'), {
    [importedUrl('src/volume/metadata.ts')]: {
      readMetadata: async () => {
        throw new TypeError('boom');
      },
    },
  });
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-a');
  t.same(await readMocked(root, NOW), [
    { volumeId: 'csi-a', state: 'corrupt', renewalPending: false, detail: 'boom' },
  ]);
  await servePlugin(t, root, {
    renew: () => Promise.reject(new Error('no renewal in this test')),
    unsavedFailures: () => [],
    renewalsAsked: () => ['csi-a'],
  });
  t.same(
    await readMocked(root, NOW),
    [{ volumeId: 'csi-a', state: 'corrupt', renewalPending: true, detail: 'boom' }],
    'its renewal asked of the plugin is still shown',
  );
});
