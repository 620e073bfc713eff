import type { KeyObject } from 'node:crypto';
import t from 'tap';
import { writeAtomically } from '../../src/fs/atomic-writer.js';
import { encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import { readMetadata } from '../../src/volume/metadata.js';
import { rediscoverVolumes } from '../../src/volume-manager/operations/rediscovery.js';
import { renewVolume } from '../../src/volume-manager/operations/renew-volume.js';
import { fakeIssued, type IssueFn, manage, specFor, testParts } from './parts-fixture.js';
import { makeVolume, podContext } from './renew-fixtures.js';

const HOUR_MS = 3600_000;

t.test('a volume that is not managed, or has no dir, is not renewed', async (t) => {
  let calls = 0;
  const { parts } = await testParts(t, () => {
    calls++;
    return Promise.reject(new Error('not expected'));
  });
  t.equal(await renewVolume(parts, 'csi-unknown', 'renewal time'), undefined);
  parts.registry.manage('csi-gone', specFor(podContext()));
  t.equal(await renewVolume(parts, 'csi-gone', 'renewal time'), undefined, 'no volume dir');
  await makeVolume(parts.dataRoot, 'csi-stopped', { nextIssuanceTime: new Date().toISOString() });
  await manage(parts, 'csi-stopped');
  parts.registry.abortAll(new Error('plugin stopping'));
  t.equal(await renewVolume(parts, 'csi-stopped', 'renewal time'), undefined, 'aborted');
  t.equal(calls, 0, 'nothing was issued');
});

t.test('invalid stored attributes: logged, nothing issued, nothing recorded', async (t) => {
  const { parts, logs, failed } = await testParts(t);
  await makeVolume(parts.dataRoot, 'csi-bad', {
    nextIssuanceTime: new Date().toISOString(),
    volumeContext: podContext({ 'csi.cert-manager.io/dns-name': 'typo' }),
  });
  // Parsed once, at start: rediscovery refuses to manage it.
  await rediscoverVolumes(parts);
  t.equal(await renewVolume(parts, 'csi-bad', 'renewal time'), undefined);
  t.ok(
    logs.some(([level, , msg]) => level === 'error' && /attributes are invalid/.test(msg ?? '')),
  );
  t.equal((await readMetadata(parts.dataRoot, 'csi-bad')).failures, undefined);
  t.same(failed, [], 'not a failed renewal: retrying would not help');
});

t.test(
  'a renewal writes, mirrors, tells and arms the next timer; concurrent calls share it',
  async (t) => {
    let calls = 0;
    const issue: IssueFn = async (_volumeId, _spec, metadata) => {
      calls++;
      const issued = fakeIssued(clock, HOUR_MS);
      metadata.nextIssuanceTime = issued.nextIssuanceTime.toISOString();
      metadata.notAfter = issued.notAfter.toISOString();
      return issued;
    };
    const { parts, clock, mounts, fired, issued } = await testParts(t, issue);
    await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
    await manage(parts, 'csi-a');
    const [first, second] = await Promise.all([
      renewVolume(parts, 'csi-a', 'manual request'),
      renewVolume(parts, 'csi-a', 'renewal time'),
    ]);
    t.equal(calls, 1, 'one issuance for both');
    t.equal(first, second);
    const target = (await readMetadata(parts.dataRoot, 'csi-a')).targetPath;
    t.same(mounts, [`refresh ${parts.dataRoot.dataDir('csi-a')} ${target}`]);
    t.same(
      issued.map(([id, , reason]) => [id, reason]),
      [['csi-a', 'manual request']],
    );
    clock.advance(HOUR_MS);
    t.same(fired, [['csi-a', 'renewal time']], 'the next renewal is armed');
  },
);

t.test('reuse-private-key hands the key on disk to the issuance', async (t) => {
  let reused: KeyObject | undefined;
  const issue: IssueFn = async (_volumeId, _spec, _metadata, _state, reuseKey) => {
    reused = reuseKey;
    return fakeIssued(clock, HOUR_MS);
  };
  const { parts, clock } = await testParts(t, issue);
  await makeVolume(parts.dataRoot, 'csi-a', {
    nextIssuanceTime: new Date(0).toISOString(),
    volumeContext: podContext({ 'csi.cert-manager.io/reuse-private-key': 'true' }),
  });
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  await writeAtomically(parts.dataRoot.dataDir('csi-a'), {
    'tls.key': Buffer.from(encodePrivateKey(key, 'PKCS8')),
  });
  await manage(parts, 'csi-a');
  await renewVolume(parts, 'csi-a', 'renewal time');
  t.ok(reused?.equals(key));
});

t.test('a failed renewal is recorded, told and retried after the backoff', async (t) => {
  const { parts, clock, fired, failed } = await testParts(t, () =>
    Promise.reject(new Error('denied by the issuer')),
  );
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-a');
  t.equal(await renewVolume(parts, 'csi-a', 'renewal time'), undefined);
  const metadata = await readMetadata(parts.dataRoot, 'csi-a');
  t.equal(metadata.failures, 1);
  t.equal(metadata.lastError?.message, 'denied by the issuer');
  t.same(
    failed.map(([id, err]) => [id, (err as Error).message]),
    [['csi-a', 'denied by the issuer']],
  );
  clock.advance(29_999);
  t.same(fired, []);
  clock.advance(1);
  t.same(fired, [['csi-a', 'retry after failure']]);
});

t.test('a renewal that an unpublish cut short records and tells nothing', async (t) => {
  const { parts, fired, failed } = await testParts(t, async (volumeId) => {
    parts.registry.abort(volumeId, new Error('volume unpublished'));
    throw new Error('issuance aborted: the volume was unpublished');
  });
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-a');
  t.equal(await renewVolume(parts, 'csi-a', 'renewal time'), undefined);
  t.equal((await readMetadata(parts.dataRoot, 'csi-a')).failures, undefined);
  t.same(failed, []);
  t.equal(parts.scheduler.size, 0, 'no retry armed');
  t.same(fired, []);
});

t.test('a failure is recorded, and retried, only while the volume is still managed', async (t) => {
  const { parts, failed } = await testParts(t, async (volumeId) => {
    // The renewal's own state stays live, but the registry no longer manages the volume.
    parts.registry.forget(volumeId);
    throw new Error('issuer down');
  });
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: new Date(0).toISOString() });
  await manage(parts, 'csi-a');
  t.equal(await renewVolume(parts, 'csi-a', 'renewal time'), undefined);
  t.equal((await readMetadata(parts.dataRoot, 'csi-a')).failures, undefined, 'not recorded');
  t.equal(parts.scheduler.size, 0, 'no retry armed');
  t.equal(failed.length, 1, 'still told: the renewal did fail');
});
