import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as K8s from '@kubernetes/client-node';
import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { ClusterIssuerKind } from '../../src/api/issuer.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import { PodKind } from '../../src/api/pod.js';
import { SecretKind } from '../../src/api/secret.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  certificateRequest,
  type Modifier,
  withConditions,
  withCsr,
  withGenerateName,
  withIssuerRef,
  withLabels,
  withNamespace,
} from '../support/builders/index.js';
import { clientNode as k8s } from '../support/client-node-full.js';
import { until } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';
import { type ApiStatus, apiError } from './api-error.js';
import { FakeApiServer, type FakeApiServerOptions, serviceAccountUser } from './fake-api-server.js';
import { parseFieldSelector } from './field-selector.js';
import { applyJsonPatch, applyMergePatch } from './patch.js';
import { loadRbacFromDirectory, loadRbacObjects, loadRbacYaml } from './rbac-authorizer.js';

const G = { group: 'cert-manager.io', version: 'v1', plural: 'certificaterequests' };
const CR_PATH = '/apis/cert-manager.io/v1/namespaces/ns1/certificaterequests';
const NODE_SA = 'system:serviceaccount:cert-csi:cert-csi-node';
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

interface Teardown {
  teardown(fn: () => unknown): void;
}

interface Clients {
  kc: K8s.KubeConfig;
  custom: K8s.CustomObjectsApi;
  core: K8s.CoreV1Api;
  coordination: K8s.CoordinationV1Api;
}

interface WatchedEvent {
  type: string;
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

async function startServer(t: Teardown, options: FakeApiServerOptions = {}) {
  const server = await FakeApiServer.start(options);
  t.teardown(() => server.close());
  return server;
}

function clients(server: FakeApiServer, token = server.adminToken): Clients {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions(server.kubeConfig(token));
  return {
    kc,
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    core: kc.makeApiClient(k8s.CoreV1Api),
    coordination: kc.makeApiClient(k8s.CoordinationV1Api),
  };
}

/** A CertificateRequest in ns1 for the Issuer ca. */
const ns1Request: Modifier<CertificateRequest>[] = [
  withNamespace('ns1'),
  withIssuerRef({ name: 'ca', kind: 'Issuer', group: 'cert-manager.io' }),
  withCsr('CSR'),
];

// The fake server answers within milliseconds: poll often, give up soon.
const QUICK = { timeoutMs: 1_500, intervalMs: 5 };

/** Starts a client-node watch collecting events; done resolves with the done callback's argument. */
async function startWatch(
  kc: K8s.KubeConfig,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
) {
  const events: WatchedEvent[] = [];
  let finish: (err: unknown) => void = () => undefined;
  const done = new Promise<unknown>((resolve) => {
    finish = resolve;
  });
  const controller = await new k8s.Watch(kc).watch(
    path,
    query,
    (type, object) => events.push({ type, object }),
    (err) => finish(err),
  );
  return { events, done, controller };
}

t.test(
  'create honours generateName and stamps uid, creationTimestamp, resourceVersion',
  async (t) => {
    const server = await startServer(t);
    const { custom } = clients(server);
    const body = certificateRequest('', ...ns1Request, withGenerateName('pod-a-'));
    const created = (await custom.createNamespacedCustomObject({
      ...G,
      namespace: 'ns1',
      body,
      fieldManager: 'cert-csi',
    })) as KubeObject;
    t.match(created.metadata.name, /^pod-a-[a-z0-9]{5}$/);
    t.match(created.metadata.uid, /^[0-9a-f-]{36}$/);
    t.match(created.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    t.equal(created.metadata.resourceVersion, server.store.resourceVersion);
    t.same(
      await server.store.get(CertificateRequestKind, created.metadata.name, 'ns1'),
      created,
      'the object is in the store',
    );
    const entry = server.requests.at(-1);
    t.match(entry, {
      method: 'POST',
      path: CR_PATH,
      verb: 'create',
      apiGroup: 'cert-manager.io',
      resource: 'certificaterequests',
      namespace: 'ns1',
      name: undefined,
      watch: false,
      user: 'fake-api-server-admin',
      status: 201,
      contentType: 'application/json',
    });
    t.equal(entry?.query.get('fieldManager'), 'cert-csi');

    const taken = await apiError(
      custom.createNamespacedCustomObject({
        ...G,
        namespace: 'ns1',
        body: certificateRequest(created.metadata.name, ...ns1Request),
      }),
      409,
    );
    t.match(taken, {
      reason: 'AlreadyExists',
      message: `certificaterequests.cert-manager.io "${created.metadata.name}" already exists`,
    });
    const elsewhere = await apiError(
      custom.createNamespacedCustomObject({
        ...G,
        namespace: 'ns2',
        body: certificateRequest('x', ...ns1Request),
      }),
      400,
    );
    t.match(elsewhere.message, /does not match the namespace sent on the request/);
  },
);

t.test('get of a missing object is a 404 ApiException with a real Status', async (t) => {
  const server = await startServer(t);
  const { custom, core } = clients(server);
  const status = await apiError(
    custom.getNamespacedCustomObject({ ...G, namespace: 'ns1', name: 'nope' }),
    404,
  );
  t.same(status, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'certificaterequests.cert-manager.io "nope" not found',
    reason: 'NotFound',
    details: { name: 'nope', group: 'cert-manager.io', kind: 'certificaterequests' },
    code: 404,
  });
  const secret = await apiError(core.readNamespacedSecret({ name: 'ca', namespace: 'ns1' }), 404);
  t.equal(secret.message, 'secrets "ca" not found');
  t.same(secret.details, { name: 'ca', kind: 'secrets' });
  // Orders are acme.cert-manager.io's, not served here (certificates now are).
  const unknown = await apiError(
    custom.getNamespacedCustomObject({ ...G, plural: 'orders', namespace: 'ns1', name: 'x' }),
    404,
  );
  t.equal(unknown.message, 'the server could not find the requested resource');
});

t.test(
  'PUT with a stale resourceVersion is 409 Conflict; status PUT changes only status',
  async (t) => {
    const server = await startServer(t);
    const { custom } = clients(server);
    const created = (await custom.createNamespacedCustomObject({
      ...G,
      namespace: 'ns1',
      body: certificateRequest('cr1', ...ns1Request, withConditions([])),
    })) as KubeObject & { spec: { duration?: string }; status?: unknown };
    t.equal(created.status, undefined, 'create drops status');

    const changed = (await custom.replaceNamespacedCustomObject({
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: { ...created, spec: { ...created.spec, duration: '1h0m0s' }, status: { x: 1 } },
    })) as typeof created;
    t.equal(changed.spec.duration, '1h0m0s');
    t.equal(changed.status, undefined, 'a PUT to the object ignores status');
    t.not(changed.metadata.resourceVersion, created.metadata.resourceVersion);

    const stale = await apiError(
      custom.replaceNamespacedCustomObject({ ...G, namespace: 'ns1', name: 'cr1', body: created }),
      409,
    );
    t.equal(
      stale.message,
      'Operation cannot be fulfilled on certificaterequests.cert-manager.io "cr1": the object has been modified; please apply your changes to the latest version and try again',
    );
    t.equal(stale.reason, 'Conflict');
    const unconditional = await apiError(
      custom.replaceNamespacedCustomObject({
        ...G,
        namespace: 'ns1',
        name: 'cr1',
        body: { ...changed, metadata: { ...changed.metadata, resourceVersion: undefined } },
      }),
      422,
    );
    t.match(
      unconditional.message,
      /metadata\.resourceVersion: Invalid value: 0x0: must be specified/,
    );
    const renamed = await apiError(
      custom.replaceNamespacedCustomObject({ ...G, namespace: 'ns1', name: 'cr2', body: changed }),
      400,
    );
    t.match(renamed.message, /does not match the name on the URL/);

    const status = { conditions: [{ type: 'Ready', status: 'True' }] };
    const withStatus = (await custom.replaceNamespacedCustomObjectStatus({
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: {
        ...changed,
        spec: { request: 'ignored' },
        metadata: { ...changed.metadata, labels: { a: 'b' } },
        status,
      },
    })) as typeof created;
    t.same(withStatus.status, status);
    t.same(withStatus.spec, changed.spec, 'a status PUT ignores spec');
    t.equal(withStatus.metadata.labels, undefined, 'and metadata');
    t.match(server.requests.at(-1), {
      method: 'PUT',
      verb: 'update',
      subresource: 'status',
      status: 200,
    });
    await apiError(
      custom.replaceNamespacedCustomObjectStatus({
        ...G,
        namespace: 'ns1',
        name: 'cr1',
        body: changed,
      }),
      409,
    );
  },
);

t.test('merge and JSON patches, on the object and on /status', async (t) => {
  const server = await startServer(t);
  const { custom, coordination } = clients(server);
  await server.store.create(
    CertificateRequestKind,
    certificateRequest('cr1', ...ns1Request) as KubeObject,
  );

  const patched = (await custom.patchNamespacedCustomObjectStatus(
    {
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: { status: { conditions: [{ type: 'Ready', status: 'False' }] } },
    },
    mergePatch,
  )) as KubeObject & { status: { conditions: unknown[]; certificate?: string } };
  t.same(patched.status.conditions, [{ type: 'Ready', status: 'False' }]);
  t.equal(server.requests.at(-1)?.contentType, 'application/merge-patch+json');

  const more = (await custom.patchNamespacedCustomObjectStatus(
    {
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: { status: { certificate: 'Y2VydA==' }, spec: { request: 'no' } },
    },
    mergePatch,
  )) as typeof patched;
  t.same(more.status.conditions, patched.status.conditions, 'merge keeps the other fields');
  t.equal(more.status.certificate, 'Y2VydA==');
  t.equal(
    (more as unknown as { spec: { request: string } }).spec.request,
    'Q1NS',
    'a status patch ignores spec',
  );

  const stale = await apiError(
    custom.patchNamespacedCustomObjectStatus(
      {
        ...G,
        namespace: 'ns1',
        name: 'cr1',
        body: { metadata: { resourceVersion: '1' }, status: { certificate: null } },
      },
      mergePatch,
    ),
    409,
  );
  t.equal(stale.reason, 'Conflict', 'a resourceVersion in the patch is a precondition');

  const labelled = (await custom.patchNamespacedCustomObject(
    {
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: { metadata: { labels: { app: 'x' } }, status: { certificate: null } },
    },
    mergePatch,
  )) as typeof patched;
  t.same(labelled.metadata.labels, { app: 'x' });
  t.equal(labelled.status.certificate, 'Y2VydA==', 'a patch of the object ignores status');
  const unconditional = (await custom.patchNamespacedCustomObject(
    {
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: { metadata: { resourceVersion: null, labels: null } },
    },
    mergePatch,
  )) as typeof patched;
  t.equal(unconditional.metadata.labels, undefined, 'a null resourceVersion is no precondition');

  // The client's default patch type is JSON Patch.
  const jsonPatched = (await custom.patchNamespacedCustomObjectStatus({
    ...G,
    namespace: 'ns1',
    name: 'cr1',
    body: [
      { op: 'test', path: '/status/certificate', value: 'Y2VydA==' },
      { op: 'remove', path: '/status/certificate' },
    ],
  })) as typeof patched;
  t.equal(jsonPatched.status.certificate, undefined);
  t.equal(server.requests.at(-1)?.contentType, 'application/json-patch+json');
  const failedTest = await apiError(
    custom.patchNamespacedCustomObjectStatus({
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: [{ op: 'test', path: '/metadata/name', value: 'cr2' }],
    }),
    422,
  );
  t.match(failedTest.message, /test failed/);

  const applied = await apiError(
    custom.patchNamespacedCustomObject(
      {
        ...G,
        namespace: 'ns1',
        name: 'cr1',
        body: certificateRequest('cr1', ...ns1Request),
        fieldManager: 'x',
        force: true,
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
    ),
    415,
  );
  t.equal(applied.reason, 'UnsupportedMediaType');
  await apiError(
    custom.patchNamespacedCustomObjectStatus({ ...G, namespace: 'ns1', name: 'nope', body: [] }),
    404,
  );
  await apiError(coordination.readNamespacedLease({ name: 'cr1', namespace: 'ns1' }), 404);
});

t.test('patch helpers follow RFC 7386 and RFC 6902', async (t) => {
  t.same(applyMergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null, e: 3 }, d: [2] }), {
    a: { c: 2, e: 3 },
    d: [2],
  });
  t.same(applyMergePatch({ a: 1 }, 'x'), 'x');
  const hostile = applyMergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as object;
  t.equal(Object.getPrototypeOf(hostile), Object.prototype, '__proto__ stays a plain field');
  t.same(
    applyJsonPatch({ a: [1, 2], b: { c: 'x' } }, [
      { op: 'add', path: '/a/-', value: 3 },
      { op: 'add', path: '/a/0', value: 0 },
      { op: 'replace', path: '/b/c', value: 'y' },
      { op: 'copy', from: '/b/c', path: '/d' },
      { op: 'move', from: '/d', path: '/e~1f' },
      { op: 'remove', path: '/a/1' },
      { op: 'test', path: '/a/0', value: 0 },
    ]),
    { a: [0, 2, 3], b: { c: 'y' }, 'e/f': 'y' },
  );
  t.throws(() => applyJsonPatch({}, { op: 'add' }), /must be an array/);
  t.throws(() => applyJsonPatch({}, [{ op: 'nope', path: '/a' }]), /unknown op/);
  t.throws(() => applyJsonPatch({}, [1]), /op and path are required/);
  t.throws(() => applyJsonPatch({}, [{ op: 'add', path: '/a' }]), /value is required/);
  t.throws(() => applyJsonPatch({}, [{ op: 'move', path: '/a' }]), /from is required/);
  t.throws(() => applyJsonPatch({}, [{ op: 'remove', path: 'a' }]), /invalid JSON pointer/);
  t.throws(() => applyJsonPatch({ a: [] }, [{ op: 'remove', path: '/a/0' }]), /out of range/);
  t.throws(
    () => applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/a/b', value: 1 }]),
    /not an object/,
  );
  t.throws(() => applyJsonPatch({}, [{ op: 'replace', path: '/x', value: 1 }]), /path not found/);
  t.throws(() => applyJsonPatch({}, [{ op: 'copy', from: '/x', path: '/y' }]), /path not found/);
  t.same(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }]), { b: 2 });
});

t.test('list filters by labelSelector and fieldSelector', async (t) => {
  const server = await startServer(t);
  const { custom, core } = clients(server);
  for (const [name, namespace, app] of [
    ['a', 'ns1', 'x'],
    ['b', 'ns1', 'y'],
    ['c', 'ns2', 'x'],
  ] as const) {
    await server.store.create(CertificateRequestKind, {
      ...certificateRequest(name, ...ns1Request),
      metadata: { name, namespace, labels: { app } },
    } as KubeObject);
  }
  const names = (list: unknown) =>
    (list as { items: KubeObject[] }).items.map(
      (item) => `${item.metadata.namespace}/${item.metadata.name}`,
    );

  const inNs1 = (await custom.listNamespacedCustomObject({
    ...G,
    namespace: 'ns1',
    labelSelector: 'app=x',
    limit: 50,
  })) as {
    apiVersion: string;
    kind: string;
    metadata: { resourceVersion: string };
    items: KubeObject[];
  };
  t.equal(inNs1.kind, 'CertificateRequestList');
  t.equal(inNs1.apiVersion, 'cert-manager.io/v1');
  t.equal(inNs1.metadata.resourceVersion, server.store.resourceVersion);
  t.same(names(inNs1), ['ns1/a']);
  t.equal(inNs1.items[0]?.kind, 'CertificateRequest', 'items carry their kind');

  t.same(names(await custom.listClusterCustomObject({ ...G, labelSelector: 'app in (x)' })), [
    'ns1/a',
    'ns2/c',
  ]);
  t.match(server.requests.at(-1), {
    path: '/apis/cert-manager.io/v1/certificaterequests',
    verb: 'list',
    namespace: undefined,
  });
  t.same(names(await custom.listClusterCustomObject({ ...G, fieldSelector: 'metadata.name=b' })), [
    'ns1/b',
  ]);
  t.same(
    names(
      await custom.listClusterCustomObject({
        ...G,
        fieldSelector: 'metadata.namespace!=ns1,metadata.name==c',
      }),
    ),
    ['ns2/c'],
  );
  t.same(server.requests.at(-1)?.fieldSelector, 'metadata.namespace!=ns1,metadata.name==c');
  const badField = await apiError(
    custom.listClusterCustomObject({ ...G, fieldSelector: 'spec.x=1' }),
    400,
  );
  t.equal(badField.message, 'field label not supported: spec.x');
  await apiError(custom.listClusterCustomObject({ ...G, fieldSelector: 'metadata.name' }), 400);
  await apiError(custom.listClusterCustomObject({ ...G, labelSelector: 'a in (' }), 400);

  await server.store.create(PodKind, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p1', namespace: 'ns1' },
    spec: { nodeName: 'n1' },
  } as KubeObject);
  await server.store.create(PodKind, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p2', namespace: 'ns1' },
    spec: {},
  } as KubeObject);
  const pods = await core.listNamespacedPod({
    namespace: 'ns1',
    fieldSelector: 'spec.nodeName=n1',
  });
  t.same(
    pods.items.map((p) => p.metadata?.name),
    ['p1'],
  );
  const unscheduled = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=' });
  t.same(
    unscheduled.items.map((p) => p.metadata?.name),
    ['p2'],
  );
});

t.test('a watch sees ADDED, MODIFIED and DELETED, with label and field selectors', async (t) => {
  const server = await startServer(t);
  const { kc, custom } = clients(server);
  await server.store.create(
    CertificateRequestKind,
    certificateRequest('old', ...ns1Request) as KubeObject,
  );
  const list = (await custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' })) as {
    metadata: { resourceVersion: string };
  };

  const fromList = await startWatch(kc, CR_PATH, {
    resourceVersion: list.metadata.resourceVersion,
    allowWatchBookmarks: true,
  });
  const fresh = await startWatch(kc, CR_PATH, {});
  const selected = await startWatch(kc, CR_PATH, {
    labelSelector: 'app=x',
    fieldSelector: 'metadata.name=cr1',
  });
  t.equal(server.openWatches, 3);
  t.match(server.requests.at(-1), {
    verb: 'watch',
    watch: true,
    labelSelector: 'app=x',
    status: 200,
  });
  t.equal(server.requests.at(-3)?.query.get('allowWatchBookmarks'), 'true');

  const created = (await custom.createNamespacedCustomObject({
    ...G,
    namespace: 'ns1',
    body: certificateRequest('cr1', ...ns1Request),
  })) as KubeObject;
  await custom.createNamespacedCustomObject({
    ...G,
    namespace: 'ns1',
    body: certificateRequest('cr2', ...ns1Request, withLabels({ app: 'x' })),
  });
  await custom.patchNamespacedCustomObject(
    { ...G, namespace: 'ns1', name: 'cr1', body: { metadata: { labels: { app: 'x' } } } },
    mergePatch,
  );
  await custom.deleteNamespacedCustomObject({ ...G, namespace: 'ns1', name: 'cr1' });
  server.sendBookmarks();

  const summary = (events: WatchedEvent[]) =>
    events.map((e) => `${e.type} ${e.object.metadata.name}`);
  await until(() => fromList.events.length >= 5 && fresh.events.length >= 5, {
    ...QUICK,
    what: 'watch events',
  });
  t.same(summary(fromList.events), [
    'ADDED cr1',
    'ADDED cr2',
    'MODIFIED cr1',
    'DELETED cr1',
    'BOOKMARK ',
  ]);
  t.equal(fromList.events[0]?.object.metadata.uid, created.metadata.uid);
  t.equal(fromList.events[4]?.object.metadata.resourceVersion, server.store.resourceVersion);
  t.same(
    summary(fresh.events),
    ['ADDED old', 'ADDED cr1', 'ADDED cr2', 'MODIFIED cr1', 'DELETED cr1'],
    'without a resourceVersion, the existing objects come first as ADDED',
  );
  await until(() => selected.events.length >= 2, { ...QUICK, what: 'selected watch events' });
  t.same(
    summary(selected.events),
    ['ADDED cr1', 'DELETED cr1'],
    'entering the label selection is ADDED, no bookmark unless allowed',
  );

  selected.controller.abort();
  await until(() => server.openWatches === 2, {
    ...QUICK,
    what: 'the aborted watch to close on the server',
  });
});

t.test('a watch from a resourceVersion too old gets an ERROR event with code 410', async (t) => {
  const server = await startServer(t, { historySize: 2 });
  const { kc, custom } = clients(server);
  for (const name of ['a', 'b', 'c', 'd']) {
    await custom.createNamespacedCustomObject({
      ...G,
      namespace: 'ns1',
      body: certificateRequest(name, ...ns1Request),
    });
  }
  const watch = await startWatch(kc, CR_PATH, { resourceVersion: '1' });
  t.equal(await watch.done, null, 'the stream ends after the error');
  t.same(watch.events, [
    {
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'too old resource version: 1 (2)',
        reason: 'Expired',
        code: 410,
      },
    },
  ]);

  const recent = await startWatch(kc, CR_PATH, { resourceVersion: '3' });
  await until(() => recent.events.length === 1, { ...QUICK, what: 'the replayed change' });
  t.same(
    recent.events.map((e) => e.object.metadata.name),
    ['d'],
    'a resourceVersion still in the history resumes',
  );
  recent.controller.abort();

  server.expireWatches();
  const forced = await startWatch(kc, CR_PATH, { resourceVersion: server.store.resourceVersion });
  t.equal(await forced.done, null);
  t.match(forced.events, [{ type: 'ERROR', object: { code: 410, reason: 'Expired' } }]);
  const next = await startWatch(kc, CR_PATH, {
    resourceVersion: server.store.resourceVersion,
    timeoutSeconds: 1,
  });
  t.equal(await next.done, null, 'timeoutSeconds ends the stream');
  t.same(next.events, [], 'only the next watch expires');
});

t.test('authentication: a missing or unknown token is 401', async (t) => {
  const server = await startServer(t);
  // client-node drops the body of a 401, so read the Status with fetch.
  await t.rejects(
    clients(server, 'nope').custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' }),
    { code: 401 },
  );
  const response = await fetch(`${server.url}${CR_PATH}`);
  t.equal(response.status, 401);
  t.same(await response.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });
  t.equal(server.requests.at(-1)?.user, undefined);

  server.addToken('tok', { username: 'alice' });
  await clients(server, 'tok').custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' });
  t.equal(server.requests.at(-1)?.user, 'alice');
  server.removeToken('tok');
  await t.rejects(
    clients(server, 'tok').custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' }),
    { code: 401 },
  );

  const kubeconfig = new k8s.KubeConfig();
  kubeconfig.loadFromString(server.kubeConfigYaml());
  await kubeconfig.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject(G);
  t.equal(server.requests.at(-1)?.status, 200, 'the YAML kubeconfig works too');
  const unknownPath = await fetch(`${server.url}/healthz`, {
    headers: { authorization: `Bearer ${server.adminToken}` },
  });
  t.equal(unknownPath.status, 404);
});

const RBAC_YAML = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cert-csi-node}
rules:
  - apiGroups: [cert-manager.io]
    resources: [certificaterequests]
    verbs: [get, list, watch, create]
  - apiGroups: [cert-manager.io]
    resources: [certificaterequests/status]
    verbs: [patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cert-csi-node, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cert-csi-node}
subjects:
  - {kind: ServiceAccount, name: cert-csi-node, namespace: cert-csi}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: ca-reader, namespace: ns1}
rules:
  - apiGroups: [""]
    resources: [secrets]
    resourceNames: [ca]
    verbs: [get, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ca-reader, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ca-reader}
subjects:
  - {kind: ServiceAccount, name: cert-csi-node, namespace: cert-csi}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
`;

t.test('RBAC: denied requests get 403 with the real message, granted ones pass', async (t) => {
  const rbac = loadRbacYaml(RBAC_YAML);
  const server = await startServer(t, { rbac });
  server.addToken('node', serviceAccountUser('cert-csi', 'cert-csi-node'));
  await server.store.create(SecretKind, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'ca', namespace: 'ns1' },
  } as KubeObject);
  await server.store.create(
    CertificateRequestKind,
    certificateRequest('cr1', ...ns1Request) as KubeObject,
  );
  const { kc, custom, core } = clients(server, 'node');

  const clusterWide = await apiError(custom.listClusterCustomObject(G), 403);
  t.same(clusterWide, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `certificaterequests.cert-manager.io is forbidden: User "${NODE_SA}" cannot list resource "certificaterequests" in API group "cert-manager.io" at the cluster scope`,
    reason: 'Forbidden',
    details: { group: 'cert-manager.io', kind: 'certificaterequests' },
    code: 403,
  });
  const otherNs = await apiError(
    custom.listNamespacedCustomObject({ ...G, namespace: 'ns2' }),
    403,
  );
  t.equal(
    otherNs.message,
    `certificaterequests.cert-manager.io is forbidden: User "${NODE_SA}" cannot list resource "certificaterequests" in API group "cert-manager.io" in the namespace "ns2"`,
  );
  await custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' });
  await custom.patchNamespacedCustomObjectStatus(
    { ...G, namespace: 'ns1', name: 'cr1', body: { status: {} } },
    mergePatch,
  );
  const status = await apiError(
    custom.replaceNamespacedCustomObjectStatus({
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: certificateRequest('cr1', ...ns1Request),
    }),
    403,
  );
  t.equal(
    status.message,
    `certificaterequests.cert-manager.io "cr1" is forbidden: User "${NODE_SA}" cannot update resource "certificaterequests/status" in API group "cert-manager.io" in the namespace "ns1"`,
  );

  // resourceNames: only named requests can match.
  t.equal((await core.readNamespacedSecret({ name: 'ca', namespace: 'ns1' })).metadata?.name, 'ca');
  const other = await apiError(core.readNamespacedSecret({ name: 'other', namespace: 'ns1' }), 403);
  t.equal(
    other.message,
    `secrets "other" is forbidden: User "${NODE_SA}" cannot get resource "secrets" in API group "" in the namespace "ns1"`,
  );
  const list = await apiError(core.listNamespacedSecret({ namespace: 'ns1' }), 403);
  t.match(list.message, /^secrets is forbidden: .* cannot list resource "secrets"/);
  await apiError(
    core.listNamespacedSecret({ namespace: 'ns1', fieldSelector: 'metadata.name' }),
    403,
  );
  const pinned = await startWatch(kc, '/api/v1/namespaces/ns1/secrets', {
    fieldSelector: 'metadata.name=ca',
  });
  t.match(
    server.requests.at(-1),
    { verb: 'watch', status: 200 },
    'a watch pinned to the name is allowed',
  );
  pinned.controller.abort();
  const unpinned = await startWatch(kc, '/api/v1/namespaces/ns1/secrets', {});
  t.match(await unpinned.done, { statusCode: 403 });

  t.equal(server.requests.at(-1)?.status, 403);
  t.match(server.requests.at(-1), { user: NODE_SA, verb: 'watch', resource: 'secrets' });
  await clients(server).custom.listClusterCustomObject(G);
  t.equal(server.requests.at(-1)?.status, 200, 'the admin token bypasses RBAC');
});

t.test('RBAC: removing any single rule denies some request', async (t) => {
  const rbac = loadRbacYaml(RBAC_YAML);
  const server = await startServer(t, { rbac });
  server.addToken('node', serviceAccountUser('cert-csi', 'cert-csi-node'));
  await server.store.create(SecretKind, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'ca', namespace: 'ns1' },
  } as KubeObject);
  await server.store.create(
    CertificateRequestKind,
    certificateRequest('cr1', ...ns1Request) as KubeObject,
  );
  const { custom, core } = clients(server, 'node');
  const workload = async () => {
    await core.readNamespacedSecret({ name: 'ca', namespace: 'ns1' });
    await custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' });
    await custom.patchNamespacedCustomObjectStatus(
      { ...G, namespace: 'ns1', name: 'cr1', body: { status: {} } },
      mergePatch,
    );
  };
  await workload();
  t.same(
    rbac.rules().map((r) => `${r.role}#${r.index}`),
    ['ClusterRole/cert-csi-node#0', 'ClusterRole/cert-csi-node#1', 'Role/ns1/ca-reader#0'],
  );
  for (const { role, index } of rbac.rules()) {
    server.rbac = rbac.withoutRule(role, index);
    await apiError(workload(), 403);
  }
  t.throws(() => rbac.withoutRule('ClusterRole/cert-csi-node', 7), /no rule 7/);
});

t.test('RBAC authorizer: subjects, wildcards and bindings', async (t) => {
  const rbac = loadRbacYaml(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: status-writer}
rules:
  - {apiGroups: ["*"], resources: ["*/status"], verbs: [update]}
  - {apiGroups: [coordination.k8s.io], resources: ["*"], verbs: ["*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: status-writer}
roleRef: {kind: ClusterRole, name: status-writer}
subjects:
  - {kind: Group, name: writers}
  - {kind: User, name: bob}
  - {kind: ServiceAccount, name: no-namespace}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: List
items:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRoleBinding
    metadata: {name: missing-role}
    roleRef: {kind: ClusterRole, name: does-not-exist}
    subjects: [{kind: User, name: carol}]
`);
  const attrs = {
    verb: 'update',
    apiGroup: 'cert-manager.io',
    resource: 'issuers',
    subresource: 'status',
    namespace: 'a',
    name: 'x',
  };
  t.match(rbac.authorize({ ...attrs, user: { username: 'bob' } }), {
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "status-writer" of ClusterRole "status-writer" to User "bob"',
  });
  t.equal(rbac.authorize({ ...attrs, user: { username: 'x', groups: ['writers'] } }).allowed, true);
  t.equal(
    rbac.authorize({ ...attrs, subresource: undefined, user: { username: 'bob' } }).allowed,
    false,
    '*/status is not the object',
  );
  t.equal(
    rbac.authorize({ ...attrs, user: { username: 'carol' } }).allowed,
    false,
    'a missing role grants nothing',
  );
  t.equal(
    rbac.authorize({ ...attrs, user: serviceAccountUser('default', 'no-namespace') }).allowed,
    false,
    'a ClusterRoleBinding ServiceAccount subject needs a namespace',
  );
  t.equal(
    rbac.authorize({
      user: { username: 'bob' },
      verb: 'deletecollection',
      apiGroup: 'coordination.k8s.io',
      resource: 'leases',
    }).allowed,
    true,
  );
  t.throws(
    () => loadRbacYaml('kind: Role\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {}\n'),
    /name is required/,
  );
  t.throws(() => loadRbacYaml('a: [\n'), /invalid YAML/);
  t.throws(
    () =>
      loadRbacYaml(
        'kind: ClusterRoleBinding\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: x}\nroleRef: {kind: Role, name: y}\n',
      ),
    /cannot be bound/,
  );
});

t.test('failRequests answers 500 until it ends; latency delays requests', async (t) => {
  const server = await startServer(t);
  const { custom, core } = clients(server);
  const stop = server.failRequests({
    forMs: 30_000,
    match: (r) => r.resource === 'certificaterequests',
  });
  const failed = await apiError(custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' }), 500);
  t.match(failed, { reason: 'InternalError', message: 'Internal error occurred: injected fault' });
  await core.listNamespacedSecret({ namespace: 'ns1' });
  t.equal(server.requests.at(-1)?.status, 200, 'requests that do not match pass');
  stop();
  await custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' });

  server.failRequests({ status: 429, times: 1 });
  const busy = await apiError(core.listNamespacedSecret({ namespace: 'ns1' }), 429);
  t.equal(busy.reason, 'TooManyRequests');
  await core.listNamespacedSecret({ namespace: 'ns1' });
  // Long enough for the next request to arrive on a busy machine, then waited out.
  server.failRequests({ status: 503, forMs: 1_000 });
  await apiError(core.listNamespacedSecret({ namespace: 'ns1' }), 503);
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await core.listNamespacedSecret({ namespace: 'ns1' });
  server.failRequests();
  server.clearFaults();
  await core.listNamespacedSecret({ namespace: 'ns1' });

  server.setLatency(100);
  const started = Date.now();
  await core.listNamespacedSecret({ namespace: 'ns1' });
  t.ok(Date.now() - started >= 95, 'the request waited for the latency');
});

t.test('a hang fault holds matching requests unanswered until the client gives up', async (t) => {
  const server = await startServer(t);
  const { core } = clients(server);
  const stop = server.failRequests({
    hang: true,
    times: 1,
    match: (r) => r.resource === 'secrets',
  });
  const controller = new AbortController();
  const hung = fetch(`${server.url}/api/v1/namespaces/ns1/secrets`, {
    headers: { authorization: `Bearer ${server.adminToken}` },
    signal: controller.signal,
  });
  await until(() => server.hangingRequests === 1, QUICK);
  t.equal(server.requests.at(-1)?.status, 0, 'never answered');
  controller.abort();
  await t.rejects(hung);
  await until(() => server.hangingRequests === 0, QUICK);
  await core.listNamespacedSecret({ namespace: 'ns1' });
  t.equal(server.requests.at(-1)?.status, 200, 'the fault ended after one request');
  stop();
});

t.test('silenceWatches: open watches send nothing more and stay open', async (t) => {
  const server = await startServer(t);
  const { kc, custom } = clients(server);
  const watch = await startWatch(kc, CR_PATH, { allowWatchBookmarks: true, timeoutSeconds: 1 });
  t.teardown(() => watch.controller.abort());
  t.equal(server.silenceWatches(), 1);
  await custom.createNamespacedCustomObject({
    ...G,
    namespace: 'ns1',
    body: certificateRequest('quiet', ...ns1Request),
  });
  server.sendBookmarks();
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  t.same(watch.events, [], 'no event, no bookmark');
  t.equal(server.openWatches, 1, 'not ended at its timeoutSeconds');
  watch.controller.abort();
  await until(() => server.openWatches === 0, QUICK);
});

t.test(
  'dropWatches and endWatches end the client watch; waitForRequest sees the re-watch',
  async (t) => {
    const server = await startServer(t);
    const { kc } = clients(server);
    const first = await startWatch(kc, CR_PATH, {});
    t.equal(server.dropWatches(), 1);
    t.ok(await first.done, 'an aborted stream reports an error');
    const rewatch = server.waitForRequest((r) => r.verb === 'watch');
    const second = await startWatch(kc, CR_PATH, { resourceVersion: '0' });
    t.match(await rewatch, { verb: 'watch', status: 200 });
    t.equal(server.endWatches(), 1);
    t.equal(await second.done, null, 'a cleanly ended stream');
    const never = server.waitForRequest(() => false, 100);
    await fetch(`${server.url}/api/v1/namespaces/ns1/secrets`);
    await t.rejects(never, /no matching request/);
    await t.rejects(
      server.waitForRequest(() => true, 20),
      /no matching request/,
    );
  },
);

t.test('conflictOnNextStatusUpdates answers 409 to the next status writes only', async (t) => {
  const server = await startServer(t);
  const { custom } = clients(server);
  await server.store.create(
    CertificateRequestKind,
    certificateRequest('cr1', ...ns1Request) as KubeObject,
  );
  server.conflictOnNextStatusUpdates(2);
  const patch = () =>
    custom.patchNamespacedCustomObjectStatus(
      { ...G, namespace: 'ns1', name: 'cr1', body: { status: { a: 1 } } },
      mergePatch,
    );
  const first = await apiError(patch(), 409);
  t.match(
    first.message,
    /^Operation cannot be fulfilled on certificaterequests.cert-manager.io "cr1"/,
  );
  await custom.patchNamespacedCustomObject(
    { ...G, namespace: 'ns1', name: 'cr1', body: { metadata: { labels: { a: 'b' } } } },
    mergePatch,
  );
  const current = await server.store.get(CertificateRequestKind, 'cr1', 'ns1');
  await apiError(
    custom.replaceNamespacedCustomObjectStatus({
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: current,
    }),
    409,
  );
  t.match(await patch(), { status: { a: 1 } });
});

t.test('core kinds: secrets fold stringData, events are stored, leases and deletes', async (t) => {
  const server = await startServer(t);
  const { kc, core, coordination, custom } = clients(server);
  const secret = await core.createNamespacedSecret({
    namespace: 'ns1',
    body: { metadata: { name: 's' }, stringData: { 'ca.crt': 'pem' } },
  });
  t.same(secret.data, { 'ca.crt': Buffer.from('pem').toString('base64') });
  t.equal(secret.stringData, undefined);

  await core.createNamespacedEvent({
    namespace: 'ns1',
    body: {
      metadata: { generateName: 'cr1.' },
      involvedObject: { kind: 'CertificateRequest', name: 'cr1', namespace: 'ns1' },
      reason: 'Issued',
      message: 'done',
      type: 'Normal',
    },
  });
  const events = await core.listNamespacedEvent({
    namespace: 'ns1',
    fieldSelector: 'involvedObject.name=cr1',
  });
  t.same(
    events.items.map((e) => e.reason),
    ['Issued'],
  );

  const lease = await coordination.createNamespacedLease({
    namespace: 'ns1',
    body: {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new k8s.V1MicroTime() },
    },
  });
  lease.spec = { ...lease.spec, holderIdentity: 'b' };
  const renewed = await coordination.replaceNamespacedLease({
    name: 'leader',
    namespace: 'ns1',
    body: lease,
  });
  t.equal(renewed.spec?.holderIdentity, 'b');
  await apiError(
    coordination.replaceNamespacedLease({ name: 'leader', namespace: 'ns1', body: lease }),
    409,
  );

  const deleted = await core.deleteNamespacedSecret({ name: 's', namespace: 'ns1' });
  t.match(deleted, { status: 'Success', details: { name: 's', kind: 'secrets' } });
  await apiError(core.deleteNamespacedSecret({ name: 's', namespace: 'ns1' }), 404);
  await server.store.create(
    CertificateRequestKind,
    certificateRequest('cr1', ...ns1Request) as KubeObject,
  );
  const precondition = await apiError(
    custom.deleteNamespacedCustomObject({
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: { preconditions: { resourceVersion: '1' } },
    }),
    409,
  );
  t.match(precondition.message, /Precondition failed: ResourceVersion in precondition: 1/);
  const gone = (await custom.deleteNamespacedCustomObject({
    ...G,
    namespace: 'ns1',
    name: 'cr1',
  })) as KubeObject;
  t.equal(gone.metadata.name, 'cr1', 'custom resources answer the deleted object');

  const issuers = await startWatch(kc, '/apis/cert-manager.io/v1/clusterissuers', {});
  await server.store.create(ClusterIssuerKind, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'ClusterIssuer',
    metadata: { name: 'ci' },
    spec: {},
  } as KubeObject);
  await until(() => issuers.events.length === 1, {
    ...QUICK,
    what: 'the cluster-scoped watch event',
  });
  t.match(issuers.events, [{ type: 'ADDED', object: { metadata: { name: 'ci' } } }]);
  const issuer = (await custom.getClusterCustomObject({
    ...G,
    plural: 'clusterissuers',
    name: 'ci',
  })) as KubeObject;
  t.equal(issuer.metadata.name, 'ci');
  const patched = (await custom.patchClusterCustomObject(
    {
      ...G,
      plural: 'clusterissuers',
      name: 'ci',
      body: { metadata: { namespace: 'ns1', labels: { a: 'b' } } },
    },
    mergePatch,
  )) as KubeObject;
  t.match(patched.metadata, { labels: { a: 'b' } }, 'a patch of a cluster-scoped object applies');
  t.equal(patched.metadata.namespace, undefined, 'but drops a namespace, as upstream');
  await apiError(
    custom.getNamespacedCustomObject({
      ...G,
      plural: 'clusterissuers',
      namespace: 'ns1',
      name: 'ci',
    }),
    404,
  );
  await apiError(
    custom.getNamespacedCustomObjectStatus({
      ...G,
      plural: 'leases',
      namespace: 'ns1',
      name: 'leader',
    }),
    404,
  );
});

t.test('malformed requests get the API server answers', async (t) => {
  const server = await startServer(t);
  const call = async (
    method: string,
    path: string,
    body?: string,
    contentType = 'application/json',
  ) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': contentType },
      ...(body === undefined ? {} : { body }),
    });
    const status = (await response.json()) as ApiStatus;
    t.equal(status.code, response.status, `${method} ${path}: the Status carries the code`);
    return { code: response.status, reason: status.reason, message: status.message };
  };
  const crs = '/apis/cert-manager.io/v1/namespaces/ns1/certificaterequests';
  const notFound = { code: 404, message: 'the server could not find the requested resource' };
  t.match(await call('GET', '/api/v1/namespaces/%E0%A4%A/secrets'), notFound);
  t.match(await call('GET', '/api/v1/namespaces/ns1/status'), notFound);
  t.match(await call('GET', '/api/v1/namespaces/ns1/secrets/a/b/c'), notFound);
  t.match(await call('GET', '/apis/cert-manager.io'), notFound);
  t.match(await call('GET', '/apis/cert-manager.io/v1/certificaterequests/x'), notFound);
  t.match(await call('GET', '/apis/cert-manager.io/v1/namespaces/ns1/clusterissuers'), notFound);
  t.match(await call('GET', `${crs}/x/approval`), notFound);
  t.match(await call('GET', '/api/v1/namespaces/ns1/secrets/x/status'), notFound);
  const notAllowed = { code: 405, reason: 'MethodNotAllowed' };
  t.match(await call('DELETE', `${crs}/x/status`), notAllowed);
  t.match(await call('DELETE', crs), notAllowed);
  t.equal(server.requests.at(-1)?.verb, 'deletecollection');
  t.match(await call('POST', `${crs}/x`, '{}'), notAllowed);
  t.match(await call('POST', '/apis/cert-manager.io/v1/certificaterequests', '{}'), notAllowed);
  t.match(await call('OPTIONS', crs), notAllowed);
  t.equal(server.requests.at(-1)?.verb, 'options');
  t.match(await call('OPTIONS', `${crs}/cr0`), notAllowed);
  t.match(await call('GET', `${crs}/cr0/status?watch=true`), notAllowed);

  t.match(await call('POST', crs, '{'), { code: 400, message: /not valid JSON/ });
  t.match(await call('POST', crs, '[]'), { code: 400, message: /must be a JSON object/ });
  t.match(await call('POST', crs, '{"metadata": 1}'), { code: 400 });
  t.match(await call('POST', crs, '{"spec": {}}'), {
    code: 422,
    reason: 'Invalid',
    message: /name or generateName is required/,
  });
  await server.store.create(
    CertificateRequestKind,
    certificateRequest('cr1', ...ns1Request) as KubeObject,
  );
  const current = await server.store.get(CertificateRequestKind, 'cr1', 'ns1');
  const moved = { ...current, metadata: { ...current.metadata, namespace: 'ns2' } };
  t.match(await call('PUT', `${crs}/cr1`, JSON.stringify(moved)), {
    code: 400,
    message: /namespace of the provided object/,
  });
  t.match(await call('GET', `${crs}?watch=1&resourceVersion=abc`), { code: 400 });
  t.match(await call('GET', `${crs}?watch=true&timeoutSeconds=-1`), { code: 400 });
  t.match(await call('PATCH', `${crs}/cr1`, '{}', 'application/json-patch+json'), {
    code: 400,
    message: /must be an array/,
  });
  t.match(await call('PATCH', `${crs}/cr1`, '"x"', 'application/merge-patch+json'), { code: 400 });
  t.match(await call('PATCH', `${crs}/cr1`, '{}', 'application/strategic-merge-patch+json'), {
    code: 415,
  });

  server.failRequests({ status: 599, times: 1 });
  t.match(await call('GET', crs), { code: 599, reason: 'Unknown' });
  t.ok(server.requests.length > 0);
  server.clearLog();
  t.same(server.requests, []);
  await server.store.close();
  t.match(await call('POST', crs, JSON.stringify(certificateRequest('late', ...ns1Request))), {
    code: 500,
    reason: 'InternalError',
    message: /the store is closed/,
  });
});

t.test('generateName collisions, patch retries and delete preconditions', async (t) => {
  // A store whose first get of cr1 returns a stale copy, as if a write raced the patch.
  class RacingStore extends MemoryStore {
    racing = true;
    override async get<T extends KubeObject>(
      kind: ResourceKind,
      name: string,
      namespace?: string,
    ): Promise<T> {
      const found = await super.get<T>(kind, name, namespace);
      if (this.racing && name === 'cr1') {
        this.racing = false;
        await super.update(kind, {
          ...found,
          metadata: { ...found.metadata, annotations: { raced: 'yes' } },
        });
      }
      return found;
    }
  }
  const store = new RacingStore({ randomSuffix: () => 'aaaaa' });
  t.teardown(() => store.close());
  const server = await startServer(t, { store });
  const { custom } = clients(server);
  const body = certificateRequest('', ...ns1Request, withGenerateName('same-'));
  await custom.createNamespacedCustomObject({ ...G, namespace: 'ns1', body });
  const collision = await apiError(
    custom.createNamespacedCustomObject({ ...G, namespace: 'ns1', body }),
    409,
  );
  t.match(collision, { reason: 'AlreadyExists', message: /"same-aaaaa" already exists/ });

  await store.create(
    CertificateRequestKind,
    certificateRequest('cr1', ...ns1Request) as KubeObject,
  );
  const patched = (await custom.patchNamespacedCustomObject(
    { ...G, namespace: 'ns1', name: 'cr1', body: { metadata: { labels: { a: 'b' } } } },
    mergePatch,
  )) as KubeObject;
  t.same(patched.metadata.annotations, { raced: 'yes' }, 'the patch was retried on the new state');
  t.same(patched.metadata.labels, { a: 'b' });

  const uid = await apiError(
    custom.deleteNamespacedCustomObject({
      ...G,
      namespace: 'ns1',
      name: 'cr1',
      body: { preconditions: { uid: 'other' } },
    }),
    409,
  );
  t.match(uid.message, /Precondition failed: UID in precondition: other/);
  const current = await store.get(CertificateRequestKind, 'cr1', 'ns1');
  await custom.deleteNamespacedCustomObject({
    ...G,
    namespace: 'ns1',
    name: 'cr1',
    body: {
      preconditions: {
        uid: current.metadata.uid as string,
        resourceVersion: current.metadata.resourceVersion as string,
      },
    },
  });
  await server.close();
  t.equal((await store.list(CertificateRequestKind)).items.length, 1, 'a given store stays open');
});

t.test('a field selector watch reports objects entering and leaving the selection', async (t) => {
  const server = await startServer(t);
  const { kc, core } = clients(server);
  const pod = (name: string, phase: string) =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'ns1' },
      spec: { nodeName: 'n1' },
      status: { phase },
    }) as KubeObject;
  await server.store.create(PodKind, pod('p1', 'Running'));
  await server.store.updateStatus(
    PodKind,
    await server.store
      .get(PodKind, 'p1', 'ns1')
      .then((p) => ({ ...p, status: { phase: 'Running' } })),
  );
  const resumeFrom = server.store.resourceVersion;
  const fresh = await startWatch(kc, '/api/v1/pods', { fieldSelector: 'status.phase=Running' });
  const resumed = await startWatch(kc, '/api/v1/namespaces/ns1/pods', {
    fieldSelector: 'status.phase=Running',
    resourceVersion: resumeFrom,
  });
  const setPhase = (name: string, phase: string) =>
    core.patchNamespacedPodStatus(
      { name, namespace: 'ns1', body: { status: { phase } } },
      mergePatch,
    );
  await setPhase('p1', 'Pending');
  await setPhase('p1', 'Running');
  await setPhase('p1', 'Running');
  await core.patchNamespacedPod(
    { name: 'p1', namespace: 'ns1', body: { metadata: { labels: { a: 'b' } } } },
    mergePatch,
  );
  const named = await startWatch(kc, '/api/v1/namespaces/ns1/pods/p2', {});
  await core.createNamespacedPod({ namespace: 'ns1', body: { metadata: { name: 'p2' } } });
  await core.deleteNamespacedPod({ name: 'p2', namespace: 'ns1' });
  await core.deleteNamespacedPod({ name: 'p1', namespace: 'ns1' });
  const summary = (events: WatchedEvent[]) =>
    events.map((e) => `${e.type} ${e.object.metadata.name}`);
  const expected = ['DELETED p1', 'ADDED p1', 'MODIFIED p1', 'DELETED p1'];
  await until(() => fresh.events.length >= 5 && resumed.events.length >= 4, {
    ...QUICK,
    what: 'pod events',
  });
  t.same(
    summary(fresh.events),
    ['ADDED p1', ...expected],
    'leaving the selection is DELETED, entering ADDED',
  );
  t.same(summary(resumed.events), expected, 'a resumed watch knows what was selected');
  t.equal(fresh.events.length, 5, 'p2 never matched');
  await until(() => named.events.length >= 2, { ...QUICK, what: 'events of p2' });
  t.same(summary(named.events), ['ADDED p2', 'DELETED p2'], 'a watch on one name (legacy form)');
});

t.test('field selector parsing', async (t) => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'a,b', namespace: 'n' },
    spec: { count: 2 },
  } as KubeObject;
  const parse = (text: string) => parseFieldSelector(text, ['spec.count', 'spec.missing']);
  t.equal(parse('metadata.name=a\\,b').matches(pod), true, 'escaped comma');
  t.equal(parse('metadata.name=a\\,b').exactName(), 'a,b');
  t.equal(parse('metadata.name!=a\\,b').exactName(), undefined);
  t.equal(
    parse('spec.count=2,spec.missing=').matches(pod),
    true,
    'numbers compare as text, missing as empty',
  );
  t.equal(parse('spec.count=2,,').requirements.length, 1);
  t.throws(
    () => parse('metadata\\=x=1'),
    /not supported: metadata\\=x/,
    'an escaped = is no operator',
  );
  t.throws(() => parse('=x'), /can't understand/);
  t.throws(() => parse('metadata.name=a\\b'), /invalid escape/);
  t.throws(() => parse('metadata.name=a=b'), /unescaped = in value/);
});

t.test('RBAC manifests from a directory and from objects', async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'nested'));
  await writeFile(join(dir, 'nested', 'rbac.yaml'), RBAC_YAML);
  await writeFile(join(dir, 'notes.txt'), 'not yaml: [');
  const fromDir = await loadRbacFromDirectory(dir);
  t.equal(fromDir.rules().length, 3);
  const fromObjects = loadRbacObjects([
    { apiVersion: 'v1', kind: 'Role', metadata: { name: 'not-rbac' } },
    'junk',
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'b' },
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [
        { kind: 'Robot', name: 'x' },
        { kind: 'ServiceAccount', name: 'sa' },
      ],
    },
  ]);
  t.same(fromObjects.rules(), [
    {
      role: 'Role/default/r',
      index: 0,
      rule: { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
    },
  ]);
  const get = { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'default', name: 'p' };
  t.equal(
    fromObjects.authorize({ ...get, user: serviceAccountUser('default', 'sa') }).allowed,
    true,
    'namespace defaults to default, the SA to the binding namespace',
  );
  t.equal(
    fromObjects.authorize({ ...get, namespace: 'other', user: serviceAccountUser('other', 'sa') })
      .allowed,
    false,
  );
  const role = (rules: string) =>
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: x}\nrules: ${rules}\n`;
  t.throws(() => loadRbacYaml(role('x')), /rules must be a list/);
  t.throws(() => loadRbacYaml(role('[1]')), /a rule must be a mapping/);
  t.throws(() => loadRbacYaml(role('[{verbs: [1]}]')), /verbs must be a list of strings/);
  t.throws(
    () =>
      loadRbacYaml(
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\nroleRef: {kind: ClusterRole, name: y}\nsubjects: [1]\n',
      ),
    /a subject must be a mapping/,
  );
  t.equal(loadRbacYaml('').rules().length, 0);
});

t.test('a Secret keeps its data when stringData adds keys', async (t) => {
  const server = await startServer(t);
  const { core } = clients(server);
  const secret = await core.createNamespacedSecret({
    namespace: 'ns1',
    body: { metadata: { name: 's' }, data: { a: 'YQ==' }, stringData: { b: 'b' } },
  });
  t.same(secret.data, { a: 'YQ==', b: 'Yg==' });
  const replaced = await core.replaceNamespacedSecret({
    name: 's',
    namespace: 'ns1',
    body: { ...secret, data: { c: 'Yw==' } },
  });
  t.same(replaced.data, { c: 'Yw==' }, 'without stringData, data is kept as sent');
});

t.test(
  'a client-node informer lists, watches and re-watches from its last resourceVersion',
  async (t) => {
    const server = await startServer(t);
    const { kc, custom } = clients(server);
    await server.store.create(
      CertificateRequestKind,
      certificateRequest('cr0', ...ns1Request) as KubeObject,
    );
    const informer = k8s.makeInformer(
      kc,
      CR_PATH,
      () =>
        custom.listNamespacedCustomObject({ ...G, namespace: 'ns1' }) as Promise<
          K8s.KubernetesListObject<K8s.KubernetesObject>
        >,
    );
    const seen: string[] = [];
    for (const verb of ['add', 'update', 'delete'] as const) {
      informer.on(verb, (object) => seen.push(`${verb} ${object.metadata?.name}`));
    }
    informer.on('error', () => undefined);
    await informer.start();
    t.teardown(() => informer.stop());
    await until(() => server.openWatches === 1, { ...QUICK, what: 'the informer watch' });
    await custom.createNamespacedCustomObject({
      ...G,
      namespace: 'ns1',
      body: certificateRequest('cr1', ...ns1Request),
    });
    await until(() => seen.length === 2, { ...QUICK, what: 'the informer add' });
    const rewatch = server.waitForRequest((r) => r.verb === 'watch');
    server.endWatches();
    const second = await rewatch;
    t.equal(
      second.query.get('resourceVersion'),
      server.store.resourceVersion,
      'resumes from the last event',
    );
    await custom.deleteNamespacedCustomObject({ ...G, namespace: 'ns1', name: 'cr0' });
    await until(() => seen.length === 3, { ...QUICK, what: 'the informer delete' });
    t.same(seen, ['add cr0', 'add cr1', 'delete cr0']);
    t.same(
      informer.list('ns1').map((o) => o.metadata?.name),
      ['cr1'],
    );
  },
);
