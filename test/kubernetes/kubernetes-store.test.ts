import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, type Issuer } from '../../src/api/issuer.js';
import { type KubeEvent, KubeEventKind } from '../../src/api/kube-event.js';
import { type Lease, LeaseKind } from '../../src/api/lease.js';
import { silentLogger } from '../../src/api/logger.js';
import type { KubeObject } from '../../src/api/meta.js';
import { type Namespace, NamespaceKind } from '../../src/api/namespace.js';
import { type Pod, PodKind } from '../../src/api/pod.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { EventWriter } from '../../src/controller/event-writer.js';
import { isStoreError } from '../../src/store/errors.js';
import { Informer } from '../../src/store/informer.js';
import { ApiException, KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore, toStoreError } from '../../src/store/kubernetes/kubernetes-store.js';
import type { WatchEvent } from '../../src/store/resource-store.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import { builtinKind, certCsiKinds } from '../fake-api-server/kinds.js';
import {
  certificateRequest,
  type Modifier,
  withCsr,
  withIssuerRef,
  withLabels,
  withNamespace,
} from '../support/builders/index.js';
import { rejection, until } from '../support/eventually.js';

async function serve(
  t: { teardown(fn: () => unknown): void },
  options: Parameters<typeof FakeApiServer.start>[0] = {},
) {
  const server = await FakeApiServer.start(options);
  t.teardown(() => server.close());
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig());
  const store = new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000, fieldManager: 'test' });
  return { server, store, kubeConfig };
}

/** A CertificateRequest in ns1 (labels empty unless given). */
const inNs1: Modifier<CertificateRequest>[] = [
  withNamespace('ns1'),
  withLabels({}),
  withIssuerRef({ name: 'ca', kind: 'Issuer' }),
  withCsr('csr'),
];

t.test('custom resources: create, get, list by label, update, status, delete', async (t) => {
  const { store, server } = await serve(t);
  const created = await store.create<CertificateRequest>(CertificateRequestKind, {
    ...certificateRequest('', ...inNs1, withLabels({ app: 'a' })),
    metadata: { name: '', generateName: 'cr-', namespace: 'ns1', labels: { app: 'a' } },
  });
  t.match(created.metadata.name, /^cr-.{5}$/, 'named from generateName');
  t.match(created.metadata.uid, /.+/, 'uid filled by the server');
  t.equal(created.apiVersion, 'cert-manager.io/v1');
  t.ok(
    isStoreError(
      await rejection(store.create(CertificateRequestKind, certificateRequest('', ...inNs1))),
      'Invalid',
    ),
    'no name: Invalid',
  );
  const named = await store.create(
    CertificateRequestKind,
    certificateRequest('cr-1', ...inNs1, withLabels({ app: 'a' })),
  );
  await store.create(
    CertificateRequestKind,
    certificateRequest('cr-2', ...inNs1, withLabels({ app: 'b' })),
  );
  const got = await store.get<CertificateRequest>(CertificateRequestKind, 'cr-1', 'ns1');
  t.equal(got.metadata.resourceVersion, named.metadata.resourceVersion);
  const listed = await store.list<CertificateRequest>(CertificateRequestKind, {
    namespace: 'ns1',
    labelSelector: 'app=a',
  });
  t.same(listed.items.map((r) => r.metadata.name).sort(), [created.metadata.name, 'cr-1'].sort());
  t.match(listed.resourceVersion, /^\d+$/, 'list carries the resourceVersion to watch from');
  t.equal(listed.items[0]?.kind, 'CertificateRequest', 'items carry their kind');
  const all = await store.list(CertificateRequestKind, {});
  t.equal(all.items.length, 3, 'all namespaces');

  const withStatus = await store.updateStatus(CertificateRequestKind, {
    ...got,
    spec: { ...got.spec, isCA: true },
    status: { certificate: 'Y2VydA==' },
  });
  t.equal(withStatus.status?.certificate, 'Y2VydA==', 'status written');
  t.notOk(withStatus.spec.isCA, 'a status write does not change spec');
  const stale = store.update(CertificateRequestKind, { ...got, spec: { ...got.spec, isCA: true } });
  {
    const err = await rejection(stale);
    t.ok(isStoreError(err, 'Conflict'), 'stale write: Conflict');
  }
  {
    const err = await rejection(
      store.create(CertificateRequestKind, certificateRequest('cr-1', ...inNs1)),
    );
    t.ok(isStoreError(err, 'AlreadyExists'), 'rejected as expected');
  }
  await store.delete(CertificateRequestKind, 'cr-1', 'ns1');
  {
    const err = await rejection(store.get(CertificateRequestKind, 'cr-1', 'ns1'));
    t.ok(
      isStoreError(err, 'NotFound') &&
        /get certificaterequests.cert-manager.io ns1\/cr-1: .*not found/.test(err.message),
      'NotFound says which object',
    );
  }
  const writes = server.requests.filter((r) => r.method === 'POST' || r.method === 'PUT');
  t.ok(
    writes.every((r) => r.query.get('fieldManager') === 'test'),
    'every write names its field manager',
  );
});

t.test('cluster-scoped kinds and leases go through the same generic path', async (t) => {
  const { store } = await serve(t);
  const issuer: Issuer = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'ClusterIssuer',
    metadata: { name: 'ca' },
    spec: { selfSigned: {} },
  };
  const created = await store.create(ClusterIssuerKind, issuer);
  const ready = await store.updateStatus(ClusterIssuerKind, {
    ...created,
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'IsReady', message: '' }] },
  });
  t.equal(ready.status?.conditions?.[0]?.status, 'True');
  t.equal((await store.list(ClusterIssuerKind)).items.length, 1);
  await store.update(ClusterIssuerKind, {
    ...ready,
    metadata: { ...ready.metadata, labels: { a: 'b' } },
  });
  await store.delete(ClusterIssuerKind, 'ca');

  const lease = await store.create<Lease>(LeaseKind, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'lock', namespace: 'ns1' },
    spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
  });
  const renewed = await store.update<Lease>(LeaseKind, {
    ...lease,
    spec: { ...lease.spec, renewTime: '2026-11-21T10:00:00.000000Z' },
  });
  t.equal(renewed.spec.renewTime, '2026-11-21T10:00:00.000000Z', 'microsecond times kept as sent');
});

t.test('core kinds: Secrets, Pods, Events (create); other verbs are refused', async (t) => {
  const { store, server } = await serve(t);
  const secret = await store.create<Secret>(SecretKind, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'ca', namespace: 'ns1', labels: { x: 'y' } },
    data: { 'tls.crt': 'YQ==' },
  });
  t.equal(typeof secret.metadata.creationTimestamp, 'string', 'timestamps are strings, not Dates');
  t.equal(secret.kind, 'Secret');
  const replaced = await store.update<Secret>(SecretKind, {
    ...secret,
    data: { 'tls.crt': 'Yg==' },
  });
  t.equal(replaced.data?.['tls.crt'], 'Yg==');
  t.equal((await store.list(SecretKind, { labelSelector: 'x=y' })).items.length, 1);
  t.equal((await store.list(SecretKind, { namespace: 'ns1' })).items.length, 1);
  await store.delete(SecretKind, 'ca', 'ns1');
  await t.rejects(store.updateStatus(SecretKind, secret), /does not update status of secrets/);

  await server.store.create<Pod>(PodKind, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns1' },
  });
  const pod = await store.get<Pod>(PodKind, 'p', 'ns1');
  t.equal(pod.metadata.name, 'p');
  t.same(
    (await store.list(PodKind)).items.map((p) => p.metadata.name),
    ['p'],
  );
  await t.rejects(store.delete(PodKind, 'p', 'ns1'), /does not delete pods/);
  await t.rejects(store.get(KubeEventKind, 'e', 'ns1'), /does not get events/);
  await t.rejects(store.list(KubeEventKind), /does not list events/);
  await t.rejects(store.get(SecretKind, 'ca'), /secrets needs a namespace/);

  const events = new EventWriter({
    store,
    component: 'cert-csi-node',
    host: 'node-1',
    logger: silentLogger,
  });
  events.event(pod, 'Warning', 'CertificateRequestDenied', 'denied: no');
  events.event(pod, 'Warning', 'CertificateRequestDenied', 'denied: no');
  events.event(
    { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', uid: 'node-uid' } },
    'Normal',
    'X',
    'a cluster-scoped object gets its Event in default',
  );
  await events.flush();
  const written = await server.store.list<KubeEvent>(KubeEventKind, { namespace: 'ns1' });
  t.equal(written.items.length, 1, 'a repeat within the window is not written again');
  t.match(written.items[0], {
    metadata: { name: /^p\./ },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'ns1' },
    reason: 'CertificateRequestDenied',
    message: 'denied: no',
    type: 'Warning',
    source: { component: 'cert-csi-node', host: 'node-1' },
    count: 1,
  });
  const clusterScoped = await server.store.list<KubeEvent>(KubeEventKind, {
    namespace: 'default',
  });
  t.equal(clusterScoped.items.length, 1, "a cluster-scoped object's Event is in default");
  t.same(
    clusterScoped.items[0]?.involvedObject,
    { apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'node-uid' },
    'its involvedObject names no namespace, as client-go records it',
  );
  t.match(clusterScoped.items[0], { metadata: { name: /^n\./ }, reason: 'X' });
});

t.test('Pods by node and Namespaces: field selectors reach list and watch', async (t) => {
  const { store, server } = await serve(t, {
    kinds: [...certCsiKinds, builtinKind(NamespaceKind)],
  });
  const pod = (name: string, namespace: string, nodeName?: string): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: name } },
    ...(nodeName ? { spec: { nodeName } } : {}),
  });
  await server.store.create(PodKind, pod('a', 'ns1', 'node-1'));
  await server.store.create(PodKind, pod('b', 'ns1', 'node-2'));
  await server.store.create(PodKind, pod('c', 'ns2', 'node-1'));
  await server.store.create(PodKind, pod('pending', 'ns2'));
  const keys = (items: KubeObject[]) =>
    items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
  t.same(
    keys((await store.list(PodKind, { fieldSelector: 'spec.nodeName=node-1' })).items),
    ['ns1/a', 'ns2/c'],
    'every namespace, one node',
  );
  t.same(
    keys(
      (await store.list(PodKind, { namespace: 'ns1', fieldSelector: 'spec.nodeName=node-1' }))
        .items,
    ),
    ['ns1/a'],
    'one namespace, one node',
  );
  t.same(
    keys((await store.list(PodKind, { fieldSelector: 'spec.nodeName=' })).items),
    ['ns2/pending'],
    'unscheduled',
  );
  t.same(
    keys(
      (
        await store.list(PodKind, {
          fieldSelector: 'spec.nodeName!=node-2',
          labelSelector: 'app in (a,pending)',
        })
      ).items,
    ),
    ['ns1/a', 'ns2/pending'],
    'with a label selector',
  );
  t.match(
    server.requests.at(-1),
    { path: '/api/v1/pods', fieldSelector: 'spec.nodeName!=node-2' },
    'sent as the fieldSelector parameter',
  );
  const refused = await rejection(store.list(PodKind, { fieldSelector: 'spec.hostname=x' }));
  t.match(
    refused,
    {
      name: 'StoreError',
      reason: 'BadRequest',
      message: /field label not supported: spec.hostname/,
    },
    'a field the API server does not index: 400',
  );
  const custom = await store.list(CertificateRequestKind, { fieldSelector: 'metadata.name=x' });
  t.same(custom.items, []);
  t.equal(server.requests.at(-1)?.fieldSelector, 'metadata.name=x', 'custom resources too');

  await server.store.create<Namespace>(NamespaceKind, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'ns1', labels: { 'cert-csi.io/pod-certificates': 'on' } },
  });
  await server.store.create<Namespace>(NamespaceKind, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'ns2' },
  });
  const ns1 = await store.get<Namespace>(NamespaceKind, 'ns1');
  t.match(ns1, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'ns1', labels: { 'cert-csi.io/pod-certificates': 'on' } },
  });
  t.equal(typeof ns1.metadata.creationTimestamp, 'string', 'timestamps are strings, not Dates');
  t.ok(isStoreError(await rejection(store.get(NamespaceKind, 'nope')), 'NotFound'));
  const namespaces = await store.list<Namespace>(NamespaceKind);
  t.same(
    namespaces.items.map((n) => n.metadata.name),
    ['ns1', 'ns2'],
  );
  t.equal(namespaces.items[0]?.kind, 'Namespace');
  t.same(
    (await store.list(NamespaceKind, { fieldSelector: 'metadata.name!=ns1' })).items.map(
      (n) => n.metadata.name,
    ),
    ['ns2'],
  );
  t.same(
    (await store.list(NamespaceKind, { labelSelector: 'cert-csi.io/pod-certificates' })).items.map(
      (n) => n.metadata.name,
    ),
    ['ns1'],
  );

  const events: string[] = [];
  const watch = store.watch<Pod>(
    PodKind,
    { resourceVersion: namespaces.resourceVersion, fieldSelector: 'spec.nodeName=node-1' },
    { onEvent: (e) => events.push(`${e.type} ${e.object.metadata.name}`), onError: t.fail },
  );
  t.teardown(() => watch.stop());
  const nsEvents: string[] = [];
  const nsWatch = store.watch<Namespace>(
    NamespaceKind,
    { resourceVersion: namespaces.resourceVersion },
    { onEvent: (e) => nsEvents.push(`${e.type} ${e.object.metadata.name}`), onError: t.fail },
  );
  t.teardown(() => nsWatch.stop());
  await server.store.create(PodKind, pod('d', 'ns1', 'node-2'));
  await server.store.create(PodKind, pod('e', 'ns1', 'node-1'));
  await server.store.create<Namespace>(NamespaceKind, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'ns3' },
  });
  await until(() => events.length >= 1 && nsEvents.length >= 1, { what: 'watch events' });
  t.same(events, ['ADDED e'], 'the pod watch sees its node only');
  t.same(nsEvents, ['ADDED ns3'], 'Namespaces are watched like any cluster-scoped kind');
  const watched = server.requests.find((r) => r.watch && r.resource === 'pods');
  t.match(watched, { path: '/api/v1/pods', fieldSelector: 'spec.nodeName=node-1' });
});

t.test('API errors become StoreErrors with the reason and the server message', async (t) => {
  const { store, server } = await serve(t);
  server.failRequests({ status: 500, times: 1 });
  {
    const err = await rejection(store.list(CertificateRequestKind));
    t.ok(
      isStoreError(err, 'InternalError') && /injected fault/.test(err.message),
      'rejected as expected',
    );
  }
  server.failRequests({ status: 403, times: 1 });
  {
    const err = await rejection(store.list(CertificateRequestKind));
    t.ok(isStoreError(err, 'Forbidden'), 'rejected as expected');
  }
  server.failRequests({ status: 422, times: 1 });
  {
    const err = await rejection(store.list(CertificateRequestKind));
    t.ok(isStoreError(err, 'Invalid'), 'rejected as expected');
  }
  server.failRequests({ status: 400, times: 1 });
  {
    const err = await rejection(store.list(CertificateRequestKind));
    t.ok(isStoreError(err, 'BadRequest') && err.code === 400, '400 is BadRequest');
  }
  // A watch refused before it streams has only its HTTP status to tell why.
  for (const [status, reason] of [
    [400, 'BadRequest'],
    [403, 'Forbidden'],
    [410, 'Gone'],
    [500, 'InternalError'],
  ] as const) {
    server.failRequests({ status, times: 1, match: (r) => r.watch });
    const errors: Error[] = [];
    store.watch(CertificateRequestKind, {}, { onEvent: t.fail, onError: (e) => errors.push(e) });
    await until(() => errors.length > 0);
    t.match(errors, [{ name: 'StoreError', reason }], `a watch refused with ${status}: ${reason}`);
    t.match(errors[0]?.message, /^watch certificaterequests.cert-manager.io: /);
  }
  await server.close();
  {
    const err = await rejection(store.list(CertificateRequestKind));
    t.ok(
      isStoreError(err, 'InternalError') && /list certificaterequests/.test(err.message),
      'an unreachable server is an InternalError naming the call',
    );
  }
});

t.test(
  'a watch delivers changes, survives the server closing it, and reports 410 as Gone',
  async (t) => {
    const { store, server } = await serve(t);
    const start = await store.list(CertificateRequestKind, { namespace: 'ns1' });
    const events: WatchEvent<KubeObject>[] = [];
    const errors: Error[] = [];
    const watch = store.watch(
      CertificateRequestKind,
      { namespace: 'ns1', resourceVersion: start.resourceVersion, labelSelector: 'app=a' },
      { onEvent: (e) => events.push(e), onError: (e) => errors.push(e) },
    );
    t.teardown(() => watch.stop());
    await until(() => server.openWatches === 1);
    await store.create(
      CertificateRequestKind,
      certificateRequest('one', ...inNs1, withLabels({ app: 'a' })),
    );
    await store.create(
      CertificateRequestKind,
      certificateRequest('other', ...inNs1, withLabels({ app: 'b' })),
    );
    await until(() => events.length === 1);
    t.match(events[0], {
      type: 'ADDED',
      object: { kind: 'CertificateRequest', metadata: { name: 'one' } },
    });
    const watches = () => server.requests.filter((r) => r.watch).length;
    const before = watches();
    server.endWatches();
    await store.delete(CertificateRequestKind, 'one', 'ns1');
    await until(() => events.length === 2);
    t.equal(events[1]?.type, 'DELETED', 'the change made while reconnecting is not lost');
    t.equal(watches(), before + 1, 'reopened once');
    const reopened = server.requests.filter((r) => r.watch).at(-1);
    t.equal(reopened?.labelSelector, 'app=a', 'with the same selector');
    t.ok(reopened?.query.get('resourceVersion'), 'from the last resourceVersion seen');
    t.same(errors, [], 'a clean close is not an error');

    server.expireWatches();
    server.endWatches();
    await until(() => errors.length === 1);
    t.ok(isStoreError(errors[0], 'Gone'), '410 on re-watch is Gone: the informer relists');
  },
);

t.test(
  'a dropped connection ends the watch with an error; a stopped watch stays quiet',
  async (t) => {
    const { store, server } = await serve(t);
    const errors: Error[] = [];
    const watch = store.watch(
      CertificateRequestKind,
      {},
      { onEvent: () => {}, onError: (e) => errors.push(e) },
    );
    await until(() => server.openWatches === 1);
    server.dropWatches();
    await until(() => errors.length === 1);
    t.ok(
      isStoreError(errors[0], 'InternalError'),
      'reported for the informer to retry with backoff',
    );
    watch.stop();
    const quiet = store.watch(
      CertificateRequestKind,
      {},
      { onEvent: () => {}, onError: (e) => errors.push(e) },
    );
    quiet.stop();
    await delay(100);
    t.equal(errors.length, 1, 'no error after stop');
    t.equal(server.openWatches, 0, 'nothing left open');
  },
);

t.test('a watch that cannot open reports it, unless it was stopped first', async (t) => {
  const { store, kubeConfig } = await serve(t);
  // The API clients were made at construction; the watch looks the cluster up per connection.
  kubeConfig.setCurrentContext('gone');
  const errors: Error[] = [];
  const handlers = { onEvent: () => {}, onError: (e: Error) => errors.push(e) };
  store.watch(CertificateRequestKind, {}, handlers).stop();
  store.watch(CertificateRequestKind, {}, handlers);
  await until(() => errors.length > 0);
  await delay(100);
  t.equal(errors.length, 1, 'only the running watch reports');
  t.ok(isStoreError(errors[0], 'InternalError'));
  t.match(errors[0]?.message, /^watch .*: No currently active cluster/);
});

// How long a test lets a wait that must end by itself run before calling it a hang.
const HANG_VERDICT_MS = 20_000;

t.test(
  'a request to a hung API server fails at its deadline, is cancelled, and the next one succeeds',
  async (t) => {
    const server = await FakeApiServer.start();
    t.teardown(() => server.close());
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions(server.kubeConfig());
    const store = new KubernetesStore({ kubeConfig, requestTimeoutMs: 300 });
    await store.create(CertificateRequestKind, certificateRequest('kept', ...inNs1));
    const endHang = server.failRequests({ hang: true });
    const calls = [
      store.get(CertificateRequestKind, 'kept', 'ns1'),
      store.list(CertificateRequestKind, { namespace: 'ns1' }),
      store.create(CertificateRequestKind, certificateRequest('new', ...inNs1)),
      store.delete(CertificateRequestKind, 'kept', 'ns1'),
    ];
    // The verdict timer is cancelled once the race is decided: left running, it kept the test
    // process alive for the whole HANG_VERDICT_MS after the test had passed.
    const verdict = new AbortController();
    const outcomes = await Promise.race([
      Promise.all(calls.map((call) => rejection(call))),
      delay(HANG_VERDICT_MS, 'still waiting' as const, { signal: verdict.signal }),
    ]).finally(() => verdict.abort());
    if (outcomes === 'still waiting') {
      t.fail(`the requests were still waiting after ${HANG_VERDICT_MS} ms`);
      return;
    }
    const [get, list, create, remove] = outcomes;
    t.ok(
      isStoreError(get, 'InternalError'),
      'InternalError: retried with backoff like a broken connection',
    );
    t.match(
      (get as Error).message,
      /^get .*ns1\/kept: no answer from the API server within 300 ms$/,
    );
    t.match((list as Error).message, /^list .*: no answer from the API server within 300 ms$/);
    t.match(
      (create as Error).message,
      /^create .*ns1\/new: no answer from the API server within 300 ms$/,
    );
    t.match(
      (remove as Error).message,
      /^delete .*ns1\/kept: no answer from the API server within 300 ms$/,
    );
    await until(() => server.hangingRequests === 0, {
      what: 'the client to cancel the hung requests',
    });
    endHang();
    const kept = await store.get<CertificateRequest>(CertificateRequestKind, 'kept', 'ns1');
    t.equal(kept.metadata.name, 'kept', 'answered once the server answers again');
  },
);

t.test(
  'a watch whose connection hangs or goes silent is reopened from its last resourceVersion',
  async (t) => {
    const server = await FakeApiServer.start();
    t.teardown(() => server.close());
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions(server.kubeConfig());
    const store = new KubernetesStore({ kubeConfig, watchIdleTimeoutMs: 1500 });
    const events: WatchEvent<KubeObject>[] = [];
    const errors: Error[] = [];
    // The first watch request is never answered, as by a hung server.
    server.failRequests({ hang: true, times: 1, match: (r) => r.watch });
    const start = await store.list(CertificateRequestKind, { namespace: 'ns1' });
    const watch = store.watch(
      CertificateRequestKind,
      { namespace: 'ns1', resourceVersion: start.resourceVersion },
      { onEvent: (e) => events.push(e), onError: (e) => errors.push(e) },
    );
    t.teardown(() => watch.stop());
    const wait = { timeoutMs: HANG_VERDICT_MS };
    await until(() => server.openWatches === 1, { ...wait, what: 'a watch past the hung one' });
    const one = await store.create(CertificateRequestKind, certificateRequest('one', ...inNs1));
    await until(() => events.length === 1, { ...wait, what: 'the first event' });
    const first = server.requests.find((r) => r.watch);
    t.equal(first?.query.get('allowWatchBookmarks'), 'true');
    t.equal(
      first?.query.get('timeoutSeconds'),
      '1',
      'the server is asked to end it before the watchdog',
    );

    t.equal(server.silenceWatches(), 1);
    const silenced = server.requests.filter((r) => r.watch).length;
    await store.create(CertificateRequestKind, certificateRequest('two', ...inNs1));
    await until(() => events.length === 2, { ...wait, what: 'the event sent while silent' });
    t.match(events[1], { type: 'ADDED', object: { metadata: { name: 'two' } } });
    const reopened = server.requests.filter((r) => r.watch).slice(silenced);
    t.equal(
      reopened[0]?.query.get('resourceVersion'),
      one.metadata.resourceVersion,
      'reopened from the last resourceVersion seen',
    );
    t.same(errors, [], 'a silent connection is not an error for the informer');
    watch.stop();
    await until(() => server.openWatches === 0 && server.hangingRequests <= 1, {
      ...wait,
      what: 'the silent connection to be closed',
    });
  },
);

t.test('an informer over the cluster store recovers from dropped watches and 410', async (t) => {
  const { store, server } = await serve(t);
  const informer = new Informer<CertificateRequest>(store, CertificateRequestKind, {
    relistBackoffMs: 20,
  });
  informer.start();
  t.teardown(() => informer.stop());
  await informer.waitForSync();
  await store.create(CertificateRequestKind, certificateRequest('a', ...inNs1));
  await until(() => informer.get('a', 'ns1') !== undefined);
  server.dropWatches();
  await store.create(CertificateRequestKind, certificateRequest('b', ...inNs1));
  await until(() => informer.get('b', 'ns1') !== undefined);
  server.expireWatches();
  server.endWatches();
  await store.delete(CertificateRequestKind, 'a', 'ns1');
  await until(() => informer.get('a', 'ns1') === undefined);
  t.pass('every change arrived');
});

t.test('the client-side rate limit spaces requests at qps after the burst', async (t) => {
  const server = await FakeApiServer.start();
  t.teardown(() => server.close());
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig());
  const store = new KubernetesStore({ kubeConfig, qps: 20, burst: 2 });
  const started = Date.now();
  await Promise.all(Array.from({ length: 6 }, () => store.list(SecretKind)));
  const elapsed = Date.now() - started;
  // 2 at once, then 4 more at 20/s: at least 200 ms.
  t.ok(elapsed >= 190, `6 requests took ${elapsed} ms`);
});

t.test(
  'errors without a Status body, unsupported kinds, and the event writer forgetting',
  async (t) => {
    const { store, server } = await serve(t);
    const opaque = toStoreError(
      new ApiException(502, 'bad gateway', '<html>oops</html>', {}),
      'list x',
    );
    t.ok(isStoreError(opaque, 'InternalError'));
    t.equal(opaque.message, 'list x: HTTP 502', 'a body that is not a Status: the HTTP code');
    const empty = toStoreError(new ApiException(401, 'unauthorized', undefined, {}), 'get y');
    t.ok(isStoreError(empty, 'Forbidden'), '401 is refused access');
    t.equal(empty.message, 'get y: HTTP 401');
    const parsed = toStoreError(
      new ApiException(409, 'conflict', { reason: 'AlreadyExists', message: 'exists' }, {}),
      'create z',
    );
    t.ok(isStoreError(parsed, 'AlreadyExists'), 'a parsed Status body is read too');
    t.equal(toStoreError(parsed, 'again'), parsed, 'a StoreError passes through');

    await server.store.create<Secret>(SecretKind, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'ns1' },
    });
    t.equal((await store.get<Secret>(SecretKind, 's', 'ns1')).metadata.name, 's', 'get a Secret');
    const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns1' } };
    t.match(await rejection(store.create(PodKind, pod)), /does not create pods/);

    const events = new EventWriter({
      store,
      component: 'c',
      logger: silentLogger,
      maxRemembered: 1,
    });
    events.event(pod, 'Normal', 'A', 'first');
    events.event(pod, 'Normal', 'B', 'second');
    events.event(pod, 'Normal', 'A', 'first');
    await events.flush();
    const written = await server.store.list<KubeEvent>(KubeEventKind, { namespace: 'ns1' });
    t.same(
      written.items.map((e) => e.reason).sort(),
      ['A', 'A', 'B'],
      'with room for one, a repeat of a forgotten event is written again',
    );
  },
);
