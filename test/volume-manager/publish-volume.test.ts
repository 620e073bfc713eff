// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
// A publish that is refused leaves nothing behind: not in the registry (state, tokens, running
// publish), the trust-bundle watches, the readiness watches, the renewal timers, the failures
// held in memory, nor on disk. One that fails after it wrote something and has nothing worth
// keeping is forgotten the same way. A volume published before keeps everything it had.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { TargetPathError } from '../../src/volume/errors.js';
import { readMetadata, type VolumeCapabilityRecord } from '../../src/volume/metadata.js';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { publishVolume } from '../../src/volume-manager/operations/publish-volume.js';
import { RepublishConflictError } from '../../src/volume-manager/policy/republish-check.js';
import { PodReadiness } from '../../src/volume-manager/readiness/pod-readiness.js';
import type { PodSource } from '../../src/volume-manager/readiness/pod-source.js';
import { DEFAULT_READINESS } from '../../src/volume-manager/settings.js';
import { TrustBundleSources } from '../../src/volume-manager/trust-bundles/trust-bundle-sources.js';
import { TrustBundleVolumes } from '../../src/volume-manager/trust-bundles/trust-bundle-volumes.js';
import type { PublishRequest } from '../../src/volume-manager/volume-publisher.js';
import { INLINE_CAPABILITY } from '../support/publish-call.js';
import { type TestParts, testParts } from './parts-fixture.js';
import { makeVolume, podContext } from './renew-fixtures.js';

const TRUST_BUNDLE = { 'csi.cert-manager.io/trust-bundle': 'configmap:team-ca/ca.crt' };
const IP_SANS = { 'csi.cert-manager.io/ip-sans': '${POD_IPS}' };

// Targets kubelet would give, under a directory of the test's own.
let podsDir = '/nonexistent';

function request(
  volumeId: string,
  attributes: Record<string, string>,
  options: { targetPath?: string; tokens?: string; capability?: VolumeCapabilityRecord } = {},
): PublishRequest {
  const volumeContext = podContext(attributes);
  const parsed = parseVolumeAttributes(volumeContext);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return {
    volumeId,
    targetPath: options.targetPath ?? join(podsDir, volumeId, 'mount'),
    volumeContext,
    spec: parsed.spec,
    capability: options.capability ?? INLINE_CAPABILITY,
    ...(options.tokens !== undefined ? { serviceAccountTokens: options.tokens } : {}),
  };
}

/** testParts whose trust-bundle watches can be counted, and whose targets are checked for real. */
async function partsWithSources(t: Test): Promise<TestParts & { sources: TrustBundleSources }> {
  const fixture = await testParts(t);
  podsDir = join(fixture.parts.dataRoot.root, '..', 'pods');
  const direct = createMounter({ mode: 'direct' });
  fixture.parts.mounter.checkTarget = (dataDir, target, recorded) =>
    direct.checkTarget(dataDir, target, recorded);
  const sources = new TrustBundleSources(new MemoryStore(), { onChange: () => undefined });
  t.teardown(() => sources.stop());
  fixture.parts.trustBundles = new TrustBundleVolumes(fixture.parts, sources);
  return { ...fixture, sources };
}

/** Asserts that nothing of volumeId is held anywhere. */
async function assertNothingHeld(
  t: Test,
  fixture: TestParts & { sources: TrustBundleSources },
  volumeId: string,
  what: string,
): Promise<void> {
  const { parts, sources, mounts } = fixture;
  t.same(parts.registry.volumeIds(), [], `${what}: no volume in the registry`);
  t.equal(parts.registry.tokensOf(volumeId), undefined, `${what}: no tokens kept`);
  t.equal(parts.registry.runningPublish(volumeId), undefined, `${what}: no publish running`);
  t.equal(sources.watchCount, 0, `${what}: no trust bundle watched`);
  t.notOk(parts.readiness.isWatching(volumeId), `${what}: no pod watched`);
  t.equal(parts.scheduler.size, 0, `${what}: no renewal timer`);
  t.same(parts.failures.unsavedFailures(), [], `${what}: no failure held`);
  t.same(await parts.dataRoot.listVolumeIds(), [], `${what}: no volume dir`);
  t.same(mounts, [], `${what}: nothing mounted`);
}

t.test('a publish refused by any check leaves nothing in memory or on disk', async (t) => {
  const fixture = await partsWithSources(t);
  const { parts } = fixture;
  const refusals: Array<[string, PublishRequest, RegExp, new (...args: never[]) => Error]> = [
    [
      'a pod IP the pod does not have (embedded mode, no --pod-ip)',
      request('csi-no-ip', { ...IP_SANS, ...TRUST_BUNDLE }, { tokens: 'token-1' }),
      /^the pod is not ready for issuance: pod has no IP address yet/,
      IssuanceError,
    ],
    [
      // A zoned address passes the worst cases checked at publish but no SAN can hold it.
      'attributes invalid only with the pod IPs (a zoned IPv6 address in ip-sans)',
      request(
        'csi-zoned',
        {
          ...IP_SANS,
          ...TRUST_BUNDLE,
          'csi.storage.k8s.io/pod.ips': '10.0.0.1,fe80::1%eth0',
        },
        { tokens: 'token-1' },
      ),
      /^the volume attributes are invalid with the pod's IPs 10\.0\.0\.1,fe80::1%eth0: /,
      IssuanceError,
    ],
    [
      'a target inside the data root',
      request('csi-bad-target', TRUST_BUNDLE, {
        targetPath: join(parts.dataRoot.root, 'x'),
        tokens: 'token-1',
      }),
      /overlaps the data root/,
      TargetPathError,
    ],
  ];
  for (const [name, refused, message, type] of refusals) {
    const err = await publishVolume(parts, refused).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(err, type, `${name}: refused`);
    t.match((err as Error | undefined)?.message, message, `${name}: says why`);
    await assertNothingHeld(t, fixture, refused.volumeId, name);
  }
});

t.test(
  'publishes that joined a refused first publish, or conflict with it, leave nothing either',
  async (t) => {
    const fixture = await partsWithSources(t);
    const { parts } = fixture;
    const attributes = { ...IP_SANS, ...TRUST_BUNDLE };
    // All three start before the first one's checks end: they find it running.
    const first = publishVolume(parts, request('csi-new', attributes, { tokens: 'token-1' }));
    const joined = publishVolume(parts, request('csi-new', attributes, { tokens: 'token-2' }));
    const conflicting = publishVolume(
      parts,
      request('csi-new', attributes, {
        capability: { ...INLINE_CAPABILITY, accessMode: 'SINGLE_NODE_READER_ONLY' },
      }),
    );
    await t.rejects(conflicting, RepublishConflictError, 'another capability is refused at once');
    await t.rejects(first, IssuanceError, 'the first publish is refused (no pod IP)');
    await t.rejects(joined, IssuanceError, 'and the one that joined it with it');
    await assertNothingHeld(t, fixture, 'csi-new', 'after the three');
  },
);

t.test('a refusal leaves a volume published before as it was', async (t) => {
  const fixture = await partsWithSources(t);
  const { parts, sources } = fixture;
  const published = request('csi-up', TRUST_BUNDLE, { tokens: 'token-1' });
  const nextIssuanceTime = new Date(parts.clock.now() + 3600_000).toISOString();
  await makeVolume(parts.dataRoot, 'csi-up', {
    targetPath: published.targetPath,
    volumeContext: published.volumeContext,
    volumeCapability: INLINE_CAPABILITY,
    nextIssuanceTime,
    notAfter: new Date(parts.clock.now() + 7200_000).toISOString(),
  });
  const before = await readMetadata(parts.dataRoot, 'csi-up');
  // What rediscovery and the first publish registered.
  const state = parts.registry.registerPublish('csi-up');
  parts.registry.keepTokens(published);
  parts.trustBundles.track('csi-up', published.spec, published.targetPath);
  parts.scheduler.schedule('csi-up', before, published.spec);
  const refusals: Array<[string, PublishRequest]> = [
    [
      'another access mode',
      request('csi-up', TRUST_BUNDLE, {
        tokens: 'token-2',
        capability: { ...INLINE_CAPABILITY, accessMode: 'MULTI_NODE_READER_ONLY' },
      }),
    ],
    [
      'mount flags',
      request('csi-up', TRUST_BUNDLE, {
        tokens: 'token-2',
        capability: { ...INLINE_CAPABILITY, mountFlags: ['noexec'] },
      }),
    ],
    [
      'another attribute',
      request('csi-up', { ...TRUST_BUNDLE, 'csi.cert-manager.io/common-name': 'x' }),
    ],
    ['another target', { ...published, targetPath: join(podsDir, 'other', 'mount') }],
  ];
  for (const [name, refused] of refusals) {
    await t.rejects(publishVolume(parts, refused), RepublishConflictError, `${name}: refused`);
    t.equal(parts.registry.liveState('csi-up'), state, `${name}: the same live state`);
    t.equal(parts.registry.tokensOf('csi-up'), 'token-1', `${name}: its tokens`);
    t.ok(parts.scheduler.has('csi-up'), `${name}: its renewal timer`);
    t.equal(sources.watchCount, 1, `${name}: its trust bundle watched`);
    t.same(
      await readMetadata(parts.dataRoot, 'csi-up'),
      before,
      `${name}: metadata.json as it was`,
    );
  }
  t.same(fixture.mounts, [], 'no mount touched');
  const again = await publishVolume(parts, { ...published, serviceAccountTokens: 'token-3' });
  t.equal(again.issued, false, 'the same publish again is fine: the volume is ready');
  t.equal(parts.registry.tokensOf('csi-up'), 'token-3', 'and brings its tokens');
});

t.test(
  'a first publish that fails after registration with nothing to keep is forgotten everywhere',
  async (t) => {
    const fixture = await partsWithSources(t);
    const { parts } = fixture;
    // A pod source that changes (Kubernetes mode): a pod without an IP is waited for.
    const source: PodSource = {
      changes: true,
      start: async () => {},
      get: (pod) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod.name, namespace: pod.namespace },
        status: {},
      }),
      onChange: () => () => {},
    };
    parts.readiness = new PodReadiness(source, DEFAULT_READINESS, parts.clock, () => {});
    t.teardown(() => parts.readiness.stop());
    parts.mounter.publish = async () => {
      throw new Error('mount: permission denied');
    };
    const failing = request('csi-wait', { ...IP_SANS, ...TRUST_BUNDLE }, { tokens: 'token-1' });
    await t.rejects(publishVolume(parts, failing), /mount: permission denied/);
    t.equal(fixture.failed.length, 1, 'told as a failure (an event in Kubernetes mode)');
    await assertNothingHeld(t, fixture, 'csi-wait', 'after the failed mount');
  },
);
