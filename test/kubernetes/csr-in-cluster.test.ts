import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
} from '../../src/api/certificate-signing-request.js';
import { ClusterIssuerKind, type Issuer, IssuerKind, isIssuerReady } from '../../src/api/issuer.js';
import { type KubeEvent, KubeEventKind } from '../../src/api/kube-event.js';
import { SecretKind } from '../../src/api/secret.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { loadRbacYaml } from '../fake-api-server/rbac-authorizer.js';
import {
  clusterIssuer,
  issuer,
  tlsSecret,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import {
  CONTROLLER_USER,
  startCluster,
  startClusterController,
} from '../support/cluster-harness.js';
import {
  csrChain,
  csrConditionTypes,
  csrObject,
  decideThroughApproval,
  keyedCsr,
} from '../support/csr-fixtures.js';
import { until } from '../support/eventually.js';
import { makeCA, opensslVerify } from '../support/issuer-fixtures.js';
import { waitForObject } from '../support/wait-for-object.js';

// CSRs end to end: requesters create them through the fake API server with the real client
// (which records who asked), an admin approves or denies through the approval subresource,
// and `cert-csi controller` signs them under exactly deploy/manifests's RBAC, asking the API
// server (a SubjectAccessReview answered from the loaded RBAC) whether a requester may
// reference a namespaced Issuer.

const KEY_ANNOTATION = 'experimental.cert-manager.io/private-key-secret-name';
const WAIT_MS = 60_000;

// Everyone may create and read CSRs; alice may reference Issuer shop/ca by name, carl every
// Issuer of shop (`*`); bob may reference nothing.
const REQUESTERS = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csr-requester}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [create, get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: csr-requester}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csr-requester}
subjects: [{kind: Group, name: system:authenticated}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reference-ca, namespace: shop}
rules:
- {apiGroups: [cert-manager.io], resources: [signers], verbs: [reference], resourceNames: [ca]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reference-ca, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reference-ca}
subjects: [{kind: User, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reference-all, namespace: shop}
rules:
- {apiGroups: [cert-manager.io], resources: [signers], verbs: [reference], resourceNames: ["*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reference-all, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reference-all}
subjects: [{kind: User, name: carl}]
`;

const cluster = await startCluster(t);
const { server } = cluster;
server.rbac = cluster.rbac.with(loadRbacYaml(REQUESTERS));
for (const name of ['alice', 'bob', 'carl']) server.addToken(name, { username: name });
const requester = (token: string) =>
  new KubernetesStore({ kubeConfig: cluster.kubeConfig(token), qps: 1000, burst: 1000 });
const admin = cluster.kubeConfig(server.adminToken);

const ca = await makeCA();
const caData = { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem };
await server.store.create(SecretKind, tlsSecret('shop', 'ca-key', caData));
await server.store.create(SecretKind, tlsSecret('cert-csi', 'cluster-ca-key', caData));
await server.store.create(
  IssuerKind,
  issuer('ca', withNamespace('shop'), withSpec({ ca: { secretName: 'ca-key' } })),
);
await server.store.create(
  ClusterIssuerKind,
  clusterIssuer('cluster-ca', withSpec({ ca: { secretName: 'cluster-ca-key' } })),
);
await server.store.create(ClusterIssuerKind, clusterIssuer('self', withSpec({ selfSigned: {} })));
// One signing worker: a CSR created after another is synced after it (a barrier).
startClusterController(t, cluster, { signingWorkers: 1 });
for (const [kind, namespace, name] of [
  [IssuerKind, 'shop', 'ca'],
  [ClusterIssuerKind, undefined, 'cluster-ca'],
  [ClusterIssuerKind, undefined, 'self'],
] as const) {
  await waitForObject<Issuer>(server.store, kind, name, namespace, isIssuerReady, WAIT_MS);
}

/** Creates a CSR as token (a fresh ECDSA key) through the API; returns the key. */
async function ask(
  token: string,
  name: string,
  signerName: string,
  options: Parameters<typeof csrObject>[3] = {},
) {
  const { csrPem, key } = await keyedCsr({ subject: { commonName: name } });
  await requester(token).create(
    CertificateSigningRequestKind,
    csrObject(name, signerName, csrPem, options),
  );
  return { key };
}

function csrUntil(name: string, predicate: (csr: CertificateSigningRequest) => boolean) {
  return waitForObject<CertificateSigningRequest>(
    server.store,
    CertificateSigningRequestKind,
    name,
    undefined,
    predicate,
    WAIT_MS,
  );
}

/** The Events about a CSR: in namespace default, as for every cluster-scoped object. */
async function eventsOf(name: string): Promise<KubeEvent[]> {
  const events = await server.store.list<KubeEvent>(KubeEventKind, { namespace: 'default' });
  return events.items.filter(
    (e) => e.involvedObject.kind === 'CertificateSigningRequest' && e.involvedObject.name === name,
  );
}

function eventOf(name: string, reason: string): Promise<KubeEvent> {
  return until(async () => (await eventsOf(name)).find((e) => e.reason === reason), {
    what: `event ${reason} of CSR ${name}`,
    timeoutMs: WAIT_MS,
    intervalMs: 20,
  });
}

let barriers = 0;

/** Waits until the CA signer has synced everything queued before now. */
async function caBarrier(): Promise<void> {
  const name = `barrier-${++barriers}`;
  await ask('alice', name, 'clusterissuers.cert-manager.io/cluster-ca');
  await eventOf(name, 'WaitingApproval');
}

const issued = (name: string) => csrUntil(name, (csr) => Boolean(csr.status?.certificate));

t.test('approved through the API, a ClusterIssuer CSR is signed and verifies', async (t) => {
  const { key } = await ask('bob', 'cluster-one', 'clusterissuers.cert-manager.io/cluster-ca', {
    expirationSeconds: 3600,
  });
  await decideThroughApproval(admin, 'cluster-one', 'Approved');
  const csr = await issued('cluster-one');
  const chain = csrChain(csr);
  t.match(await opensslVerify(ca.certificatePem, chain), /OK/);
  const leaf = new X509Certificate(chain);
  t.ok(leaf.checkPrivateKey(key), "the requester's key");
  t.equal(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom), 3_600_000, 'expirationSeconds');
  const event = await eventOf('cluster-one', 'CertificateIssued');
  t.match(event, {
    type: 'Normal',
    message: 'Certificate fetched from issuer successfully',
    involvedObject: { apiVersion: 'certificates.k8s.io/v1', name: 'cluster-one' },
  });
  t.equal(event.involvedObject.namespace, undefined, 'a cluster-scoped object');
});

t.test('a namespaced Issuer: reference by name or *, else DeniedReference', async (t) => {
  for (const token of ['alice', 'carl', 'bob']) {
    await ask(token, `shop-${token}`, 'issuers.cert-manager.io/shop.ca');
    await decideThroughApproval(admin, `shop-${token}`, 'Approved');
  }
  for (const token of ['alice', 'carl']) {
    const csr = await issued(`shop-${token}`);
    t.match(await opensslVerify(ca.certificatePem, csrChain(csr)), /OK/, `${token} may`);
  }
  const denied = await csrUntil('shop-bob', (csr) => csrConditionTypes(csr).includes('Failed'));
  t.match(denied.status?.conditions?.at(-1), {
    type: 'Failed',
    status: 'True',
    reason: 'DeniedReference',
    message: 'Requester may not reference Namespaced Issuer shop/ca',
  });
  t.equal(denied.status?.certificate, undefined);
  t.match(await eventOf('shop-bob', 'DeniedReference'), { type: 'Warning' });
  const reviews = server.requests.filter(
    (r) => r.resource === 'subjectaccessreviews' && r.user === CONTROLLER_USER,
  );
  t.ok(reviews.length >= 4, 'the controller asked the API server');
  t.ok(
    reviews.every((r) => r.status === 201),
    'and was allowed to',
  );
});

t.test('never approved: WaitingApproval and no certificate; denied: nothing', async (t) => {
  await ask('bob', 'waiting', 'clusterissuers.cert-manager.io/cluster-ca');
  t.match(await eventOf('waiting', 'WaitingApproval'), {
    type: 'Normal',
    message: 'Waiting for the Approved condition before issuing',
  });
  await ask('bob', 'denied', 'clusterissuers.cert-manager.io/cluster-ca');
  await eventOf('denied', 'WaitingApproval');
  await decideThroughApproval(admin, 'denied', 'Denied');
  await caBarrier();
  for (const name of ['waiting', 'denied']) {
    const csr = await server.store.get<CertificateSigningRequest>(
      CertificateSigningRequestKind,
      name,
    );
    t.equal(csr.status?.certificate, undefined, `${name}: no certificate`);
    t.notOk(csrConditionTypes(csr).includes('Failed'), `${name}: not failed`);
  }
  t.same(
    server.requests.filter(
      (r) =>
        r.resource === 'certificatesigningrequests' &&
        r.subresource === 'status' &&
        (r.name === 'waiting' || r.name === 'denied'),
    ),
    [],
    'no status write',
  );
});

t.test('a signing failure is Failed and never retried', async (t) => {
  // The annotation names a key Secret, but not the key of this CSR.
  await ask('bob', 'mismatch', 'clusterissuers.cert-manager.io/self', {
    annotations: { [KEY_ANNOTATION]: 'some-other-key' },
  });
  const other = await keyedCsr();
  await server.store.create(SecretKind, other.keySecret('cert-csi', 'some-other-key'));
  await decideThroughApproval(admin, 'mismatch', 'Approved');
  const failed = await csrUntil('mismatch', (csr) => csrConditionTypes(csr).includes('Failed'));
  t.match(failed.status?.conditions?.at(-1), {
    reason: 'ErrorKeyMatch',
    message: 'Referenced private key in Secret does not match that in the request',
  });
  await ask('bob', 'short', 'clusterissuers.cert-manager.io/cluster-ca', {
    annotations: { 'experimental.cert-manager.io/request-duration': '9m' },
  });
  await decideThroughApproval(admin, 'short', 'Approved');
  const short = await csrUntil('short', (csr) => csrConditionTypes(csr).includes('Failed'));
  t.match(short.status?.conditions?.at(-1), {
    reason: 'InvalidDuration',
    message: 'CertificateSigningRequest minimum allowed duration is 10m0s, requested 9m0s',
  });
  // Both are synced again (a label each) and nothing more is written.
  for (const name of ['mismatch', 'short']) {
    const csr = await server.store.get<CertificateSigningRequest>(
      CertificateSigningRequestKind,
      name,
    );
    await server.store.update(CertificateSigningRequestKind, {
      ...csr,
      metadata: { ...csr.metadata, labels: { poked: 'yes' } },
    });
  }
  await caBarrier();
  // The SelfSigned signer's own barrier: a SelfSigned CSR created after the poke.
  await ask('bob', 'self-barrier', 'clusterissuers.cert-manager.io/self');
  await eventOf('self-barrier', 'WaitingApproval');
  for (const name of ['mismatch', 'short']) {
    const writes = server.requests.filter(
      (r) =>
        r.user === CONTROLLER_USER &&
        r.resource === 'certificatesigningrequests' &&
        r.subresource === 'status' &&
        r.name === name,
    );
    t.equal(writes.length, 1, `${name}: one status write, never a second attempt`);
    const reason = name === 'short' ? 'InvalidDuration' : 'ErrorKeyMatch';
    t.equal(
      (await eventsOf(name)).filter((e) => e.reason === reason).length,
      1,
      `${name}: one event`,
    );
  }
});

t.test("beside other issuers, a CSR of an issuer that does not exist is another's", async (t) => {
  await ask('bob', 'elsewhere', 'clusterissuers.cert-manager.io/not-ours');
  await decideThroughApproval(admin, 'elsewhere', 'Approved');
  await ask('bob', 'elsewhere-waiting', 'clusterissuers.cert-manager.io/not-ours');
  await caBarrier();
  t.same(await eventsOf('elsewhere'), [], 'no IssuerNotFound');
  t.same(await eventsOf('elsewhere-waiting'), [], 'no WaitingApproval');
});

t.test('no request of the controller was refused', async (t) => {
  t.same(
    server.requests
      .filter((r) => r.user === CONTROLLER_USER && r.status >= 400)
      .map((r) => `${r.verb} ${r.resource}/${r.subresource ?? ''} ${r.status}`),
    [],
  );
});
