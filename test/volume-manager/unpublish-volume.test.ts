import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import t from 'tap';
import { readMetadata } from '../../src/volume/metadata.js';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { publishVolume } from '../../src/volume-manager/operations/publish-volume.js';
import { unpublishVolume } from '../../src/volume-manager/operations/unpublish-volume.js';
import type { PublishRequest, PublishResult } from '../../src/volume-manager/volume-publisher.js';
import { until } from '../support/eventually.js';
import { INLINE_CAPABILITY } from '../support/publish-call.js';
import { testParts } from './parts-fixture.js';
import { makeVolume } from './renew-fixtures.js';

const HOUR_MS = 3600_000;
const soon = () => new Date(Date.UTC(2026, 0, 1) + HOUR_MS).toISOString();

function request(volumeId: string, targetPath: string): PublishRequest {
  // Refused before the spec is read.
  return {
    volumeId,
    targetPath,
    volumeContext: {},
    spec: {} as PublishRequest['spec'],
    capability: INLINE_CAPABILITY,
  };
}

t.test('unpublish of the recorded target stops and removes everything', async (t) => {
  const { parts, mounts, deletedRequests } = await testParts(t);
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: soon() });
  const target = (await readMetadata(parts.dataRoot, 'csi-a')).targetPath;
  const state = parts.registry.stateOf('csi-a');
  parts.registry.keepTokens({ ...request('csi-a', target), serviceAccountTokens: 'tokens' });
  parts.scheduler.schedule('csi-a', await readMetadata(parts.dataRoot, 'csi-a'), {
    disableAutoRenew: false,
  });
  t.same(await unpublishVolume(parts, 'csi-a', target), { kind: 'unpublished' }, 'says so');
  t.ok(state.abort.signal.aborted, 'its work is aborted');
  t.notOk(parts.registry.has('csi-a'), 'forgotten');
  t.equal(parts.registry.tokensOf('csi-a'), undefined, 'tokens dropped');
  t.notOk(parts.scheduler.has('csi-a'), 'no timer');
  t.same(mounts, [`unpublish ${parts.dataRoot.dataDir('csi-a')} ${target}`]);
  t.notOk(await parts.dataRoot.hasVolume('csi-a'), 'dir removed');
  t.same(deletedRequests, ['csi-a'], 'its requests deleted');
});

t.test('unpublish of another target does nothing and stops nothing', async (t) => {
  const { parts, mounts, logs, deletedRequests } = await testParts(t);
  await makeVolume(parts.dataRoot, 'csi-a', { nextIssuanceTime: soon() });
  const state = parts.registry.stateOf('csi-a');
  parts.scheduler.schedule('csi-a', await readMetadata(parts.dataRoot, 'csi-a'), {
    disableAutoRenew: false,
  });
  const recorded = (await readMetadata(parts.dataRoot, 'csi-a')).targetPath;
  t.same(
    await unpublishVolume(parts, 'csi-a', '/var/lib/kubelet/pods/other/mount'),
    { kind: 'elsewhere', recordedTarget: recorded },
    'says where the volume is published',
  );
  t.notOk(state.abort.signal.aborted);
  t.ok(parts.scheduler.has('csi-a'));
  t.ok(await parts.dataRoot.hasVolume('csi-a'));
  t.same(mounts, []);
  t.same(deletedRequests, []);
  t.ok(
    logs.some(
      ([level, obj]) => level === 'warn' && (obj as { volumeId?: string }).volumeId === 'csi-a',
    ),
  );
});

t.test('unpublish of an unknown volume touches no target', async (t) => {
  const { parts, mounts, deletedRequests } = await testParts(t);
  t.same(
    await unpublishVolume(parts, 'csi-unknown', '/var/lib/kubelet/pods/x/mount'),
    { kind: 'not-published' },
    'says there was nothing to unpublish',
  );
  t.same(mounts, []);
  t.same(deletedRequests, ['csi-unknown'], 'a request left by a failed publish is still deleted');
});

t.test('a volume dir without readable metadata: only its own mount is undone', async (t) => {
  const { parts, mounts } = await testParts(t);
  await makeVolume(parts.dataRoot, 'csi-a');
  await writeFile(parts.dataRoot.metadataPath('csi-a'), 'garbage');
  t.same(await unpublishVolume(parts, 'csi-a', '/pods/a/mount'), { kind: 'unpublished' });
  t.same(mounts, [`unpublish ${parts.dataRoot.dataDir('csi-a')} /pods/a/mount`]);
  t.notOk(await parts.dataRoot.hasVolume('csi-a'));
});

t.test('a publish that recorded another target meanwhile keeps the volume', async (t) => {
  const { parts, mounts, logs } = await testParts(t);
  await makeVolume(parts.dataRoot, 'csi-a');
  const metadata = await readMetadata(parts.dataRoot, 'csi-a');
  const first = metadata.targetPath;
  let recorded = () => {};
  const recordOther = new Promise<void>((resolve) => {
    recorded = resolve;
  });
  // A first publish that never got a certificate may move to a new target.
  const publish = parts.registry.startPublish(request('csi-a', '/pods/moved/mount'), async () => {
    await recordOther;
    await makeVolume(parts.dataRoot, 'csi-a', { targetPath: '/pods/moved/mount' });
    return { issued: false } satisfies PublishResult;
  });
  const state = parts.registry.stateOf('csi-a');
  const unpublish = unpublishVolume(parts, 'csi-a', first);
  await once(state.abort.signal, 'abort');
  t.ok(parts.registry.isUnpublishing('csi-a'), 'the unpublish waits for the publish');
  recorded();
  await publish;
  t.same(
    await unpublish,
    { kind: 'elsewhere', recordedTarget: '/pods/moved/mount' },
    'nothing done: the volume is published at the target recorded meanwhile',
  );
  t.ok(await parts.dataRoot.hasVolume('csi-a'), 'the volume stays');
  t.same(mounts, [], 'no target touched');
  t.equal(logs.filter(([level]) => level === 'warn').length, 1, 'said so once');
  t.notOk(parts.registry.isUnpublishing('csi-a'));
});

t.test('a publish that meets an unpublish is aborted at once', async (t) => {
  const { parts } = await testParts(t);
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const unpublishing = parts.registry.whileUnpublishing('csi-a', () => held);
  const refused = publishVolume(parts, request('csi-a', '/pods/a/mount'));
  await t.rejects(
    refused,
    new IssuanceError('publish aborted: the volume is being unpublished', 'aborted'),
  );
  t.equal(parts.registry.runningPublish('csi-a'), undefined, 'nothing started');
  release();
  await unpublishing;
});

t.test(
  'an unpublish that stops a first publish before it wrote anything did something',
  async (t) => {
    const { parts, mounts } = await testParts(t);
    let finish = () => {};
    const publish = parts.registry.startPublish(request('csi-new', '/pods/new/mount'), async () => {
      // Its checks still running: nothing registered, nothing written.
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      return { issued: false } satisfies PublishResult;
    });
    const unpublish = unpublishVolume(parts, 'csi-new', '/pods/new/mount');
    await until(() => parts.registry.isUnpublishing('csi-new'));
    finish();
    await publish;
    t.same(await unpublish, { kind: 'unpublished' }, 'the publish under way was stopped');
    t.same(mounts, [], 'no target touched: nothing was mounted');
    t.notOk(parts.registry.has('csi-new'), 'forgotten');
  },
);
