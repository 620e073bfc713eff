import t from 'tap';
import { ClusterTrustBundleKind } from '../../src/api/cluster-trust-bundle.js';
import { PodCertificateRequestKind } from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { ManualClock } from '../../src/base/clock.js';
import { servedControllers } from '../../src/cli/controller/served-apis.js';
import { POD_CERTIFICATE_SIGNER } from '../../src/issuer/podcertificaterequests/pod-certificate-signer.js';
import { TRUST_BUNDLE_PUBLISHER } from '../../src/issuer/podcertificaterequests/trust-bundle-publisher.js';
import { isStoreError } from '../../src/store/errors.js';
import { isResourceNotServed } from '../../src/store/kubernetes/api-call.js';
import { ApiException, KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import {
  chooseServedVersion,
  rediscoveryDelayMs,
  wantedVersions,
} from '../../src/store/kubernetes/served-version-policy.js';
import {
  ServedVersions,
  type VersionDiscovery,
} from '../../src/store/kubernetes/served-versions.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import { rejection, until } from '../support/eventually.js';
import { recordingLogger } from '../support/recording-logger.js';

// Which version of a kind the Kubernetes store speaks: the policy (pure) and its cache, over a
// scripted discovery whose answers a test changes as a control-plane upgrade would.

t.test('chooseServedVersion: the first wanted version the server serves', async (t) => {
  const cases: Array<
    [wanted: string[], served: string[], chosen: string | undefined, why: string]
  > = [
    [['v1', 'v1beta1'], ['v1'], 'v1', '1.37 default'],
    [
      ['v1', 'v1beta1'],
      ['v1beta1', 'v1'],
      'v1',
      'both served: the preferred one, whatever the order',
    ],
    [['v1', 'v1beta1'], ['v1beta1'], 'v1beta1', '1.36: the fallback'],
    [['v1', 'v1beta1'], ['v1alpha1'], undefined, 'only a version cert-csi cannot speak'],
    [['v1', 'v1beta1'], [], undefined, 'none served'],
  ];
  for (const [wanted, served, chosen, why] of cases) {
    t.equal(chooseServedVersion(wanted, served), chosen, why);
  }
  t.same(wantedVersions(PodCertificateRequestKind), ['v1', 'v1beta1']);
  t.same(wantedVersions(SecretKind), ['v1'], 'a kind with one version: that one');
});

t.test('rediscoveryDelayMs: doubles per unchanged check, capped', async (t) => {
  const cases: Array<[checks: number, delay: number]> = [
    [0, 1_000],
    [1, 2_000],
    [3, 8_000],
    [6, 60_000],
    [1_000, 60_000],
  ];
  for (const [checks, delay] of cases) {
    t.equal(rediscoveryDelayMs(checks, 1_000, 60_000), delay, `${checks} unchanged checks`);
  }
});

/** A discovery whose served resources a test sets; counts how often it is asked. */
function scriptedDiscovery(served: Record<string, Record<string, string[]>>) {
  let state = served;
  const asked = { groups: 0, resources: 0 };
  let failing: Error | undefined;
  const discovery: VersionDiscovery = {
    async groupVersions(group) {
      asked.groups++;
      if (failing) throw failing;
      const versions = Object.keys(state[group] ?? {});
      return versions.length > 0 ? versions : undefined;
    },
    async resources(group, version) {
      asked.resources++;
      return (state[group]?.[version] ?? []).map((name) => ({ name }));
    },
  };
  return {
    discovery,
    asked,
    set: (next: typeof served) => {
      state = next;
    },
    fail: (err: Error | undefined) => {
      failing = err;
    },
  };
}

const G = 'certificates.k8s.io';
const BOTH = ['podcertificaterequests', 'clustertrustbundles'];

function harness(served: Record<string, Record<string, string[]>>) {
  const clock = new ManualClock();
  const logger = recordingLogger();
  const scripted = scriptedDiscovery(served);
  const versions = new ServedVersions({ discovery: scripted.discovery, clock, logger });
  const changes = () =>
    logger.records.filter(([, , msg]) => msg === 'served version changed').map(([, o]) => o);
  return { clock, logger, versions, changes, ...scripted };
}

t.test('a kind with one version never asks discovery', async (t) => {
  const h = harness({});
  t.equal(await h.versions.versionOf(SecretKind), 'v1');
  t.same(h.asked, { groups: 0, resources: 0 });
});

t.test('resolved once, then cached; a group version without the resource is skipped', async (t) => {
  // 1.35 without ClusterTrustBundles: v1beta1 serves only PodCertificateRequests.
  const h = harness({
    [G]: { v1beta1: ['podcertificaterequests'], v1: ['certificatesigningrequests'] },
  });
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1beta1');
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1beta1', 'cached');
  t.same(h.asked, { groups: 1, resources: 2 }, 'v1 looked into (no such resource), then v1beta1');
  t.equal(await h.versions.servedVersion(ClusterTrustBundleKind), undefined, 'none served');
  const err = await rejection(h.versions.versionOf(ClusterTrustBundleKind));
  t.ok(isStoreError(err, 'NotFound'));
  t.equal(
    (err as Error).message,
    'the API server serves clustertrustbundles.certificates.k8s.io in none of v1, v1beta1 (discovery is checked again in 1 s)',
  );
  t.same(h.changes(), [], 'a first resolution is no change');
});

t.test('a version no longer served: one re-check, one log line, the other version', async (t) => {
  const h = harness({ [G]: { v1beta1: BOTH } });
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1beta1');
  // The control plane is upgraded: 1.37 default.
  h.set({ [G]: { v1: BOTH } });
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1beta1', 'nothing said yet');
  h.clock.advance(5_000);
  h.versions.notServed(PodCertificateRequestKind, 'v1beta1');
  h.versions.notServed(PodCertificateRequestKind, 'v1beta1');
  const [a, b] = await Promise.all([
    h.versions.versionOf(PodCertificateRequestKind),
    h.versions.versionOf(PodCertificateRequestKind),
  ]);
  t.same([a, b], ['v1', 'v1'], 'concurrent users share one check');
  t.equal(h.asked.groups, 2, 'one more discovery check');
  t.same(h.changes(), [
    { resource: 'podcertificaterequests.certificates.k8s.io', from: 'v1beta1', to: 'v1' },
  ]);
  // A late 404 of a request sent at the old version changes nothing.
  h.versions.notServed(PodCertificateRequestKind, 'v1beta1');
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1');
  t.equal(h.asked.groups, 2);
});

t.test('repeated "not served" with nothing changed: checks back off, no 404 loop', async (t) => {
  const h = harness({ [G]: { v1: BOTH } });
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1');
  h.clock.advance(1_000);
  const checkTimes: number[] = [];
  const start = h.clock.now();
  // A client that retries every 100 ms while the server keeps answering 404 (discovery still
  // says v1: an inconsistent server): it is refused locally between checks.
  let refusedLocally = 0;
  let notFound = 0;
  for (let i = 0; i < 1_000; i++) {
    const before = h.asked.groups;
    try {
      await h.versions.versionOf(PodCertificateRequestKind);
      h.versions.notServed(PodCertificateRequestKind, 'v1');
    } catch (err) {
      if (isStoreError(err, 'NotFound')) notFound++;
      refusedLocally++;
    }
    if (h.asked.groups > before) checkTimes.push(h.clock.now() - start);
    h.clock.advance(100);
  }
  const gaps = checkTimes.slice(1).map((time, i) => time - (checkTimes[i] as number));
  t.same(gaps.slice(0, 5), [2_000, 4_000, 8_000, 16_000, 32_000], 'the gap doubles');
  t.equal(notFound, refusedLocally, 'every local refusal is NotFound');
  t.ok(refusedLocally > 980, `refused without asking the server (${refusedLocally} of 1000)`);
  t.same(h.changes(), [], 'no change, no log line');
});

t.test('a success resets the backoff; discovery failures are passed on and spaced', async (t) => {
  const h = harness({ [G]: { v1: BOTH } });
  await h.versions.versionOf(PodCertificateRequestKind);
  for (let i = 0; i < 3; i++) {
    h.clock.advance(60_000);
    h.versions.notServed(PodCertificateRequestKind, 'v1');
    await h.versions.versionOf(PodCertificateRequestKind);
  }
  h.versions.confirmed(PodCertificateRequestKind);
  h.versions.notServed(PodCertificateRequestKind, 'v1');
  h.clock.advance(999);
  await rejection(h.versions.versionOf(PodCertificateRequestKind));
  h.clock.advance(1);
  t.equal(
    await h.versions.versionOf(PodCertificateRequestKind),
    'v1',
    'checked after the base delay',
  );

  h.fail(new Error('discovery down'));
  h.clock.advance(5_000);
  h.versions.notServed(PodCertificateRequestKind, 'v1');
  const err = await rejection(h.versions.versionOf(PodCertificateRequestKind));
  t.equal((err as Error).message, 'discovery down', "the failure is the caller's to retry");
  const asked = h.asked.groups;
  await rejection(h.versions.versionOf(PodCertificateRequestKind));
  t.equal(h.asked.groups, asked, 'not asked again before the delay');
  h.fail(undefined);
  h.clock.advance(60_000);
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1');

  // A first resolution that fails leaves nothing cached: the next use asks again.
  const fresh = harness({ [G]: { v1: BOTH } });
  fresh.fail(new Error('down'));
  await rejection(fresh.versions.versionOf(ClusterTrustBundleKind));
  fresh.fail(undefined);
  t.equal(await fresh.versions.versionOf(ClusterTrustBundleKind), 'v1');
});

t.test('an API enabled late is found at the next due check', async (t) => {
  const h = harness({ [G]: { v1: ['certificatesigningrequests'] } });
  t.equal(await h.versions.servedVersion(PodCertificateRequestKind), undefined);
  h.set({ [G]: { v1: ['certificatesigningrequests', ...BOTH] } });
  t.equal(await h.versions.servedVersion(PodCertificateRequestKind), undefined, 'not due yet');
  h.clock.advance(1_000);
  t.equal(await h.versions.servedVersion(PodCertificateRequestKind), 'v1');
  t.same(h.changes(), [
    { resource: 'podcertificaterequests.certificates.k8s.io', from: 'none', to: 'v1' },
  ]);
});

t.test('a caller speaking fewer versions has its own entry', async (t) => {
  const h = harness({ [G]: { v1: BOTH, v1beta1: BOTH } });
  const v1beta1Only = { ...PodCertificateRequestKind, version: 'v1beta1', versions: ['v1beta1'] };
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1');
  t.equal(await h.versions.versionOf(v1beta1Only), 'v1beta1');
  t.equal(await h.versions.versionOf(PodCertificateRequestKind), 'v1');
});

t.test("isResourceNotServed: the API server's 404 for a resource, not for an object", async (t) => {
  const status = (details?: object) =>
    JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', details });
  const cases: Array<[err: unknown, notServed: boolean, why: string]> = [
    [new ApiException(404, 'Not Found', status({}), {}), true, 'no object named'],
    [new ApiException(404, 'Not Found', status(), {}), true, 'no details'],
    [new ApiException(404, 'Not Found', '404 page not found', {}), true, 'not a Status'],
    [
      new ApiException(
        404,
        'Not Found',
        status({ name: 'req-1', kind: 'podcertificaterequests' }),
        {},
      ),
      false,
      'an object that does not exist',
    ],
    [
      new ApiException(404, 'Not Found', status({ name: 'shop', kind: 'namespaces' }), {}),
      false,
      'a namespace that does not exist',
    ],
    [new ApiException(409, 'Conflict', status({}), {}), false, 'another code'],
    [
      new ApiException(404, 'Not Found', { details: { name: 'req-1' } }, {}),
      false,
      'a Status already parsed',
    ],
    [new Error('connection refused'), false, 'no answer'],
  ];
  for (const [err, notServed, why] of cases) t.equal(isResourceNotServed(err), notServed, why);
});

t.test('the Kubernetes store: a missing object is not a version gone', async (t) => {
  const server = await FakeApiServer.start();
  t.teardown(() => server.close());
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig());
  const logger = recordingLogger();
  const store = new KubernetesStore({ kubeConfig, logger });
  // `/apis` and `/apis/<group>/<version>`: the requests that are not on a resource.
  const discoveries = () => server.requests.filter((r) => r.resource === undefined).length;
  t.ok(
    isStoreError(
      await rejection(store.get(PodCertificateRequestKind, 'missing', 'shop')),
      'NotFound',
    ),
  );
  const asked = discoveries();
  t.ok(asked >= 1, 'discovery was asked once for the version');
  t.ok(
    isStoreError(
      await rejection(store.get(PodCertificateRequestKind, 'missing', 'shop')),
      'NotFound',
    ),
  );
  t.ok(
    isStoreError(
      await rejection(store.delete(PodCertificateRequestKind, 'missing', 'shop')),
      'NotFound',
    ),
  );
  t.equal(
    discoveries(),
    asked,
    'no new discovery: the resource is served, the object is not there',
  );
  t.same(
    server.requests
      .filter((r) => r.resource === 'podcertificaterequests')
      .map((r) => r.path.split('/')[3]),
    ['v1', 'v1', 'v1'],
    'every request in v1',
  );
  t.same(
    logger.records.filter(([, , msg]) => msg === 'served version changed'),
    [],
  );
});

t.test('a version served, then none: said once, refused locally', async (t) => {
  const h = harness({ [G]: { v1: BOTH } });
  t.equal(await h.versions.versionOf(ClusterTrustBundleKind), 'v1');
  // The whole group goes away.
  h.set({});
  h.clock.advance(1_000);
  h.versions.notServed(ClusterTrustBundleKind, 'v1');
  t.equal(await h.versions.servedVersion(ClusterTrustBundleKind), undefined);
  t.same(h.changes(), [
    { resource: 'clustertrustbundles.certificates.k8s.io', from: 'v1', to: 'none' },
  ]);
  t.ok(isStoreError(await rejection(h.versions.versionOf(ClusterTrustBundleKind)), 'NotFound'));
});

t.test('servedControllers: decided by discovery; a failed discovery keeps them', async (t) => {
  const enabled = new Set([POD_CERTIFICATE_SIGNER, TRUST_BUNDLE_PUBLISHER, 'other']);
  const logger = recordingLogger();
  const kept = await servedControllers(
    async () => {
      throw new Error('discovery down');
    },
    enabled,
    logger,
  );
  t.same([...kept].sort(), [...enabled].sort(), 'kept: their informers retry');
  t.same(logger.records, [], 'nothing said');
  const served = await servedControllers(
    async (kind) => (kind.plural === 'podcertificaterequests' ? 'v1beta1' : undefined),
    new Set([POD_CERTIFICATE_SIGNER, TRUST_BUNDLE_PUBLISHER]),
  );
  t.same([...served], [POD_CERTIFICATE_SIGNER], 'without a logger: silently');
  const asked: string[] = [];
  await servedControllers(
    async (kind) => {
      asked.push(kind.plural);
      return 'v1';
    },
    new Set([TRUST_BUNDLE_PUBLISHER]),
  );
  t.same(asked, ['clustertrustbundles'], 'the API of a controller not enabled is not asked');
});

t.test('the Kubernetes store: a watch refused 404 switches the next list', async (t) => {
  const server = await FakeApiServer.start({
    servedVersions: { podcertificaterequests: ['v1beta1'] },
  });
  t.teardown(() => server.close());
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig());
  const logger = recordingLogger();
  const store = new KubernetesStore({ kubeConfig, logger, rediscoveryBaseDelayMs: 10 });
  const listed = await store.list(PodCertificateRequestKind);
  const failed = new Promise<unknown>((resolve) => {
    store.watch(
      PodCertificateRequestKind,
      { resourceVersion: listed.resourceVersion },
      { onEvent: () => {}, onError: resolve },
    );
  });
  await until(() => server.openWatches === 1, { what: 'the watch to open' });
  // The watch ends cleanly (its timeout), and before it is reopened the server serves v1
  // only: the reopened watch is refused 404.
  t.equal(server.endWatches(), 1);
  server.setServedVersions('podcertificaterequests', ['v1']);
  const err = await failed;
  t.ok(isStoreError(err, 'NotFound'), 'the watch fails NotFound');
  await new Promise((resolve) => setTimeout(resolve, 20));
  const again = await store.list(PodCertificateRequestKind);
  t.equal(typeof again.resourceVersion, 'string');
  const lists = server.requests.filter((r) => r.resource === 'podcertificaterequests');
  t.same(
    lists.map((r) => [r.verb, r.path.split('/')[3], r.status]),
    [
      ['list', 'v1beta1', 200],
      ['watch', 'v1beta1', 200],
      ['watch', 'v1beta1', 404],
      ['list', 'v1', 200],
    ],
  );
  t.same(logger.records.filter(([, , msg]) => msg === 'served version changed').length, 1);
});
