import { rm } from 'node:fs/promises';
import t from 'tap';
import { readMetadata } from '../../src/volume/metadata.js';
import type { IssuedCertificate } from '../../src/volume-manager/issuance/certificate-files.js';
import { renewNow } from '../../src/volume-manager/operations/manual-renewal.js';
import { renewVolume } from '../../src/volume-manager/operations/renew-volume.js';
import type { PublishRequest } from '../../src/volume-manager/volume-publisher.js';
import { until } from '../support/eventually.js';
import { INLINE_CAPABILITY } from '../support/publish-call.js';
import { fakeIssued, heldIssuance, type IssueFn, manage, testParts } from './parts-fixture.js';
import { makeVolume } from './renew-fixtures.js';

const HOUR_MS = 3600_000;

t.test('a renewal running when the request comes is waited for, then a new one runs', async (t) => {
  let calls = 0;
  let finishFirst: (issued: IssuedCertificate) => void = () => {};
  let firstStarted = () => {};
  const started = new Promise<void>((resolve) => {
    firstStarted = resolve;
  });
  const issue: IssueFn = (_volumeId, _spec, metadata) => {
    calls++;
    const issued = fakeIssued(clock, HOUR_MS);
    metadata.nextIssuanceTime = issued.nextIssuanceTime.toISOString();
    if (calls > 1) return Promise.resolve(issued);
    firstStarted();
    return new Promise((resolve) => {
      finishFirst = resolve;
    });
  };
  const { parts, clock } = await testParts(t, issue);
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-a');
  const timer = renewVolume(parts, 'csi-a', 'renewal time');
  await started;
  const manual = renewNow(parts, { volumeId: 'csi-a' }, () => {});
  finishFirst(fakeIssued(clock, HOUR_MS));
  await timer;
  const outcome = await manual;
  t.equal(calls, 2, 'the manual request did not ride on the earlier renewal');
  t.same(
    outcome.renewed.map((r) => r.volumeId),
    ['csi-a'],
  );
});

t.test('a failed manual renewal reports the last error, from memory first', async (t) => {
  const { parts } = await testParts(t, () => Promise.reject(new Error('issuer down')));
  await makeVolume(parts.dataRoot, 'csi-saved', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-saved');
  const saved = await renewNow(parts, { volumeId: 'csi-saved' }, () => {});
  t.same(saved.failed, [{ volumeId: 'csi-saved', error: 'issuer down' }], 'from metadata.json');

  // The failure cannot be written: the volume dir goes between reading and recording.
  const lossy = await testParts(t, async (volumeId) => {
    await rm(lossy.parts.dataRoot.volumeDir(volumeId), { recursive: true });
    throw new Error('issuer down, disk full');
  });
  await makeVolume(lossy.parts.dataRoot, 'csi-unsaved', {
    nextIssuanceTime: new Date(0).toISOString(),
  });
  await manage(lossy.parts, 'csi-unsaved');
  const unsaved = await renewNow(lossy.parts, { all: true }, () => {});
  t.same(unsaved.failed, [{ volumeId: 'csi-unsaved', error: 'issuer down, disk full' }]);
  t.equal(lossy.parts.failures.unsavedFailures().length, 1, 'held in memory');
});

t.test('a volume unpublished during its manual renewal says so', async (t) => {
  const { parts } = await testParts(t, async (volumeId) => {
    parts.registry.abort(volumeId, new Error('volume unpublished'));
    await rm(parts.dataRoot.volumeDir(volumeId), { recursive: true });
    throw new Error('issuance aborted: the volume was unpublished');
  });
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-a');
  const outcome = await renewNow(parts, { volumeId: 'csi-a' }, () => {});
  t.same(outcome.failed, [{ volumeId: 'csi-a', error: 'the volume was unpublished' }]);
});

t.test('a volume with a certificate is renewed even while a republish of it runs', async (t) => {
  const { parts, clock } = await testParts(t, async (_volumeId, _spec, metadata) => {
    const issued = fakeIssued(clock, HOUR_MS);
    metadata.nextIssuanceTime = issued.nextIssuanceTime.toISOString();
    return issued;
  });
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-a');
  const target = (await readMetadata(parts.dataRoot, 'csi-a')).targetPath;
  let finish = () => {};
  const republish = parts.registry.startPublish(
    // The registry reads only the volume id.
    {
      volumeId: 'csi-a',
      targetPath: target,
      volumeContext: {},
      spec: {} as PublishRequest['spec'],
      capability: INLINE_CAPABILITY,
    },
    () => new Promise((resolve) => (finish = () => resolve({ issued: false }))),
  );
  const outcome = await renewNow(parts, { volumeId: 'csi-a' }, () => {});
  t.same(
    outcome.renewed.map((r) => r.volumeId),
    ['csi-a'],
  );
  finish();
  await republish;
});

t.test('each volume of a manual renewal is asked for until its outcome is in', async (t) => {
  const issuance = heldIssuance();
  const { parts } = await testParts(t, issuance.issue);
  for (const id of ['csi-a', 'csi-b']) {
    await makeVolume(parts.dataRoot, id, { nextIssuanceTime: new Date(0).toISOString() });
    await manage(parts, id);
  }
  const askedWhenTold: string[][] = [];
  const all = renewNow(parts, { all: true }, () => askedWhenTold.push(parts.asked.volumeIds()));
  t.same(parts.asked.volumeIds(), ['csi-a', 'csi-b'], 'every volume asked from the call on');

  const unknown = await renewNow(parts, { volumeId: 'csi-nope' }, () => {});
  t.same(unknown.failed.length, 1, 'a volume not managed is refused at once');
  t.same(parts.asked.volumeIds(), ['csi-a', 'csi-b'], 'and asked no more');

  await until(() => issuance.held().length === 2, { what: 'both renewals issuing' });
  // A second request for csi-b while the first one's renewal runs: it waits, then renews again.
  const again = renewNow(parts, { volumeId: 'csi-b' }, () => {});
  issuance.release('csi-a');
  await until(() => askedWhenTold.length === 1, { what: 'csi-a told as done' });
  t.same(askedWhenTold, [['csi-b']], 'a volume is no longer asked when it is told as done');
  t.same(parts.asked.volumeIds(), ['csi-b']);

  issuance.release('csi-b');
  const outcome = await all;
  t.same(outcome.renewed.map((r) => r.volumeId).sort(), ['csi-a', 'csi-b']);
  t.same(parts.asked.volumeIds(), ['csi-b'], 'still asked by the second request');
  await until(() => issuance.held().length === 1, { what: 'the second renewal of csi-b' });
  issuance.release('csi-b');
  t.same(
    (await again).renewed.map((r) => r.volumeId),
    ['csi-b'],
  );
  t.same(parts.asked.volumeIds(), [], 'nothing asked once every request is done');
});

t.test('a manual renewal that throws gives its volume back too', async (t) => {
  const { parts } = await testParts(t);
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-a');
  parts.renew = () => Promise.reject(new Error('unexpected'));
  await t.rejects(
    renewNow(parts, { volumeId: 'csi-a' }, () => {}),
    { message: 'unexpected' },
  );
  t.same(parts.asked.volumeIds(), [], 'not asked for ever');
});
