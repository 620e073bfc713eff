// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
import { readFile } from 'node:fs/promises';
import t from 'tap';
import type { Pod } from '../../src/api/pod.js';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import { readMetadata, writeMetadata } from '../../src/volume/metadata.js';
import { readVolumeStatuses } from '../../src/volume-manager/control/volume-status.js';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { renewNow } from '../../src/volume-manager/operations/manual-renewal.js';
import { podChanged } from '../../src/volume-manager/operations/pod-change.js';
import { publishVolume } from '../../src/volume-manager/operations/publish-volume.js';
import { rediscoverVolumes } from '../../src/volume-manager/operations/rediscovery.js';
import { renewVolume } from '../../src/volume-manager/operations/renew-volume.js';
import { unpublishVolume } from '../../src/volume-manager/operations/unpublish-volume.js';
import { PodReadiness } from '../../src/volume-manager/readiness/pod-readiness.js';
import { contextPodSource, type PodSource } from '../../src/volume-manager/readiness/pod-source.js';
import { parseReadinessGate } from '../../src/volume-manager/readiness/readiness-gate.js';
import { markWaiting } from '../../src/volume-manager/readiness/waiting-volume.js';
import { DEFAULT_READINESS } from '../../src/volume-manager/settings.js';
import { VolumeRegistry } from '../../src/volume-manager/state/volume-registry.js';
import type { PublishRequest } from '../../src/volume-manager/volume-publisher.js';
import { until } from '../support/eventually.js';
import { INLINE_CAPABILITY } from '../support/publish-call.js';
import { fakeIssued, type TestParts, testParts } from './parts-fixture.js';
import { podContext } from './renew-fixtures.js';

const HOUR_MS = 3_600_000;

/** A pod source whose one pod the test sets; each set is a change, as an informer event. */
function fakeSource(): PodSource & {
  set(status: Pod['status'] | undefined, annotations?: Record<string, string>): void;
} {
  let pod: Pod | undefined;
  const listeners = new Set<(namespace: string, name: string) => void>();
  return {
    changes: true,
    async start() {},
    get: () => pod,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(status, annotations) {
      pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-0', namespace: 'shop', ...(annotations ? { annotations } : {}) },
        ...(status ? { status } : {}),
      };
      for (const listener of listeners) listener('shop', 'web-0');
    },
  };
}

/** Parts whose issuance records the spec and writes what VolumeIssuance writes to metadata. */
async function waitingParts(
  t: Parameters<typeof testParts>[0],
  options: { gates?: string[]; source?: PodSource } = {},
) {
  const specs: VolumeCertificateSpec[] = [];
  const renewals: string[] = [];
  const test: TestParts = await testParts(t, async (_volumeId, spec, metadata) => {
    specs.push(spec);
    const issued = fakeIssued(test.clock, HOUR_MS);
    metadata.nextIssuanceTime = issued.nextIssuanceTime.toISOString();
    metadata.notAfter = issued.notAfter.toISOString();
    delete metadata.waiting;
    if (spec.podIPs) metadata.podIPs = [...spec.podIPs];
    await writeMetadata(test.parts.dataRoot, metadata);
    return issued;
  });
  // The target checks of a publish; the fixture's mounter only records mounts.
  Object.assign(test.parts.mounter, { checkTarget: async () => {} });
  const fake = fakeSource();
  const source = options.source ?? fake;
  const gates = (options.gates ?? []).map(parseReadinessGate);
  test.parts.readiness = new PodReadiness(
    source,
    {
      continueOnNotReady: gates.length > 0,
      gates,
      gateBackoff: { initialMs: 1000, factor: 2, capMs: 10_000, jitter: 0 },
    },
    test.clock,
    (volumeId) => {
      void podChanged(test.parts, volumeId, (id, reason) => {
        renewals.push(reason);
        return renewVolume(test.parts, id, reason);
      });
    },
  );
  await test.parts.readiness.start();
  return { ...test, source: fake, specs, renewals };
}

function request(
  attributes: Record<string, string>,
  extra: Record<string, string> = {},
): PublishRequest {
  const volumeContext = podContext({ ...attributes, ...extra });
  const parsed = parseVolumeAttributes(volumeContext);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return {
    volumeId: 'csi-w',
    targetPath: '/pods/w/mount',
    spec: parsed.spec,
    volumeContext,
    capability: INLINE_CAPABILITY,
  };
}

const IP_SANS = { 'csi.cert-manager.io/ip-sans': '${POD_IP}' };

t.test(
  'a ${POD_IP} volume waits, retries on the gate backoff, and is issued on the pod change',
  async (t) => {
    const { parts, clock, source, specs, renewals, mounts } = await waitingParts(t);
    source.set(undefined);
    const result = await publishVolume(parts, request(IP_SANS));
    t.same(result, { issued: false, waiting: 'pod has no IP address yet' });
    t.equal(specs.length, 0, 'nothing issued');
    t.same(
      mounts.map((m) => m.split(' ')[0]),
      ['publish'],
      'the empty data dir is mounted (once: a direct mount mirrors what a refresh would)',
    );
    const metadata = await readMetadata(parts.dataRoot, 'csi-w');
    t.same(metadata.waiting, {
      reason: 'pod has no IP address yet',
      since: new Date(clock.now()).toISOString(),
    });
    t.ok(parts.readiness.isWatching('csi-w'));

    // Republished by kubelet meanwhile: still waiting, nothing issued, no second watch.
    const again = await publishVolume(parts, request(IP_SANS));
    t.same(again.waiting, 'pod has no IP address yet');

    // No event: the gate backoff looks again (1 s, then 2 s), and the reason is not rewritten.
    clock.advance(1000);
    await until(() => clock.pendingTimers() > 0 && clock.nextTimerAt() === clock.now() + 2000, {
      what: 'the second gate retry at 2 s',
    });
    t.equal(specs.length, 0);

    source.set({ podIP: '10.1.0.4', podIPs: [{ ip: '10.1.0.4' }] });
    const podIPsOnDisk = async () => (await readMetadata(parts.dataRoot, 'csi-w')).podIPs?.join();
    await until(async () => (await podIPsOnDisk()) === '10.1.0.4', {
      what: 'the issuance on the pod change',
    });
    t.same(renewals, ['pod ready']);
    t.same(specs[0]?.ipAddresses, ['10.1.0.4'], 'issued with the pod IP');
    t.same((await readMetadata(parts.dataRoot, 'csi-w')).podIPs, ['10.1.0.4']);

    // A change that keeps the IPs re-issues nothing; one that changes them does.
    source.set({
      podIP: '10.1.0.4',
      podIPs: [{ ip: '10.1.0.4' }],
      conditions: [{ type: 'Ready', status: 'True' }],
    });
    source.set({ podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] });
    await until(async () => (await podIPsOnDisk()) === '10.1.0.5', {
      what: 'the re-issuance on the IP change',
    });
    t.equal(specs.length, 2, 'one issuance per IP set');
    t.same(specs[1]?.ipAddresses, ['10.1.0.5']);
    // Both changes may ask (each looks at the pod as it is now); they share one renewal.
    t.same(new Set(renewals), new Set(['pod ready', 'pod IPs changed']));

    await unpublishVolume(parts, 'csi-w', '/pods/w/mount');
    t.notOk(parts.readiness.isWatching('csi-w'), 'unpublish stops the watch');
    parts.readiness.stop();
  },
);

t.test('a renewal whose gates fail waits with the certificate in place', async (t) => {
  const { parts, source, specs } = await waitingParts(t, {
    gates: ['pod-annotation:example.com/ok'],
  });
  source.set(undefined);
  const req = request({});
  const waiting = await publishVolume(parts, req);
  t.equal(
    waiting.waiting,
    'pod does not yet have annotation "example.com/ok" with a non-empty value',
  );
  // A renewal (its timer, or cert-csi renew) while the gates fail issues nothing.
  t.equal(await renewVolume(parts, 'csi-w', 'test'), undefined, 'still waiting: nothing issued');
  t.same(
    await renewNow(parts, { volumeId: 'csi-w' }, () => {}),
    {
      renewed: [],
      failed: [
        {
          volumeId: 'csi-w',
          error:
            'waiting for the pod: pod does not yet have annotation "example.com/ok" with a non-empty value',
        },
      ],
    },
    'cert-csi renew says why',
  );
  t.equal(specs.length, 0);
  const statuses = await readVolumeStatuses(parts.dataRoot);
  t.equal(statuses[0]?.state, 'waiting');
  t.match(statuses[0]?.detail, /^waiting for the pod: pod does not yet have annotation/);
  parts.readiness.stop();
});

t.test('attributes invalid with the pod IPs are refused at publish', async (t) => {
  const { parts, source } = await waitingParts(t);
  // No IP the worst cases stand for: an address with a zone, which no certificate holds.
  source.set({ podIPs: [{ ip: 'fd00::9' }, { ip: 'fe80::1%eth0' }] });
  const err = await publishVolume(
    parts,
    request({ 'csi.cert-manager.io/ip-sans': '${POD_IPS}' }),
  ).catch((e: unknown) => e);
  t.ok(err instanceof IssuanceError && err.reason === 'failed');
  t.match(
    (err as Error).message,
    /^the volume attributes are invalid with the pod's IPs fd00::9,fe80::1%eth0: .*ip-sans/,
  );
  parts.readiness.stop();
});

t.test('embedded mode: the pod never changes, so a pod without its IP is refused', async (t) => {
  const { parts } = await waitingParts(t, { source: contextPodSource });
  t.equal(parts.readiness.canWait, false);
  const err = await publishVolume(parts, request(IP_SANS)).catch((e: unknown) => e);
  t.ok(err instanceof IssuanceError && err.reason === 'failed');
  t.match((err as Error).message, /pod has no IP address yet .*cert-csi publish --pod-ip/);
  t.notOk(await parts.dataRoot.hasVolume('csi-w'), 'nothing written');

  const ok = await publishVolume(
    parts,
    request(IP_SANS, { 'csi.storage.k8s.io/pod.ips': '10.9.0.1, fd00::1' }),
  );
  t.equal(ok.issued, true, 'with --pod-ip the publish issues at once');
  const metadata = await readMetadata(parts.dataRoot, 'csi-w');
  t.same(metadata.podIPs, ['10.9.0.1', 'fd00::1']);
  parts.readiness.stop();
});

t.test('a pod change of a volume whose stored attributes are invalid issues nothing', async (t) => {
  const { parts, source, specs, logs } = await waitingParts(t);
  source.set(undefined);
  await publishVolume(parts, request(IP_SANS));
  const metadata = await readMetadata(parts.dataRoot, 'csi-w');
  metadata.volumeContext['csi.cert-manager.io/duration'] = 'soon';
  await writeMetadata(parts.dataRoot, metadata);
  // The stored attributes are parsed once, at a start: a restart over the same data root.
  parts.registry = new VolumeRegistry();
  await rediscoverVolumes(parts);
  t.ok(
    logs.some(([level, obj, msg]) => {
      const err = (obj as { err?: string }).err ?? '';
      return level === 'error' && /attributes are invalid/.test(msg ?? '') && /duration/.test(err);
    }),
    'the start names the invalid attribute',
  );
  source.set({ podIPs: [{ ip: '10.1.0.4' }] });
  // Called as the informer calls it, and awaited: the pod change has been looked at.
  await podChanged(parts, 'csi-w', (id, reason) => renewVolume(parts, id, reason));
  t.equal(specs.length, 0);
  t.match(await readFile(parts.dataRoot.metadataPath('csi-w'), 'utf8'), /"waiting"/);
  parts.readiness.stop();
});

t.test('defaults: no gates, readiness applies only to volumes using the pod IPs', async (t) => {
  t.same(DEFAULT_READINESS.gates, []);
  const readiness = new PodReadiness(
    contextPodSource,
    DEFAULT_READINESS,
    { now: () => 0 } as never,
    () => {},
  );
  t.notOk(readiness.applies({}));
  t.ok(readiness.applies({ podIPs: [] }));
  readiness.stop();
  t.equal(readiness.retryLater('csi-w'), undefined, 'a stopped plugin arms no gate retry');
});

t.test('a pod not yet seen; a pod losing its IP; a volume recorded without IPs', async (t) => {
  const { parts, source, specs } = await waitingParts(t);
  const first = await publishVolume(parts, request(IP_SANS));
  t.equal(first.waiting, 'pod shop/web-0 not yet observed by informer');

  source.set({ podIPs: [{ ip: '10.2.0.1' }] });
  await until(
    async () => (await readMetadata(parts.dataRoot, 'csi-w')).podIPs?.join() === '10.2.0.1',
    {
      what: 'the issuance',
    },
  );
  // The pod loses its IP (being torn down): the certificate stays, nothing is asked.
  source.set(undefined);
  // A metadata.json from before podIPs were recorded: the next change re-issues to record them.
  const metadata = await readMetadata(parts.dataRoot, 'csi-w');
  delete metadata.podIPs;
  await writeMetadata(parts.dataRoot, metadata);
  source.set({ podIPs: [{ ip: '10.2.0.1' }] });
  await until(async () => (await readMetadata(parts.dataRoot, 'csi-w')).podIPs !== undefined, {
    what: 'the re-issuance that records the IPs',
  });
  t.equal(specs.length, 2, 'the lost IP asked nothing; the unrecorded IPs asked one issuance');
  parts.readiness.stop();
});

t.test(
  'a look that ends after the unpublish writes nothing; status of an expired waiting volume',
  async (t) => {
    const { parts, clock, source } = await waitingParts(t);
    source.set(undefined);
    await publishVolume(parts, request(IP_SANS));
    const metadata = await readMetadata(parts.dataRoot, 'csi-w');
    parts.registry.abort('csi-w', new Error('volume unpublished'));
    await markWaiting(parts, 'csi-w', metadata, 'another reason');
    t.equal(
      (await readMetadata(parts.dataRoot, 'csi-w')).waiting?.reason,
      'pod has no IP address yet',
    );

    // A certificate that expired while its renewal waits for the pod: expired says more.
    const stored = await readMetadata(parts.dataRoot, 'csi-w');
    stored.notAfter = new Date(clock.now() - 1000).toISOString();
    await writeMetadata(parts.dataRoot, stored);
    const [status] = await readVolumeStatuses(parts.dataRoot, new Date(clock.now()));
    t.equal(status?.state, 'expired');
    t.equal(status?.detail, 'waiting for the pod: pod has no IP address yet');
    parts.readiness.stop();
  },
);

t.test(
  'gates that passed at publish and fail at renewal: the pod change ends the wait',
  async (t) => {
    const { parts, source, specs } = await waitingParts(t, {
      gates: ['pod-annotation:example.com/ok'],
    });
    source.set(undefined, { 'example.com/ok': 'yes' });
    t.equal((await publishVolume(parts, request({}))).issued, true, 'issued at publish');
    t.notOk(parts.readiness.isWatching('csi-w'), 'no pod IPs, no wait: not watched');
    source.set(undefined, {});
    t.equal(await renewVolume(parts, 'csi-w', 'renewal time'), undefined, 'the renewal waits');
    t.ok(parts.readiness.isWatching('csi-w'), 'watched from then on');
    source.set(undefined, { 'example.com/ok': 'again' });
    await until(() => specs.length === 2, { what: 'the renewal on the pod change' });
    parts.readiness.stop();
  },
);

t.test('a renewal that ends after the plugin stopped arms no timer', async (t) => {
  const { parts, source, specs } = await waitingParts(t);
  source.set({ podIPs: [{ ip: '10.3.0.1' }] });
  await publishVolume(parts, request(IP_SANS));
  t.ok(parts.scheduler.has('csi-w'), 'issued and scheduled');
  const issue = parts.issuance.issue;
  // The certificate arrives just as the plugin stops (abortAll): it is written, not scheduled.
  parts.issuance.issue = async (...args) => {
    const issued = await issue(...args);
    parts.scheduler.clear();
    parts.registry.abortAll(new Error('plugin stopping'));
    return issued;
  };
  t.ok(await renewVolume(parts, 'csi-w', 'renewal time'));
  t.equal(specs.length, 2);
  t.notOk(parts.scheduler.has('csi-w'), 'no timer outlives the plugin');
  parts.readiness.stop();
});

t.test('a pod change whose issuance throws is logged, never a rejection', async (t) => {
  // A source that reports no change: only the call below looks at the pod.
  let pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'shop' } };
  const silent: PodSource = {
    changes: true,
    async start() {},
    get: () => pod,
    onChange: () => () => {},
  };
  const { parts, logs } = await waitingParts(t, { source: silent });
  const result = await publishVolume(parts, request(IP_SANS));
  t.same(result, { issued: false, waiting: 'pod has no IP address yet' });
  pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'shop' },
    status: { podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] },
  };
  // Called as the informer calls it; the renew function fails outright (a full disk, a bug).
  await podChanged(parts, 'csi-w', async () => {
    throw new Error('disk full');
  });
  const logged = logs.find(([, , msg]) =>
    msg?.startsWith('cannot act on the change of the volume pod'),
  );
  t.same(logged?.slice(0, 2), ['error', { volumeId: 'csi-w', err: 'disk full' }], 'logged');
});

t.test(
  'gate waits and issuance failures back off separately: a change of class starts the other afresh',
  async (t) => {
    const { parts, clock, source, specs } = await waitingParts(t, {
      gates: ['pod-annotation:example.com/ok'],
    });
    source.set(undefined, { 'example.com/ok': 'yes' });
    t.equal((await publishVolume(parts, request({}))).issued, true, 'issued at publish');
    const issue = parts.issuance.issue;
    parts.issuance.issue = async () => {
      throw new Error('issuer down');
    };
    for (let i = 0; i < 3; i++) await renewVolume(parts, 'csi-w', 'renewal time');
    const failing = await readMetadata(parts.dataRoot, 'csi-w');
    t.equal(failing.failures, 3, 'three issuance failures');
    t.equal(
      failing.nextRetryTime,
      new Date(clock.now() + 120_000).toISOString(),
      '30 s, 60 s, 120 s',
    );

    // The pod stops passing its gates: the gate backoff starts at its first step, and the
    // issuance backoff is reset (its count and retry time go; the last error stays for status).
    source.set(undefined, {});
    t.equal(await renewVolume(parts, 'csi-w', 'retry after failure'), undefined, 'waits');
    const waiting = await readMetadata(parts.dataRoot, 'csi-w');
    t.equal(waiting.failures, undefined, 'the issuance failure count is reset');
    t.equal(waiting.nextRetryTime, undefined);
    t.equal(waiting.lastError?.message, 'issuer down');
    t.ok(waiting.waiting, 'marked waiting');
    t.equal(clock.nextTimerAt(), clock.now() + 1_000, 'the gate retry: the first step, 1 s');

    // The gates pass and the issuance fails again: its backoff starts at 30 s, not 240 s.
    source.set(undefined, { 'example.com/ok': 'again' });
    await until(async () => (await readMetadata(parts.dataRoot, 'csi-w')).failures === 1, {
      what: 'the failed issuance on the pod change',
    });
    const failedAgain = await readMetadata(parts.dataRoot, 'csi-w');
    t.equal(failedAgain.nextRetryTime, new Date(clock.now() + 30_000).toISOString());

    // The gates fail again: the gate backoff starts afresh too (1 s, not the second step).
    source.set(undefined, {});
    await renewVolume(parts, 'csi-w', 'retry after failure');
    t.equal(clock.nextTimerAt(), clock.now() + 1_000, 'the gate retry: 1 s again');

    // And a success after all that starts both afresh.
    parts.issuance.issue = issue;
    source.set(undefined, { 'example.com/ok': 'finally' });
    await until(() => specs.length === 2, { what: 'the renewal once the issuer is back' });
    await until(async () => (await readMetadata(parts.dataRoot, 'csi-w')).failures === undefined, {
      what: 'the failure count cleared',
    });
    parts.readiness.stop();
  },
);
