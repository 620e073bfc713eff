import t from 'tap';
import type { ClusterTrustBundle } from '../../src/api/cluster-trust-bundle.js';
import type { PodCertificateRequest } from '../../src/api/pod-certificate-request.js';
import { clientNode as k8s } from '../support/client-node-full.js';
import {
  kubeletRequest,
  makeSigner,
  newKey,
  trustBundle,
} from '../support/pod-certificate-fixtures.js';
import { apiError } from './api-error.js';
import { FakeApiServer, type FakeApiServerOptions } from './fake-api-server.js';

// The certificates.k8s.io kinds served in v1, v1beta1, both or neither, over one storage, with
// the API server's conversion between the versions, changed at run time as an upgrade does.

const GROUP = 'certificates.k8s.io';
const NS = 'shop';
const NOT_FOUND = 'the server could not find the requested resource';

async function start(t: { teardown(fn: () => unknown): void }, options: FakeApiServerOptions = {}) {
  const server = await FakeApiServer.start(options);
  t.teardown(() => server.close());
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig());
  return {
    server,
    kubeConfig,
    custom: kubeConfig.makeApiClient(k8s.CustomObjectsApi),
    apis: kubeConfig.makeApiClient(k8s.ApisApi),
  };
}

/** The versions of the group discovery lists, and per version the resources. */
async function discovered(h: Awaited<ReturnType<typeof start>>) {
  const groups = await h.apis.getAPIVersions();
  const group = groups.groups.find((g) => g.name === GROUP);
  const versions = group?.versions.map((v) => v.version) ?? [];
  const resources: Record<string, string[]> = {};
  for (const version of versions) {
    const list = await h.custom.getAPIResources({ group: GROUP, version });
    resources[version] = list.resources.map((r) => r.name).sort();
  }
  return { versions, preferred: group?.preferredVersion?.version, resources };
}

const key = await newKey();
const signer = await makeSigner();

t.test('discovery lists exactly what is served', async (t) => {
  const cases: Array<[FakeApiServerOptions['servedVersions'], string[], Record<string, string[]>]> =
    [
      [
        undefined,
        ['v1', 'v1beta1'],
        {
          v1: [
            'certificatesigningrequests',
            'certificatesigningrequests/status',
            'clustertrustbundles',
            'podcertificaterequests',
            'podcertificaterequests/status',
          ],
          v1beta1: [
            'clustertrustbundles',
            'podcertificaterequests',
            'podcertificaterequests/status',
          ],
        },
      ],
      [
        { podcertificaterequests: ['v1beta1'], clustertrustbundles: [] },
        ['v1', 'v1beta1'],
        {
          v1: ['certificatesigningrequests', 'certificatesigningrequests/status'],
          v1beta1: ['podcertificaterequests', 'podcertificaterequests/status'],
        },
      ],
      [
        { podcertificaterequests: [], clustertrustbundles: [] },
        ['v1'],
        {
          v1: ['certificatesigningrequests', 'certificatesigningrequests/status'],
        },
      ],
    ];
  for (const [servedVersions, versions, resources] of cases) {
    const h = await start(t, servedVersions ? { servedVersions } : {});
    const seen = await discovered(h);
    t.same(seen, { versions, preferred: 'v1', resources }, JSON.stringify(servedVersions));
    if (!versions.includes('v1beta1')) {
      const status = await apiError(
        h.custom.getAPIResources({ group: GROUP, version: 'v1beta1' }),
        404,
      );
      t.equal(status.message, NOT_FOUND, 'a group version not served is 404');
    }
  }
});

t.test('a version not served answers 404 to every verb, watch too', async (t) => {
  const h = await start(t, {
    servedVersions: { podcertificaterequests: ['v1'], clustertrustbundles: ['v1'] },
  });
  const pcr = { group: GROUP, version: 'v1beta1', plural: 'podcertificaterequests' };
  const request = await kubeletRequest(key, 'pkix');
  const calls: Array<[string, Promise<unknown>]> = [
    ['list', h.custom.listNamespacedCustomObject({ ...pcr, namespace: NS })],
    ['list all', h.custom.listClusterCustomObject(pcr)],
    ['get', h.custom.getNamespacedCustomObject({ ...pcr, namespace: NS, name: 'x' })],
    ['create', h.custom.createNamespacedCustomObject({ ...pcr, namespace: NS, body: request })],
    [
      'update',
      h.custom.replaceNamespacedCustomObject({ ...pcr, namespace: NS, name: 'x', body: request }),
    ],
    [
      'status',
      h.custom.replaceNamespacedCustomObjectStatus({
        ...pcr,
        namespace: NS,
        name: 'x',
        body: request,
      }),
    ],
    ['delete', h.custom.deleteNamespacedCustomObject({ ...pcr, namespace: NS, name: 'x' })],
  ];
  for (const [verb, call] of calls) {
    const status = await apiError(call, 404);
    t.match(status, { reason: 'NotFound', message: NOT_FOUND }, verb);
    t.notOk(status.details?.name, `${verb}: no object named: the resource is not served`);
  }
  const watchStatus = await new Promise<unknown>((resolve) => {
    void new k8s.Watch(h.kubeConfig).watch(
      `/apis/${GROUP}/v1beta1/podcertificaterequests`,
      {},
      () => {},
      (err: unknown) => resolve((err as { statusCode?: number }).statusCode),
    );
  });
  t.equal(watchStatus, 404, 'watch');
  t.equal(h.server.openWatches, 0);
});

t.test('one storage: each version reads the same object in its own shape', async (t) => {
  const h = await start(t);
  const v1beta1 = { group: GROUP, version: 'v1beta1', plural: 'podcertificaterequests' };
  const v1 = { ...v1beta1, version: 'v1' };
  // A 1.35 kubelet's request, through v1beta1.
  const created = (await h.custom.createNamespacedCustomObject({
    ...v1beta1,
    namespace: NS,
    body: await kubeletRequest(key, 'pkix'),
  })) as PodCertificateRequest;
  t.equal(created.apiVersion, `${GROUP}/v1beta1`);
  t.ok(created.spec.pkixPublicKey && created.spec.proofOfPossession, 'v1beta1 shows the pair');
  const name = created.metadata.name;
  const read = (await h.custom.getNamespacedCustomObject({
    ...v1,
    namespace: NS,
    name,
  })) as PodCertificateRequest;
  t.equal(read.apiVersion, `${GROUP}/v1`);
  t.equal(read.spec.pkixPublicKey, undefined, 'v1 has no pkixPublicKey');
  t.equal(read.spec.proofOfPossession, undefined, 'nor proofOfPossession');
  t.equal(read.metadata.resourceVersion, created.metadata.resourceVersion, 'the same object');
  const list = (await h.custom.listNamespacedCustomObject({ ...v1, namespace: NS })) as {
    apiVersion: string;
    items: PodCertificateRequest[];
  };
  t.equal(list.apiVersion, `${GROUP}/v1`);
  t.same(
    list.items.map((i) => [i.apiVersion, i.spec.pkixPublicKey]),
    [[`${GROUP}/v1`, undefined]],
  );

  // A v1 client updates it (a label): what v1 cannot express is kept in storage.
  const labelled = (await h.custom.replaceNamespacedCustomObject({
    ...v1,
    namespace: NS,
    name,
    body: { ...read, metadata: { ...read.metadata, labels: { a: 'b' } } },
  })) as PodCertificateRequest;
  t.equal(labelled.apiVersion, `${GROUP}/v1`);
  const patched = (await h.custom.patchNamespacedCustomObject(
    { ...v1, namespace: NS, name, body: { metadata: { labels: { c: 'd' } } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  )) as PodCertificateRequest;
  t.equal(patched.spec.pkixPublicKey, undefined, 'a patch through v1 answers in v1');
  const again = (await h.custom.getNamespacedCustomObject({
    ...v1beta1,
    namespace: NS,
    name,
  })) as PodCertificateRequest;
  t.equal(again.spec.pkixPublicKey, created.spec.pkixPublicKey, 'the pair survives v1 writes');
  t.same(again.metadata.labels, { a: 'b', c: 'd' });

  // Watches: each in its version.
  const events: Record<string, PodCertificateRequest[]> = { v1: [], v1beta1: [] };
  const aborts: AbortController[] = [];
  for (const version of ['v1', 'v1beta1']) {
    aborts.push(
      await new k8s.Watch(h.kubeConfig).watch(
        `/apis/${GROUP}/${version}/namespaces/${NS}/podcertificaterequests`,
        {},
        (_type: string, object: PodCertificateRequest) => events[version]?.push(object),
        () => {},
      ),
    );
  }
  t.teardown(() => {
    for (const a of aborts) a.abort();
  });
  while ((events.v1?.length ?? 0) < 1 || (events.v1beta1?.length ?? 0) < 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(
    [events.v1?.[0]?.apiVersion, events.v1?.[0]?.spec.pkixPublicKey],
    [`${GROUP}/v1`, undefined],
    'a v1 watch sees the v1 shape',
  );
  t.same(
    [events.v1beta1?.[0]?.apiVersion, Boolean(events.v1beta1?.[0]?.spec.pkixPublicKey)],
    [`${GROUP}/v1beta1`, true],
    'a v1beta1 watch the v1beta1 shape',
  );

  // ClusterTrustBundles: the same fields in both, only apiVersion differs.
  const bundle = (await h.custom.createClusterCustomObject({
    group: GROUP,
    version: 'v1',
    plural: 'clustertrustbundles',
    body: trustBundle('plain', signer.certificatePem),
  })) as ClusterTrustBundle;
  t.equal(bundle.apiVersion, `${GROUP}/v1`);
  const old = (await h.custom.getClusterCustomObject({
    group: GROUP,
    version: 'v1beta1',
    plural: 'clustertrustbundles',
    name: 'plain',
  })) as ClusterTrustBundle;
  t.same([old.apiVersion, old.spec], [`${GROUP}/v1beta1`, bundle.spec]);
});

t.test('v1 create requires stubPKCS10Request; the pair cannot be sent through it', async (t) => {
  const h = await start(t);
  const v1 = { group: GROUP, version: 'v1', plural: 'podcertificaterequests' };
  const status = await apiError(
    h.custom.createNamespacedCustomObject({
      ...v1,
      namespace: NS,
      body: await kubeletRequest(key, 'pkix'),
    }),
    422,
  );
  t.match(
    status.message,
    /^PodCertificateRequest\.certificates\.k8s\.io "req-7xk2q" is invalid: spec\.stubPKCS10Request: Required value$/,
  );
  t.same(
    (
      await h.server.store.list({
        group: GROUP,
        version: 'v1',
        kind: 'PodCertificateRequest',
        plural: 'podcertificaterequests',
        namespaced: true,
      })
    ).items,
    [],
    'nothing stored',
  );
  const created = (await h.custom.createNamespacedCustomObject({
    ...v1,
    namespace: NS,
    body: await kubeletRequest(key, 'stub'),
  })) as PodCertificateRequest;
  t.equal(created.apiVersion, `${GROUP}/v1`);
  t.ok(created.spec.stubPKCS10Request);
});

t.test(
  'setServedVersions: an upgrade in place, watches of the dropped version broken',
  async (t) => {
    const h = await start(t, {
      servedVersions: { podcertificaterequests: ['v1beta1'], clustertrustbundles: ['v1beta1'] },
    });
    t.same(h.server.servedVersionsOf('podcertificaterequests'), ['v1beta1']);
    t.same(h.server.servedVersionsOf('certificatesigningrequests'), ['v1'], 'a one-version kind');
    t.same(h.server.servedVersionsOf('nothing'), []);
    let ended: unknown = 'open';
    await new k8s.Watch(h.kubeConfig).watch(
      `/apis/${GROUP}/v1beta1/podcertificaterequests`,
      {},
      () => {},
      (err: unknown) => {
        ended = err;
      },
    );
    while (h.server.openWatches < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    // Order does not matter, the preferred one is listed first.
    h.server.setServedVersions('podcertificaterequests', ['v1beta1', 'v1']);
    t.same(h.server.servedVersionsOf('podcertificaterequests'), ['v1', 'v1beta1']);
    t.equal(h.server.openWatches, 1, 'a watch of a version still served stays');
    h.server.setServedVersions('podcertificaterequests', ['v1']);
    while (ended === 'open') await new Promise((resolve) => setTimeout(resolve, 10));
    t.ok(ended instanceof Error, 'the watch of v1beta1 is broken, as by a restart');
    t.same((await discovered(h)).resources.v1beta1, ['clustertrustbundles']);
    t.throws(() => h.server.setServedVersions('podcertificaterequests', ['v2']), {
      message: 'fake API server: podcertificaterequests has no version v2 (only v1, v1beta1)',
    });
    t.throws(() => h.server.setServedVersions('secrets', ['v1']), {
      message: 'fake API server: secrets is not a kind with several versions',
    });
    await t.rejects(
      FakeApiServer.start({ servedVersions: { clustertrustbundles: ['v1alpha1'] } }),
      {
        message: 'fake API server: clustertrustbundles has no version v1alpha1 (only v1, v1beta1)',
      },
    );
  },
);
