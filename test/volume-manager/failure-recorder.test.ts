import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ManualClock } from '../../src/base/clock.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { readMetadata, type VolumeMetadata } from '../../src/volume/metadata.js';
import type { IssuedCertificate } from '../../src/volume-manager/issuance/certificate-files.js';
import { FailureRecorder } from '../../src/volume-manager/state/failure-recorder.js';
import { VolumeRegistry } from '../../src/volume-manager/state/volume-registry.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';
import { makeVolume } from './renew-fixtures.js';

// No jitter, so retry times are exact.
const BACKOFF = { initialMs: 30_000, factor: 2, capMs: 300_000, jitter: 0 };

async function setup(t: Test) {
  const dataRoot = new DataRoot(join(await tempDir(t), 'volumes'));
  await dataRoot.ensure();
  const clock = new ManualClock();
  const registry = new VolumeRegistry();
  const logger = recordingLogger();
  const recorder = new FailureRecorder({ dataRoot, registry, clock, logger, backoff: BACKOFF });
  return { dataRoot, clock, registry, logger, recorder };
}

const iso = (ms: number) => new Date(ms).toISOString();

t.test('a failed renewal is counted with the backoff retry time in metadata.json', async (t) => {
  const { dataRoot, clock, registry, recorder } = await setup(t);
  await makeVolume(dataRoot, 'csi-a', { nextIssuanceTime: iso(clock.now()) });
  registry.stateOf('csi-a');
  const metadata = await readMetadata(dataRoot, 'csi-a');
  t.equal(await recorder.recordRenewalFailure('csi-a', metadata, new Error('denied')), true);
  clock.advance(30_000);
  t.equal(await recorder.recordRenewalFailure('csi-a', metadata, new Error('denied again')), true);
  const saved = await readMetadata(dataRoot, 'csi-a');
  t.equal(saved.failures, 2);
  t.equal(saved.nextRetryTime, iso(clock.now() + 60_000), 'the second retry waits twice as long');
  t.same(saved.lastError, { message: 'denied again', time: iso(clock.now()) });
  t.same(recorder.unsavedFailures(), [], 'nothing held in memory');
});

t.test('a renewal failure after an unpublish records nothing', async (t) => {
  const { dataRoot, registry, recorder } = await setup(t);
  await makeVolume(dataRoot, 'csi-a', { nextIssuanceTime: iso(0) });
  registry.stateOf('csi-a');
  registry.abort('csi-a', new Error('volume unpublished'));
  const before = await readFile(dataRoot.metadataPath('csi-a'), 'utf8');
  const metadata = await readMetadata(dataRoot, 'csi-a');
  t.equal(await recorder.recordRenewalFailure('csi-a', metadata, new Error('late')), false);
  t.equal(
    await readFile(dataRoot.metadataPath('csi-a'), 'utf8'),
    before,
    'metadata.json untouched',
  );
  t.equal(
    await recorder.recordRenewalFailure('csi-unknown', { ...metadata, volumeId: 'csi-unknown' }, 1),
    false,
    'nor for a volume that is not managed',
  );
});

t.test(
  'a failure metadata.json cannot take is held in memory until a write succeeds',
  async (t) => {
    const { dataRoot, registry, logger, recorder } = await setup(t);
    for (const id of ['csi-b', 'csi-a']) {
      await makeVolume(dataRoot, id, { nextIssuanceTime: iso(0) });
      registry.stateOf(id);
    }
    const metadataA = await readMetadata(dataRoot, 'csi-a');
    const metadataB = await readMetadata(dataRoot, 'csi-b');
    // Stands in for a full data root: writeMetadata never recreates a missing volume dir.
    await rm(dataRoot.volumeDir('csi-a'), { recursive: true });
    await rm(dataRoot.volumeDir('csi-b'), { recursive: true });
    await recorder.recordRenewalFailure('csi-b', metadataB, new Error('issuer down'));
    await recorder.recordRenewalFailure('csi-a', metadataA, new Error('issuer down'));
    const unsaved = recorder.unsavedFailures();
    t.same(
      unsaved.map((f) => f.volumeId),
      ['csi-a', 'csi-b'],
      'sorted by volume id',
    );
    t.equal(unsaved[0]?.lastError.message, 'issuer down');
    t.match(unsaved[0]?.saveError, /csi-a.*the volume dir does not exist/);
    t.equal(recorder.unsavedError('csi-a'), 'issuer down');
    t.ok(
      logger.records.some(
        ([level, obj]) => level === 'error' && (obj as { volumeId?: string }).volumeId === 'csi-a',
      ),
      'logged with the volume id',
    );

    await makeVolume(dataRoot, 'csi-a', { nextIssuanceTime: iso(0) });
    await recorder.recordRenewalFailure('csi-a', metadataA, new Error('issuer still down'));
    t.equal(recorder.unsavedError('csi-a'), undefined, 'saved again: no longer held in memory');
    recorder.forget('csi-b');
    t.same(recorder.unsavedFailures(), []);
  },
);

t.test('a failed first publish that got nothing leaves no directory', async (t) => {
  const { dataRoot, registry, recorder } = await setup(t);
  await makeVolume(dataRoot, 'csi-a');
  const state = registry.stateOf('csi-a');
  await recorder.recordPublishFailure('csi-a', await readMetadata(dataRoot, 'csi-a'), state, 1);
  t.notOk(await dataRoot.hasVolume('csi-a'), 'volume dir removed');
  t.notOk(registry.has('csi-a'), 'state forgotten');
});

t.test('a failed publish with something to keep records the failure', async (t) => {
  const { dataRoot, clock, registry, recorder } = await setup(t);
  const pendingRequest = { name: 'req', namespace: 'shop', createdAt: iso(clock.now()) };
  await makeVolume(dataRoot, 'csi-pending', { pendingRequest });
  await makeVolume(dataRoot, 'csi-worked', { nextIssuanceTime: iso(clock.now()) });
  for (const id of ['csi-pending', 'csi-worked']) {
    const metadata = await readMetadata(dataRoot, id);
    await recorder.recordPublishFailure(id, metadata, registry.stateOf(id), new Error('timeout'));
    const saved = await readMetadata(dataRoot, id);
    t.same(saved.lastError, { message: 'timeout', time: iso(clock.now()) }, `${id}: recorded`);
    t.ok(registry.liveState(id), `${id}: still managed`);
  }
});

t.test('a publish failure after an unpublish records nothing and removes nothing', async (t) => {
  const { dataRoot, registry, recorder } = await setup(t);
  await makeVolume(dataRoot, 'csi-a');
  const state = registry.stateOf('csi-a');
  state.abort.abort(new Error('volume unpublished'));
  const metadata: VolumeMetadata = await readMetadata(dataRoot, 'csi-a');
  await recorder.recordPublishFailure('csi-a', metadata, state, new Error('late'));
  t.ok(await dataRoot.hasVolume('csi-a'), 'the unpublish removes the dir, not the publish');
  t.equal((await readMetadata(dataRoot, 'csi-a')).lastError, undefined);
});

t.test(
  'an issuance clears the failure fields, unless its certificate is due at once',
  async (t) => {
    const { clock, logger, recorder } = await setup(t);
    const now = clock.now();
    const failed: VolumeMetadata = {
      volumeId: 'csi-a',
      targetPath: '/pods/a/mount',
      volumeContext: {},
      failures: 3,
      nextRetryTime: iso(now),
      lastError: { message: 'denied', time: iso(now) },
    };
    // The recorder reads only the certificate's times.
    const good = { notAfter: new Date(now + 90_000), nextIssuanceTime: new Date(now + 60_000) };
    recorder.recordIssuance('csi-a', failed, good as IssuedCertificate, now - 1000);
    t.same(
      [failed.failures, failed.nextRetryTime, failed.lastError],
      [undefined, undefined, undefined],
      'a good certificate clears the failure',
    );

    const dueAtOnce = { notAfter: new Date(now + 1000), nextIssuanceTime: new Date(now - 1000) };
    const metadata: VolumeMetadata = { ...failed, failures: 1 };
    recorder.recordIssuance('csi-a', metadata, dueAtOnce as IssuedCertificate, now - 1000);
    t.equal(metadata.failures, 2, 'counted as one more failure');
    t.equal(metadata.nextRetryTime, iso(now + 60_000), 'retried after the backoff');
    t.match(metadata.lastError?.message, /due for renewal at once/);
    t.ok(logger.records.some(([level]) => level === 'warn'));
  },
);
