import type { Test } from 'tap';
import { type Certificate, CertificateKind } from '../../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../../src/api/certificate-request.js';
import { ClusterIssuerKind, type Issuer } from '../../../src/api/issuer.js';
import { type Lease, LeaseKind } from '../../../src/api/lease.js';
import type { KubeObject, ResourceKind } from '../../../src/api/meta.js';
import { type Secret, SecretKind } from '../../../src/api/secret.js';
import { StoreError, type StoreErrorReason } from '../../../src/store/errors.js';
import type {
  ListOptions,
  ResourceStore,
  WatchOptions,
} from '../../../src/store/resource-store.js';
import { isNewerResourceVersion } from '../../../src/store/resource-version.js';
import {
  certificate,
  certificateRequest,
  clusterIssuer,
  type Modifier,
  secret,
  withCsr,
  withData,
  withLabels,
  withNamespace,
  withSpec,
  withType,
} from '../../support/builders/index.js';
import { rejection } from '../../support/eventually.js';
import type { StoreBackend } from './backend.js';
import { WatchRecorder } from './recorder.js';

// The ResourceStore contract, once, for every backend: each case runs unchanged against
// MemoryStore (with and without a state directory) and KubernetesStore over HTTP to the
// fake API server. Where backends could differ, the expectation is what a real Kubernetes
// API server does. Watches are waited on by their events, never by sleeps.

/** One conformance case: it opens its own stores from backend and asserts what they do. */
export type ConformanceCase = (t: Test, backend: StoreBackend) => Promise<void>;

const NS = 'conformance';
const OTHER_NS = 'conformance-other';
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const DECIMAL = /^[1-9][0-9]*$/;

/** The Certificate issued by another issuer. */
function reissued(obj: Certificate, issuer: string): Certificate {
  return { ...obj, spec: { ...obj.spec, issuerRef: { ...obj.spec.issuerRef, name: issuer } } };
}

/**
 * The CertificateRequests of the cases (with certificateRequest): a namespaced custom
 * resource with a status subresource.
 */
const conformanceRequest: Modifier<CertificateRequest>[] = [
  withNamespace(NS),
  withSpec({ issuerRef: { name: 'ca', kind: 'Issuer' }, duration: '1h0m0s' }),
  withCsr('csr'),
];

// The Certificates of the cases (certificate(name, withNamespace, withSpec)): its CRD offers
// spec.issuerRef.{group,kind,name} as field labels, so every backend (the API server too) can
// select on a field an update changes. The ClusterIssuers: a cluster-scoped custom resource
// with a status subresource.

/** The Secrets of the cases (with secret): a built-in kind without a status subresource. */
const opaque: Modifier<Secret>[] = [withNamespace(NS), withType('Opaque')];

/** A coordination.k8s.io Lease: a built-in kind outside the core group. */
function lease(name: string, holder: string): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: NS },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
  };
}

/** The object with its labels replaced. */
function relabelled<T extends KubeObject>(obj: T, labels: Record<string, string>): T {
  return { ...obj, metadata: { ...obj.metadata, labels } };
}

/** The object with another resourceVersion (a stale or a current one). */
function atVersion<T extends KubeObject>(obj: T, resourceVersion: string): T {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion } };
}

/** The object without its status. */
function withoutStatus(obj: CertificateRequest): CertificateRequest {
  const { status: _status, ...rest } = obj;
  return rest;
}

function rvOf(obj: KubeObject): string {
  return obj.metadata.resourceVersion ?? '';
}

/** Asserts that promise rejects with a StoreError of reason (and its HTTP code); returns it. */
async function expectError(
  t: Test,
  promise: Promise<unknown>,
  reason: StoreErrorReason,
  what: string,
): Promise<StoreError | undefined> {
  const err = await rejection(promise).catch((failure: unknown) => failure);
  if (!(err instanceof StoreError)) {
    t.fail(`${what}: expected a ${reason} StoreError, got ${String(err)}`);
    return undefined;
  }
  t.equal(err.reason, reason, `${what}: ${reason}`);
  t.equal(err.code, new StoreError(reason, '').code, `${what}: HTTP ${err.code}`);
  return err;
}

/** Names of listed objects, sorted (list order is not part of the contract). */
async function listedNames(
  store: ResourceStore,
  kind: ResourceKind,
  options: ListOptions = {},
): Promise<string[]> {
  const listed = await store.list(kind, options);
  return listed.items.map((item) => item.metadata.name).sort();
}

/** `namespace/name` of listed objects, sorted. */
async function listedKeys(
  store: ResourceStore,
  kind: ResourceKind,
  options: ListOptions = {},
): Promise<string[]> {
  const listed = await store.list(kind, options);
  return listed.items.map((item) => `${item.metadata.namespace}/${item.metadata.name}`).sort();
}

const createCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const before = await store.list(CertificateRequestKind);
  const sent = {
    ...certificateRequest('a', ...conformanceRequest),
    status: { certificate: 'c2VudA==' },
  };
  const created = await store.create<CertificateRequest>(CertificateRequestKind, sent);
  t.match(created.metadata.uid, /^.+$/, 'uid filled');
  t.match(rvOf(created), DECIMAL, 'resourceVersion filled');
  t.ok(
    isNewerResourceVersion(rvOf(created), before.resourceVersion),
    'resourceVersion newer than the list before',
  );
  t.match(created.metadata.creationTimestamp, RFC3339, 'creationTimestamp filled, RFC 3339');
  const age = Date.now() - Date.parse(created.metadata.creationTimestamp ?? '');
  t.ok(Math.abs(age) < 10 * 60_000, `creationTimestamp is about now (${age} ms off)`);
  t.equal(created.metadata.generation, 1, 'generation starts at 1');
  t.equal(created.status, undefined, 'status is not written by create (status subresource)');
  t.equal(created.apiVersion, 'cert-manager.io/v1');
  t.equal(created.kind, 'CertificateRequest');
  t.same(created.spec, sent.spec, 'spec as sent');
  t.same(await store.get(CertificateRequestKind, 'a', NS), created, 'get returns what was created');

  await expectError(
    t,
    store.create(
      CertificateRequestKind,
      certificateRequest('a', ...conformanceRequest, withSpec({ duration: '2h0m0s' })),
    ),
    'AlreadyExists',
    'second create of the same name',
  );
  const kept = await store.get<CertificateRequest>(CertificateRequestKind, 'a', NS);
  t.equal(kept.metadata.uid, created.metadata.uid, 'the first object is kept');
  t.equal(kept.spec.duration, '1h0m0s', 'unchanged by the refused create');
  t.equal(rvOf(kept), rvOf(created), 'resourceVersion unchanged by the refused create');

  const elsewhere = await store.create(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest, withNamespace(OTHER_NS)),
  );
  t.not(elsewhere.metadata.uid, created.metadata.uid, 'the same name in another namespace');
  t.ok(isNewerResourceVersion(rvOf(elsewhere), rvOf(created)), 'resourceVersions increase');
  const other = await store.create(SecretKind, secret('a', ...opaque, withData({ key: 'v' })));
  t.not(other.metadata.uid, created.metadata.uid, 'the same name for another kind');
};

const getCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  await expectError(t, store.get(CertificateRequestKind, 'a', NS), 'NotFound', 'get of nothing');
  const created = await store.create(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest),
  );
  t.same(await store.get(CertificateRequestKind, 'a', NS), created, 'found');
  await expectError(
    t,
    store.get(CertificateRequestKind, 'a', OTHER_NS),
    'NotFound',
    'get in another namespace',
  );
  await expectError(t, store.get(SecretKind, 'a', NS), 'NotFound', 'get of another kind');
  await expectError(
    t,
    store.get(CertificateRequestKind, 'b', NS),
    'NotFound',
    'get of another name',
  );
};

const updateCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const created = await store.create<CertificateRequest>(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest),
  );
  const updated = await store.update<CertificateRequest>(CertificateRequestKind, {
    ...created,
    spec: { ...created.spec, duration: '2h0m0s' },
  });
  t.equal(updated.spec.duration, '2h0m0s', 'current resourceVersion: updated');
  t.ok(isNewerResourceVersion(rvOf(updated), rvOf(created)), 'resourceVersion bumped');
  t.equal(updated.metadata.uid, created.metadata.uid, 'uid kept');
  t.equal(
    updated.metadata.creationTimestamp,
    created.metadata.creationTimestamp,
    'creationTimestamp kept',
  );
  t.equal(updated.metadata.generation, 2, 'a spec change bumps generation');
  t.same(await store.get(CertificateRequestKind, 'a', NS), updated, 'get sees the update');

  await expectError(
    t,
    store.update(CertificateRequestKind, { ...created, spec: { ...created.spec, isCA: true } }),
    'Conflict',
    'update with a stale resourceVersion',
  );
  const afterConflict = await store.get<CertificateRequest>(CertificateRequestKind, 'a', NS);
  t.same(afterConflict, updated, 'a refused update changes nothing');

  const labelled = await store.update<CertificateRequest>(
    CertificateRequestKind,
    relabelled(updated, { team: 'x' }),
  );
  t.same(labelled.metadata.labels, { team: 'x' }, 'metadata updated');
  t.ok(isNewerResourceVersion(rvOf(labelled), rvOf(updated)), 'resourceVersion bumped again');
  t.equal(labelled.metadata.generation, 2, 'a metadata change does not bump generation');

  await expectError(
    t,
    store.update(
      CertificateRequestKind,
      atVersion(certificateRequest('missing', ...conformanceRequest), rvOf(labelled)),
    ),
    'NotFound',
    'update of a missing object',
  );
};

const noOpUpdateCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const created = await store.create<CertificateRequest>(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest),
  );
  const from = (await store.list(CertificateRequestKind)).resourceVersion;
  const same = await store.update<CertificateRequest>(CertificateRequestKind, created);
  t.equal(rvOf(same), rvOf(created), 'an update that changes nothing keeps the resourceVersion');
  const sameStatus = await store.updateStatus<CertificateRequest>(CertificateRequestKind, created);
  t.equal(rvOf(sameStatus), rvOf(created), 'so does such a status update');
  await store.create(CertificateRequestKind, certificateRequest('sentinel', ...conformanceRequest));
  const watch = new WatchRecorder(t, store, CertificateRequestKind, { resourceVersion: from });
  await watch.waitFor(`ADDED ${NS}/sentinel`);
  t.same(watch.seen, [`ADDED ${NS}/sentinel`], 'and no watch hears of it');
  watch.stop();
};

const builtinUpdateCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const created = await store.create<Secret>(
    SecretKind,
    secret('s', ...opaque, withData({ key: 'one' })),
  );
  t.match(rvOf(created), DECIMAL);
  const unconditional = secret('s', ...opaque, withData({ key: 'two' }));
  t.equal(unconditional.metadata.resourceVersion, undefined);
  const updated = await store.update<Secret>(SecretKind, unconditional);
  t.same(updated.data, unconditional.data, 'a Secret updates without a resourceVersion');
  t.ok(isNewerResourceVersion(rvOf(updated), rvOf(created)), 'resourceVersion bumped');
  t.equal(updated.metadata.uid, created.metadata.uid, 'uid kept');
  await expectError(
    t,
    store.update(
      SecretKind,
      atVersion(secret('s', ...opaque, withData({ key: 'three' })), rvOf(created)),
    ),
    'Conflict',
    'a stale resourceVersion is still checked',
  );

  const held = await store.create<Lease>(LeaseKind, lease('lock', 'me'));
  const taken = await store.update<Lease>(LeaseKind, lease('lock', 'you'));
  t.equal(taken.spec.holderIdentity, 'you', 'a Lease updates without a resourceVersion');
  t.ok(isNewerResourceVersion(rvOf(taken), rvOf(held)));
  await expectError(
    t,
    store.update(LeaseKind, atVersion(lease('lock', 'me'), rvOf(held))),
    'Conflict',
    'a stale Lease write',
  );
  t.equal(
    (await store.get<Lease>(LeaseKind, 'lock', NS)).spec.holderIdentity,
    'you',
    'the refused write changed nothing',
  );
};

const secretStringDataCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const base64 = (text: string) => Buffer.from(text).toString('base64');
  const created = await store.create<Secret>(SecretKind, {
    ...secret('s', ...opaque, withData({ key: 'kept' })),
    data: { kept: base64('kept'), both: base64('from data') },
    stringData: { both: 'from stringData', plain: 'text' },
  });
  t.same(
    created.data,
    { kept: base64('kept'), both: base64('from stringData'), plain: base64('text') },
    'stringData is folded into data, winning over it',
  );
  t.equal(created.stringData, undefined, 'and is not stored');
  t.same(await store.get(SecretKind, 's', NS), created);
  const updated = await store.update<Secret>(SecretKind, {
    ...created,
    stringData: { plain: 'changed' },
  });
  t.equal(updated.data?.plain, base64('changed'), 'on update too');
  t.equal(updated.stringData, undefined);
};

const statusCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const created = await store.create<CertificateRequest>(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest),
  );
  const withStatus = await store.updateStatus<CertificateRequest>(CertificateRequestKind, {
    ...relabelled(created, { sneaky: 'label' }),
    spec: { ...created.spec, duration: '9h0m0s' },
    status: { certificate: 'b25l' },
  });
  t.same(withStatus.status, { certificate: 'b25l' }, 'updateStatus writes status');
  t.equal(withStatus.spec.duration, '1h0m0s', 'updateStatus ignores spec');
  t.equal(withStatus.metadata.labels, undefined, 'updateStatus ignores labels');
  t.equal(withStatus.metadata.generation, 1, 'a status write does not bump generation');
  t.ok(isNewerResourceVersion(rvOf(withStatus), rvOf(created)), 'resourceVersion bumped');

  const updated = await store.update<CertificateRequest>(CertificateRequestKind, {
    ...withStatus,
    spec: { ...withStatus.spec, duration: '2h0m0s' },
    status: { certificate: 'dHdv' },
  });
  t.equal(updated.spec.duration, '2h0m0s', 'update writes spec');
  t.same(updated.status, { certificate: 'b25l' }, 'update ignores status');
  t.ok(isNewerResourceVersion(rvOf(updated), rvOf(withStatus)));

  const kept = await store.update<CertificateRequest>(
    CertificateRequestKind,
    relabelled(withoutStatus(updated), { team: 'x' }),
  );
  t.same(kept.status, { certificate: 'b25l' }, 'an update without status keeps it');

  await expectError(
    t,
    store.updateStatus(CertificateRequestKind, {
      ...withStatus,
      status: { certificate: 'c3RhbGU=' },
    }),
    'Conflict',
    'updateStatus with a stale resourceVersion',
  );
  await expectError(
    t,
    store.update(CertificateRequestKind, {
      ...withStatus,
      spec: { ...withStatus.spec, isCA: true },
    }),
    'Conflict',
    'update with the resourceVersion from before the last write',
  );
  await expectError(
    t,
    store.updateStatus(CertificateRequestKind, {
      ...atVersion(certificateRequest('missing', ...conformanceRequest), rvOf(kept)),
      status: {},
    }),
    'NotFound',
    'updateStatus of a missing object',
  );
  const current = await store.get<CertificateRequest>(CertificateRequestKind, 'a', NS);
  t.same(current, kept, 'refused writes changed nothing');

  const cleared = await store.updateStatus<CertificateRequest>(
    CertificateRequestKind,
    withoutStatus(current),
  );
  t.equal(cleared.status, undefined, 'updateStatus without status clears it');
  t.same(cleared.metadata.labels, { team: 'x' }, 'and keeps the rest');
};

const deleteCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const created = await store.create(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest),
  );
  await store.create(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest, withNamespace(OTHER_NS)),
  );
  await store.delete(CertificateRequestKind, 'a', NS);
  await expectError(t, store.get(CertificateRequestKind, 'a', NS), 'NotFound', 'get after delete');
  t.same(await listedNames(store, CertificateRequestKind, { namespace: NS }), [], 'not listed');
  await expectError(t, store.delete(CertificateRequestKind, 'a', NS), 'NotFound', 'second delete');
  await expectError(
    t,
    store.delete(CertificateRequestKind, 'never', NS),
    'NotFound',
    'delete of a name never created',
  );
  t.ok(
    await store.get(CertificateRequestKind, 'a', OTHER_NS),
    'the namesake in another namespace is still there',
  );
  const again = await store.create(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest),
  );
  t.not(again.metadata.uid, created.metadata.uid, 'a re-created object is a new object');
  t.ok(isNewerResourceVersion(rvOf(again), rvOf(created)));
};

const generateNameCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const template = certificateRequest('', ...conformanceRequest);
  template.metadata.generateName = 'gen-';
  const first = await store.create<CertificateRequest>(CertificateRequestKind, template);
  const second = await store.create<CertificateRequest>(CertificateRequestKind, template);
  t.match(first.metadata.name, /^gen-[a-z0-9]{5}$/, 'the prefix and a random suffix');
  t.match(second.metadata.name, /^gen-[a-z0-9]{5}$/);
  t.not(first.metadata.name, second.metadata.name, 'each create gets its own name');
  t.equal(first.metadata.generateName, 'gen-', 'generateName is kept');
  t.same(
    await store.get(CertificateRequestKind, first.metadata.name, NS),
    first,
    'found by the generated name',
  );
  t.same(
    await listedNames(store, CertificateRequestKind),
    [first.metadata.name, second.metadata.name].sort(),
  );
  const named = certificateRequest('chosen', ...conformanceRequest);
  named.metadata.generateName = 'gen-';
  t.equal(
    (await store.create(CertificateRequestKind, named)).metadata.name,
    'chosen',
    'a name wins over generateName',
  );
  await expectError(
    t,
    store.create(CertificateRequestKind, certificateRequest('', ...conformanceRequest)),
    'Invalid',
    'neither name nor generateName',
  );
};

const listThenWatchCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const a = await store.create<CertificateRequest>(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest),
  );
  const b = await store.create(
    CertificateRequestKind,
    certificateRequest('b', ...conformanceRequest),
  );
  const listed = await store.list(CertificateRequestKind);
  t.match(listed.resourceVersion, DECIMAL, 'a list carries a resourceVersion');
  t.ok(!isNewerResourceVersion(rvOf(b), listed.resourceVersion), 'no older than what it lists');
  t.same(listed.items.map((item) => item.metadata.name).sort(), ['a', 'b']);

  const c = await store.create(
    CertificateRequestKind,
    certificateRequest('c', ...conformanceRequest),
  );
  const a2 = await store.update(CertificateRequestKind, { ...a, spec: { ...a.spec, isCA: true } });
  await store.delete(CertificateRequestKind, 'b', NS);
  const watch = new WatchRecorder(t, store, CertificateRequestKind, {
    resourceVersion: listed.resourceVersion,
  });
  await watch.waitFor(`DELETED ${NS}/b`);
  const live = await store.update(CertificateRequestKind, relabelled(c, { live: 'yes' }));
  await watch.waitFor(`MODIFIED ${NS}/c`);
  t.same(
    watch.seen,
    [`ADDED ${NS}/c`, `MODIFIED ${NS}/a`, `DELETED ${NS}/b`, `MODIFIED ${NS}/c`],
    'the changes after the list, in order, then live ones; nothing the list showed',
  );
  const [rvC, rvA, rvB, rvLive] = watch.events.map((event) => rvOf(event.object));
  t.same(
    [rvC, rvA, rvLive],
    [rvOf(c), rvOf(a2), rvOf(live)],
    'events carry their changes’ versions',
  );
  t.ok(
    isNewerResourceVersion(rvB, rvOf(a2)) && isNewerResourceVersion(rvOf(live), rvB),
    'the deletion’s too',
  );
  t.same(watch.errors, []);
  watch.stop();
};

const replayCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const from = (await store.list(CertificateRequestKind)).resourceVersion;
  const x1 = await store.create<CertificateRequest>(
    CertificateRequestKind,
    certificateRequest('x', ...conformanceRequest),
  );
  const x2 = await store.update<CertificateRequest>(CertificateRequestKind, {
    ...x1,
    spec: { ...x1.spec, duration: '2h0m0s' },
  });
  const x3 = await store.updateStatus<CertificateRequest>(CertificateRequestKind, {
    ...x2,
    status: { certificate: 'eA==' },
  });
  await store.delete(CertificateRequestKind, 'x', NS);
  const y = await store.create(
    CertificateRequestKind,
    certificateRequest('y', ...conformanceRequest),
  );

  const all = new WatchRecorder<CertificateRequest>(t, store, CertificateRequestKind, {
    resourceVersion: from,
  });
  const later = new WatchRecorder<CertificateRequest>(t, store, CertificateRequestKind, {
    resourceVersion: rvOf(x2),
  });
  await all.waitFor(`ADDED ${NS}/y`);
  await later.waitFor(`ADDED ${NS}/y`);
  t.same(all.seen, [
    `ADDED ${NS}/x`,
    `MODIFIED ${NS}/x`,
    `MODIFIED ${NS}/x`,
    `DELETED ${NS}/x`,
    `ADDED ${NS}/y`,
  ]);
  const [added, modified, statused, deleted, addedY] = all.events.map((event) => event.object);
  t.same(added, x1, 'ADDED carries the created object');
  t.same(modified, x2, 'MODIFIED carries the updated object');
  t.same(statused, x3, 'and the status write');
  t.match(deleted, { spec: x3.spec, status: x3.status }, 'DELETED carries the last state');
  const deletedRv = rvOf(deleted as CertificateRequest);
  t.ok(
    isNewerResourceVersion(deletedRv, rvOf(x3)) && isNewerResourceVersion(rvOf(y), deletedRv),
    `DELETED carries the deletion's resourceVersion (${rvOf(x3)} < ${deletedRv} < ${rvOf(y)})`,
  );
  t.same(addedY, y);
  t.same(
    later.seen,
    [`MODIFIED ${NS}/x`, `DELETED ${NS}/x`, `ADDED ${NS}/y`],
    'from a later resourceVersion: only the changes after it',
  );
  t.same(later.events[0]?.object, x3);

  await store.update(CertificateRequestKind, relabelled(y, { live: 'yes' }));
  await all.waitFor(`MODIFIED ${NS}/y`);
  await later.waitFor(`MODIFIED ${NS}/y`);
  t.equal(all.events.length, 6, 'after the replay the watch goes on live');
  t.equal(later.events.length, 4);
  t.same([...all.errors, ...later.errors], []);
  all.stop();
  later.stop();
};

const goneCase: ConformanceCase = async (t, backend) => {
  const historySize = 4;
  const store = await backend.open(t, { historySize });
  // A list of a store that was never written to may say "0", which means "any" to a watch.
  await store.create(SecretKind, secret('first', ...opaque, withData({ key: 'write' })));
  const from = (await store.list(CertificateRequestKind)).resourceVersion;
  t.not(from, '0');
  const created: KubeObject[] = [];
  for (let i = 0; i < historySize + 2; i++) {
    created.push(
      await store.create(
        CertificateRequestKind,
        certificateRequest(`r${i}`, ...conformanceRequest),
      ),
    );
  }
  const old = new WatchRecorder(t, store, CertificateRequestKind, { resourceVersion: from });
  const err = await old.waitForError();
  t.ok(err instanceof StoreError, 'a StoreError');
  t.match(err, { reason: 'Gone', code: 410 }, 'too old for the history: Gone (410)');
  t.same(old.seen, [], 'and nothing replayed before it');

  // The newest historySize - 1 changes are certainly still held, whatever the exact window.
  const recent = created.at(-historySize) as KubeObject;
  const resumed = new WatchRecorder(t, store, CertificateRequestKind, {
    resourceVersion: rvOf(recent),
  });
  const last = created.at(-1) as KubeObject;
  await resumed.waitFor(`ADDED ${NS}/${last.metadata.name}`);
  t.same(
    resumed.seen,
    created.slice(-(historySize - 1)).map((obj) => `ADDED ${NS}/${obj.metadata.name}`),
    'a resourceVersion inside the history still replays',
  );
  t.same(resumed.errors, []);
  resumed.stop();
};

const LABELLED: Array<[string, Record<string, string>]> = [
  ['web', { tier: 'web', env: 'prod' }],
  ['db', { tier: 'db' }],
  ['cache', { tier: 'cache', env: 'dev' }],
  ['bare', {}],
  ['prod', { env: 'prod' }],
];

const listSelectorCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  for (const [name, labels] of LABELLED) {
    await store.create(
      CertificateRequestKind,
      certificateRequest(name, ...conformanceRequest, withLabels(labels)),
    );
  }
  await store.create(
    CertificateRequestKind,
    certificateRequest(
      'other',
      ...conformanceRequest,
      withNamespace(OTHER_NS),
      withLabels({ tier: 'web' }),
    ),
  );
  const expectations: Array<[string, string[]]> = [
    ['', ['bare', 'cache', 'db', 'prod', 'web']],
    ['tier=web', ['web']],
    ['tier==web', ['web']],
    ['tier!=web', ['bare', 'cache', 'db', 'prod']],
    ['tier in (web,db)', ['db', 'web']],
    ['tier notin (web,db)', ['bare', 'cache', 'prod']],
    ['tier', ['cache', 'db', 'web']],
    ['!tier', ['bare', 'prod']],
    ['tier,env=prod', ['web']],
    ['!tier,env', ['prod']],
    ['tier notin (web),env', ['cache', 'prod']],
    ['tier=nothing', []],
  ];
  for (const [selector, names] of expectations) {
    t.same(
      await listedNames(store, CertificateRequestKind, { namespace: NS, labelSelector: selector }),
      names,
      `list "${selector}"`,
    );
  }
  t.same(
    await listedNames(store, CertificateRequestKind, { labelSelector: 'tier=web' }),
    ['other', 'web'],
    'a selector across namespaces',
  );
  // The API server refuses a selector it cannot parse as a bad request (400), not as an
  // invalid object (422).
  await expectError(
    t,
    store.list(CertificateRequestKind, { labelSelector: 'tier in web' }),
    'BadRequest',
    'a malformed selector',
  );
  await expectMalformedWatch(t, store, CertificateRequestKind, { labelSelector: 'tier in web' });
};

/** A watch with a selector the server cannot parse ends BadRequest (400) before any event. */
async function expectMalformedWatch(
  t: Test,
  store: ResourceStore,
  kind: ResourceKind,
  selector: Pick<WatchOptions, 'labelSelector' | 'fieldSelector'>,
): Promise<void> {
  const from = (await store.list(kind)).resourceVersion;
  const malformed = new WatchRecorder(t, store, kind, { ...selector, resourceVersion: from });
  const err = await malformed.waitForError();
  t.match(
    err,
    { name: 'StoreError', reason: 'BadRequest', code: 400 },
    'a watch with one ends BadRequest',
  );
  t.same(malformed.seen, []);
}

const watchSelectorCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const from = (await store.list(CertificateRequestKind)).resourceVersion;
  const selectors = [
    'tier=web',
    'tier!=web',
    'tier in (web,db)',
    'tier notin (db)',
    'tier',
    '!tier',
  ];
  const watches = new Map(
    selectors.map((labelSelector) => [
      labelSelector,
      new WatchRecorder(t, store, CertificateRequestKind, { resourceVersion: from, labelSelector }),
    ]),
  );
  const a1 = await store.create(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest, withLabels({ tier: 'web' })),
  );
  const b1 = await store.create(
    CertificateRequestKind,
    certificateRequest('b', ...conformanceRequest, withLabels({ tier: 'db' })),
  );
  await store.create(CertificateRequestKind, certificateRequest('c', ...conformanceRequest));
  const a2 = await store.update(CertificateRequestKind, relabelled(a1, { tier: 'web', x: '1' }));
  const b2 = await store.update(CertificateRequestKind, relabelled(b1, { tier: 'web' }));
  const a3 = await store.update(CertificateRequestKind, relabelled(a2, {}));
  await store.delete(CertificateRequestKind, 'b', NS);
  await store.delete(CertificateRequestKind, 'c', NS);
  // Every selector matches one of these; they come last, so once a watch has its sentinel
  // it has everything before it too.
  await store.create(
    CertificateRequestKind,
    certificateRequest('z-web', ...conformanceRequest, withLabels({ tier: 'web' })),
  );
  await store.create(CertificateRequestKind, certificateRequest('z-bare', ...conformanceRequest));

  const expected: Record<string, string[]> = {
    'tier=web': ['ADDED a', 'MODIFIED a', 'ADDED b', 'DELETED a', 'DELETED b', 'ADDED z-web'],
    'tier!=web': ['ADDED b', 'ADDED c', 'DELETED b', 'ADDED a', 'DELETED c', 'ADDED z-bare'],
    'tier in (web,db)': [
      'ADDED a',
      'ADDED b',
      'MODIFIED a',
      'MODIFIED b',
      'DELETED a',
      'DELETED b',
      'ADDED z-web',
    ],
    'tier notin (db)': [
      'ADDED a',
      'ADDED c',
      'MODIFIED a',
      'ADDED b',
      'MODIFIED a',
      'DELETED b',
      'DELETED c',
      'ADDED z-web',
      'ADDED z-bare',
    ],
    tier: [
      'ADDED a',
      'ADDED b',
      'MODIFIED a',
      'MODIFIED b',
      'DELETED a',
      'DELETED b',
      'ADDED z-web',
    ],
    '!tier': ['ADDED c', 'ADDED a', 'DELETED c', 'ADDED z-bare'],
  };
  for (const [selector, watch] of watches) {
    const events = (expected[selector] ?? []).map((e) => e.replace(' ', ` ${NS}/`));
    await watch.waitFor(events.at(-1) as string);
    t.same(watch.seen, events, `watch "${selector}"`);
    t.same(watch.errors, []);
  }

  const web = watches.get('tier=web') as WatchRecorder;
  const left = web.events[3]?.object;
  t.same(
    left?.metadata.labels,
    a2.metadata.labels,
    'leaving: DELETED with the last matching state',
  );
  t.equal(rvOf(left as KubeObject), rvOf(a3), 'and the resourceVersion of the change');
  const entered = web.events[2]?.object;
  t.same(entered, b2, 'entering: ADDED with the new state');
  const bare = watches.get('!tier') as WatchRecorder;
  t.same(bare.events[1]?.object, a3, 'entering by losing a label');
  for (const watch of watches.values()) watch.stop();
};

const listFieldSelectorCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  await store.create(
    CertificateKind,
    certificate(
      'a',
      withNamespace(NS),
      withSpec({ secretName: 'a-tls', issuerRef: { name: 'ca', kind: 'Issuer' } }),
      withLabels({ tier: 'web' }),
    ),
  );
  await store.create(
    CertificateKind,
    certificate(
      'b',
      withNamespace(NS),
      withSpec({
        secretName: 'b-tls',
        issuerRef: { name: 'other', kind: 'Issuer', group: 'cert-manager.io' },
      }),
      withLabels({ tier: 'web' }),
    ),
  );
  await store.create(
    CertificateKind,
    certificate(
      'c',
      withNamespace(NS),
      withSpec({ secretName: 'c-tls', issuerRef: { name: 'ca', kind: 'Issuer' } }),
      withLabels({ tier: 'db' }),
    ),
  );
  await store.create(
    CertificateKind,
    certificate(
      'a',
      withNamespace(OTHER_NS),
      withSpec({ secretName: 'a-tls', issuerRef: { name: 'ca', kind: 'Issuer' } }),
    ),
  );
  const expectations: Array<[ListOptions, string[]]> = [
    [{ fieldSelector: '' }, ['a', 'b', 'c']],
    [{ fieldSelector: 'spec.issuerRef.name=ca' }, ['a', 'c']],
    [{ fieldSelector: 'spec.issuerRef.name==ca' }, ['a', 'c']],
    [{ fieldSelector: 'spec.issuerRef.name!=ca' }, ['b']],
    [{ fieldSelector: 'spec.issuerRef.name=nothing' }, []],
    [{ fieldSelector: 'spec.issuerRef.group=' }, ['a', 'c']],
    [{ fieldSelector: 'spec.issuerRef.name=ca,spec.issuerRef.kind=Issuer' }, ['a', 'c']],
    [{ fieldSelector: 'spec.issuerRef.name=ca', labelSelector: 'tier=web' }, ['a']],
    [{ fieldSelector: 'spec.issuerRef.name!=ca', labelSelector: 'tier=web' }, ['b']],
    [{ fieldSelector: 'spec.issuerRef.name=ca', labelSelector: 'tier=cache' }, []],
    [{ fieldSelector: 'metadata.name=b' }, ['b']],
    [{ fieldSelector: 'metadata.name!=b,metadata.namespace=conformance' }, ['a', 'c']],
  ];
  for (const [options, names] of expectations) {
    t.same(
      await listedNames(store, CertificateKind, { namespace: NS, ...options }),
      names,
      `list ${JSON.stringify(options)}`,
    );
  }
  t.same(
    await listedKeys(store, CertificateKind, { fieldSelector: 'metadata.name=a' }),
    [`${NS}/a`, `${OTHER_NS}/a`].sort(),
    'a field selector across namespaces',
  );
  t.same(
    await listedKeys(store, CertificateKind, {
      fieldSelector: `metadata.name=a,metadata.namespace!=${NS}`,
    }),
    [`${OTHER_NS}/a`],
  );
  for (const fieldSelector of ['spec.issuerRef.name', 'metadata.name=a=b', '=a']) {
    await expectError(
      t,
      store.list(CertificateKind, { fieldSelector }),
      'BadRequest',
      `the malformed field selector "${fieldSelector}"`,
    );
  }
  await expectMalformedWatch(t, store, CertificateKind, { fieldSelector: 'spec.issuerRef.name' });
};

const watchFieldSelectorCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const from = (await store.list(CertificateKind)).resourceVersion;
  const byIssuer = { resourceVersion: from, fieldSelector: 'spec.issuerRef.name=ca' };
  const live = new WatchRecorder(t, store, CertificateKind, byIssuer);
  const both = new WatchRecorder(t, store, CertificateKind, {
    ...byIssuer,
    labelSelector: 'tier=web',
  });
  const a1 = await store.create(
    CertificateKind,
    certificate(
      'a',
      withNamespace(NS),
      withSpec({ secretName: 'a-tls', issuerRef: { name: 'ca', kind: 'Issuer' } }),
      withLabels({ tier: 'web' }),
    ),
  );
  const b1 = await store.create(
    CertificateKind,
    certificate(
      'b',
      withNamespace(NS),
      withSpec({ secretName: 'b-tls', issuerRef: { name: 'other', kind: 'Issuer' } }),
      withLabels({ tier: 'web' }),
    ),
  );
  const c1 = await store.create(
    CertificateKind,
    certificate(
      'c',
      withNamespace(NS),
      withSpec({ secretName: 'c-tls', issuerRef: { name: 'ca', kind: 'Issuer' } }),
      withLabels({ tier: 'db' }),
    ),
  );
  // b enters the field selection, then a leaves it and changes again outside it.
  const b2 = await store.update(CertificateKind, reissued(b1, 'ca'));
  const a2 = await store.update(CertificateKind, reissued(a1, 'other'));
  await store.update(CertificateKind, relabelled(a2, { tier: 'web', x: '1' }));
  // c enters and b leaves the label selection while both stay in the field selection.
  await store.update(CertificateKind, relabelled(c1, { tier: 'web' }));
  await store.update(CertificateKind, relabelled(b2, { tier: 'db' }));
  await store.delete(CertificateKind, 'b', NS);
  await store.delete(CertificateKind, 'c', NS);
  // Matched by every watch, and last: once a watch has it, it has everything before it.
  await store.create(
    CertificateKind,
    certificate(
      'z',
      withNamespace(NS),
      withSpec({ secretName: 'z-tls', issuerRef: { name: 'ca', kind: 'Issuer' } }),
      withLabels({ tier: 'web' }),
    ),
  );
  // Started after every change, this one replays them from the history.
  const replayed = new WatchRecorder(t, store, CertificateKind, byIssuer);

  const fieldOnly = [
    'ADDED a',
    'ADDED c',
    'ADDED b',
    'DELETED a',
    'MODIFIED c',
    'MODIFIED b',
    'DELETED b',
    'DELETED c',
    'ADDED z',
  ];
  const expected: Array<[string, WatchRecorder, string[]]> = [
    ['field selector', live, fieldOnly],
    ['field selector, replayed from history', replayed, fieldOnly],
    [
      'field and label selector',
      both,
      ['ADDED a', 'ADDED b', 'DELETED a', 'ADDED c', 'DELETED b', 'DELETED c', 'ADDED z'],
    ],
  ];
  for (const [name, watch, events] of expected) {
    const summaries = events.map((e) => e.replace(' ', ` ${NS}/`));
    await watch.waitFor(summaries.at(-1) as string);
    t.same(watch.seen, summaries, `watch with a ${name}`);
    t.same(watch.errors, []);
  }
  for (const watch of [live, replayed]) {
    t.same(watch.events[2]?.object, b2, 'entering by an update: ADDED with the new state');
    const left = watch.events[3]?.object as KubeObject;
    t.equal(left.metadata.name, 'a');
    // The API server sends the last matching state (MemoryStore does too); only the
    // resourceVersion is common to every backend, as the fake API server lacks that state.
    t.equal(rvOf(left), rvOf(a2), 'leaving by an update: DELETED at the change');
  }
  for (const watch of [live, both, replayed]) watch.stop();
};

const scopeCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const from = (await store.list(CertificateRequestKind)).resourceVersion;
  const here = new WatchRecorder(t, store, CertificateRequestKind, {
    namespace: NS,
    resourceVersion: from,
  });
  const issuers = new WatchRecorder(t, store, ClusterIssuerKind, { resourceVersion: from });
  const there = await store.create(
    CertificateRequestKind,
    certificateRequest('same', ...conformanceRequest, withNamespace(OTHER_NS)),
  );
  const mine = await store.create(
    CertificateRequestKind,
    certificateRequest('same', ...conformanceRequest),
  );
  t.not(mine.metadata.uid, there.metadata.uid, 'one name, two namespaces: two objects');
  t.same(await listedNames(store, CertificateRequestKind, { namespace: NS }), ['same']);
  t.equal((await store.list(CertificateRequestKind)).items.length, 2, 'every namespace');
  await here.waitFor(`ADDED ${NS}/same`);
  t.same(here.seen, [`ADDED ${NS}/same`], 'a namespaced watch sees its namespace only');

  const issuer = await store.create<Issuer>(
    ClusterIssuerKind,
    clusterIssuer('ca', withSpec({ selfSigned: {} })),
  );
  t.equal(issuer.metadata.namespace, undefined, 'a cluster-scoped object has no namespace');
  t.same(await store.get(ClusterIssuerKind, 'ca'), issuer);
  t.same(await listedNames(store, ClusterIssuerKind), ['ca']);
  await expectError(
    t,
    store.create(ClusterIssuerKind, clusterIssuer('ca', withSpec({ selfSigned: {} }))),
    'AlreadyExists',
    'cluster-scoped names are unique',
  );
  const ready = await store.updateStatus<Issuer>(ClusterIssuerKind, {
    ...issuer,
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'IsReady', message: '' }] },
  });
  t.equal(ready.status?.conditions?.[0]?.status, 'True', 'status of a cluster-scoped object');
  await expectError(
    t,
    store.update(ClusterIssuerKind, relabelled(issuer, { a: 'b' })),
    'Conflict',
    'a stale cluster-scoped update',
  );
  await store.delete(ClusterIssuerKind, 'ca');
  await expectError(t, store.get(ClusterIssuerKind, 'ca'), 'NotFound', 'deleted');
  await issuers.waitFor('DELETED ca');
  t.same(issuers.seen, ['ADDED ca', 'MODIFIED ca', 'DELETED ca'], 'a watch sees its kind only');

  await store.delete(CertificateRequestKind, 'same', OTHER_NS);
  t.ok(await store.get(CertificateRequestKind, 'same', NS), 'delete is per namespace');
  here.stop();
  issuers.stop();
};

const clusterNamespaceCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  const sent = clusterIssuer('ca', withSpec({ selfSigned: {} }));
  sent.metadata.namespace = NS;
  const created = await store.create<Issuer>(ClusterIssuerKind, sent);
  t.equal(created.metadata.namespace, undefined, 'create drops the namespace');
  t.same(await store.get(ClusterIssuerKind, 'ca'), created, 'found without one');
  const updated = await store.update<Issuer>(ClusterIssuerKind, {
    ...created,
    metadata: { ...created.metadata, namespace: NS, labels: { a: 'b' } },
  });
  t.equal(updated.metadata.namespace, undefined, 'so does update');
  t.same(updated.metadata.labels, { a: 'b' }, 'which is made');
  const ready = await store.updateStatus<Issuer>(ClusterIssuerKind, {
    ...updated,
    metadata: { ...updated.metadata, namespace: NS },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'IsReady', message: '' }] },
  });
  t.equal(ready.metadata.namespace, undefined, 'and updateStatus');
  t.equal(ready.status?.conditions?.[0]?.status, 'True');
  t.same(await listedNames(store, ClusterIssuerKind), ['ca']);
};

const freshWatchCase: ConformanceCase = async (t, backend) => {
  const store = await backend.open(t);
  await store.create(
    CertificateRequestKind,
    certificateRequest('a', ...conformanceRequest, withLabels({ tier: 'web' })),
  );
  const b = await store.create(
    CertificateRequestKind,
    certificateRequest('b', ...conformanceRequest, withLabels({ tier: 'web' })),
  );
  await store.create(
    CertificateRequestKind,
    certificateRequest('c', ...conformanceRequest, withLabels({ tier: 'db' })),
  );
  await store.create(
    CertificateRequestKind,
    certificateRequest(
      'd',
      ...conformanceRequest,
      withNamespace(OTHER_NS),
      withLabels({ tier: 'web' }),
    ),
  );
  const omitted = new WatchRecorder(t, store, CertificateRequestKind, {
    namespace: NS,
    labelSelector: 'tier=web',
  });
  const zero = new WatchRecorder(t, store, CertificateRequestKind, {
    namespace: NS,
    labelSelector: 'tier=web',
    resourceVersion: '0',
  });
  for (const watch of [omitted, zero]) {
    await watch.waitFor(`ADDED ${NS}/b`);
  }
  // Only now is each watch certainly running: later changes are changes, not state.
  await store.update(CertificateRequestKind, relabelled(b, { tier: 'web', v: '2' }));
  for (const [name, watch] of [
    ['no resourceVersion', omitted],
    ['resourceVersion "0"', zero],
  ] as const) {
    await watch.waitFor(`MODIFIED ${NS}/b`);
    t.same(
      [...watch.seen.slice(0, 2)].sort(),
      [`ADDED ${NS}/a`, `ADDED ${NS}/b`],
      `${name}: first the current matching objects, as ADDED`,
    );
    t.same(watch.seen.slice(2), [`MODIFIED ${NS}/b`], `${name}: then the changes`);
    t.same(watch.errors, []);
    watch.stop();
  }
};

/** Every case, by name. */
export const conformanceCases: ReadonlyArray<readonly [string, ConformanceCase]> = [
  [
    'create fills uid, resourceVersion and creationTimestamp; a second create is AlreadyExists',
    createCase,
  ],
  ['get finds by kind, namespace and name; anything else is NotFound', getCase],
  ['update: a stale resourceVersion is Conflict, a current one succeeds and bumps it', updateCase],
  ['an update that changes nothing keeps the resourceVersion and notifies nobody', noOpUpdateCase],
  [
    'built-in kinds (Secret, Lease) update unconditionally without a resourceVersion',
    builtinUpdateCase,
  ],
  ["a Secret's write-only stringData is folded into data", secretStringDataCase],
  ['status subresource: update ignores status, updateStatus writes only status', statusCase],
  ['delete removes; a second delete is NotFound', deleteCase],
  ['generateName: the server picks a unique name from the prefix', generateNameCase],
  ['a list carries a resourceVersion; a watch from it sees only later changes', listThenWatchCase],
  [
    'a watch from a resourceVersion replays the changes after it, in order, with their objects',
    replayCase,
  ],
  ['a watch from a resourceVersion older than the history is Gone (410)', goneCase],
  [
    'label selectors on list: =, ==, !=, in, notin, exists, !exists; a malformed one is BadRequest',
    listSelectorCase,
  ],
  ['label selectors on watch: objects enter and leave the selection', watchSelectorCase],
  [
    'field selectors on list: =, ==, !=, with a label selector; a malformed one is BadRequest',
    listFieldSelectorCase,
  ],
  [
    'field selectors on watch: an update that makes an object match is ADDED, one that stops it DELETED',
    watchFieldSelectorCase,
  ],
  ['namespaced and cluster-scoped kinds', scopeCase],
  [
    'a namespace sent with a cluster-scoped object is dropped, as the API server does',
    clusterNamespaceCase,
  ],
  [
    'a watch without a resourceVersion (or "0") starts with the current objects as ADDED',
    freshWatchCase,
  ],
];

/** Runs every conformance case as a subtest of t against backend. */
export function runConformance(t: Test, backend: StoreBackend): void {
  for (const [name, run] of conformanceCases) {
    t.test(name, (t) => run(t, backend));
  }
}
