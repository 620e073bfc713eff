import t from 'tap';
import { encodeBytes } from '../../src/api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
} from '../../src/api/certificate-signing-request.js';
import { isStoreError } from '../../src/store/errors.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import type { WatchEvent } from '../../src/store/resource-store.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import { loadRbacYaml } from '../fake-api-server/rbac-authorizer.js';
import { isApiException } from '../support/client-node-full.js';
import { csrObject, decideThroughApproval, keyedCsr } from '../support/csr-fixtures.js';
import { rejection, until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';

// The fake API server serves CertificateSigningRequests as kube-apiserver does (registry
// strategies, CertificateSigning and CertificateApproval admission), and the Kubernetes store
// reads and writes them through the real client, as the controllers do.

const SIGNER = 'clusterissuers.cert-manager.io/ca';
const OTHER_SIGNER = 'issuers.cert-manager.io/shop.ca';

// alice asks; carol approves for every ClusterIssuer, erin for one signer name only; dave may
// write the approval subresource but approve nothing; sam writes status without `sign`, sid
// with it.
const RBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: requester}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [create, get, list, watch, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: requester}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: requester}
subjects: [{kind: Group, name: system:authenticated}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: approval-writer}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests/approval], verbs: [update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: approval-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: approval-writer}
subjects: [{kind: User, name: carol}, {kind: User, name: dave}, {kind: User, name: erin}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: approve-clusterissuers}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], verbs: [approve], resourceNames: ["clusterissuers.cert-manager.io/*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: approve-clusterissuers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: approve-clusterissuers}
subjects: [{kind: User, name: carol}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: approve-one}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], verbs: [approve], resourceNames: ["${OTHER_SIGNER}"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: approve-one}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: approve-one}
subjects: [{kind: User, name: erin}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: status-writer}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests/status], verbs: [update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: status-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: status-writer}
subjects: [{kind: User, name: sam}, {kind: User, name: sid}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: sign}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], verbs: [sign], resourceNames: ["${SIGNER}"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: sign}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sign}
subjects: [{kind: User, name: sid}]
`;

const server = await FakeApiServer.start({ rbac: loadRbacYaml(RBAC) });
t.teardown(() => server.close());
server.addToken('alice', {
  username: 'alice',
  uid: 'alice-uid',
  groups: ['developers'],
  extra: { 'authentication.kubernetes.io/credential-id': ['JTI=1'] },
});
for (const name of ['carol', 'dave', 'erin', 'sam', 'sid']) {
  server.addToken(name, { username: name });
}
const kubeConfigOf = (token: string) => {
  const config = new KubeConfig();
  config.loadFromOptions(server.kubeConfig(token));
  return config;
};
const storeOf = (token: string) =>
  new KubernetesStore({ kubeConfig: kubeConfigOf(token), qps: 1000, burst: 1000 });
const alice = storeOf('alice');
const { csrPem } = await keyedCsr();
const chain = encodeBytes((await makeCA()).certificatePem);

async function created(name: string, signerName = SIGNER): Promise<CertificateSigningRequest> {
  const csr = csrObject(name, signerName, csrPem, { username: 'system:admin' });
  csr.spec.groups = ['system:masters'];
  csr.status = { conditions: [{ type: 'Approved', status: 'True' }] };
  return alice.create(CertificateSigningRequestKind, csr);
}

/** The HTTP status and message of a client-node call that failed. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err = await rejection(call);
  if (!isApiException(err)) throw err;
  const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
  return { code: err.code, message: String((body as { message?: string }).message) };
}

t.test('create records the authenticated requester and no status', async (t) => {
  const csr = await created('from-alice');
  t.same(
    {
      username: csr.spec.username,
      uid: csr.spec.uid,
      groups: csr.spec.groups,
      extra: csr.spec.extra,
    },
    {
      username: 'alice',
      uid: 'alice-uid',
      groups: ['developers', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': ['JTI=1'] },
    },
    'forged username and groups replaced',
  );
  t.equal(csr.status, undefined, 'a pre-approved request is not one');
  t.equal(csr.kind, 'CertificateSigningRequest');
  const err = await rejection(
    alice.create(CertificateSigningRequestKind, {
      ...csrObject('bad', SIGNER, csrPem, { expirationSeconds: 60 }),
      spec: { request: encodeBytes('nope'), signerName: SIGNER, usages: [] },
    }),
  );
  t.ok(isStoreError(err, 'Invalid'), 'Invalid (422)');
  t.match(
    String((err as Error).message),
    /spec\.request: .*PEM block type must be CERTIFICATE REQUEST/,
  );
  t.match(String((err as Error).message), /spec\.usages: Required value: usages must be provided/);
});

t.test('the store gets, lists by signer name and watches CSRs (cluster-scoped)', async (t) => {
  const events: Array<WatchEvent<CertificateSigningRequest>> = [];
  const listed = await alice.list<CertificateSigningRequest>(CertificateSigningRequestKind);
  const watch = alice.watch<CertificateSigningRequest>(
    CertificateSigningRequestKind,
    { resourceVersion: listed.resourceVersion, fieldSelector: `spec.signerName=${OTHER_SIGNER}` },
    { onEvent: (event) => events.push(event), onError: () => undefined },
  );
  t.teardown(() => watch.stop());
  await created('for-other', OTHER_SIGNER);
  await created('for-ca');
  const got = await alice.get<CertificateSigningRequest>(CertificateSigningRequestKind, 'for-ca');
  t.equal(got.spec.signerName, SIGNER);
  const selected = await alice.list<CertificateSigningRequest>(CertificateSigningRequestKind, {
    fieldSelector: `spec.signerName=${OTHER_SIGNER}`,
  });
  t.same(
    selected.items.map((c) => c.metadata.name),
    ['for-other'],
  );
  await until(() => events.length > 0, { what: 'the watch event' });
  t.same(
    events.map((e) => [e.type, e.object.metadata.name]),
    [['ADDED', 'for-other']],
    'the watch selects by signer name too',
  );
  const updated = await alice.update<CertificateSigningRequest>(CertificateSigningRequestKind, {
    ...got,
    metadata: { ...got.metadata, labels: { team: 'a' } },
    spec: { ...got.spec, signerName: OTHER_SIGNER, username: 'mallory' },
  });
  t.same(updated.metadata.labels, { team: 'a' });
  t.same(updated.spec, got.spec, 'an update cannot change the spec');
});

t.test('approval: only through the subresource, only with approve on the signer', async (t) => {
  await created('to-approve');
  const dave = await refusal(decideThroughApproval(kubeConfigOf('dave'), 'to-approve', 'Approved'));
  t.same(dave, {
    code: 403,
    message: `certificatesigningrequests.certificates.k8s.io "to-approve" is forbidden: user not permitted to approve requests with signerName "${SIGNER}"`,
  });
  const erinHere = await refusal(
    decideThroughApproval(kubeConfigOf('erin'), 'to-approve', 'Approved'),
  );
  t.equal(erinHere.code, 403, 'an exact grant for another signer is no grant');
  const approved = await decideThroughApproval(kubeConfigOf('carol'), 'to-approve', 'Approved');
  t.match(approved.status?.conditions?.[0], {
    type: 'Approved',
    status: 'True',
    reason: 'KubectlApprove',
  });
  t.ok(approved.status?.conditions?.[0]?.lastTransitionTime, 'times filled in');
  await created('for-erin', OTHER_SIGNER);
  await decideThroughApproval(kubeConfigOf('erin'), 'for-erin', 'Denied');
  t.pass('the exact signer name grants it');
  const both = await refusal(decideThroughApproval(kubeConfigOf('carol'), 'to-approve', 'Denied'));
  t.equal(both.code, 422);
  t.match(both.message, /Approved and Denied conditions are mutually exclusive/);
  const stored = await alice.get<CertificateSigningRequest>(
    CertificateSigningRequestKind,
    'to-approve',
  );
  const viaStatus = await rejection(
    storeOf('sid').updateStatus(CertificateSigningRequestKind, {
      ...stored,
      status: {
        conditions: [...(stored.status?.conditions ?? []), { type: 'Denied', status: 'True' }],
      },
    }),
  );
  t.match(String((viaStatus as Error).message), /updates may not add a condition of type "Denied"/);
  const rbacDenied = await refusal(
    decideThroughApproval(kubeConfigOf('sam'), 'to-approve', 'Approved'),
  );
  t.equal(rbacDenied.code, 403, 'without update on the approval subresource');
  t.match(rbacDenied.message, /cannot update resource "certificatesigningrequests\/approval"/);
  const elsewhere = await fetch(
    `${server.url}/apis/cert-manager.io/v1/namespaces/shop/certificaterequests/x/approval`,
    {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
      body: '{}',
    },
  );
  t.equal(elsewhere.status, 404, 'only CSRs have an approval subresource');
});

t.test('status: a certificate needs sign on the signer, and is set once', async (t) => {
  await created('to-sign');
  const csr = await decideThroughApproval(kubeConfigOf('carol'), 'to-sign', 'Approved');
  const current = await alice.get<CertificateSigningRequest>(
    CertificateSigningRequestKind,
    csr.metadata?.name ?? '',
  );
  const withCertificate = { ...current, status: { ...current.status, certificate: chain } };
  const sam = await rejection(
    storeOf('sam').updateStatus(CertificateSigningRequestKind, withCertificate),
  );
  t.ok(isStoreError(sam, 'Forbidden'));
  t.match(
    String((sam as Error).message),
    `certificatesigningrequests.certificates.k8s.io "to-sign" is forbidden: user not permitted to sign requests with signerName "${SIGNER}"`,
  );
  const failedBySam = await storeOf('sam').updateStatus<CertificateSigningRequest>(
    CertificateSigningRequestKind,
    {
      ...current,
      status: {
        ...current.status,
        conditions: [
          ...(current.status?.conditions ?? []),
          { type: 'Custom', status: 'False', reason: 'Why' },
        ],
      },
    },
  );
  t.equal(
    failedBySam.status?.certificate,
    undefined,
    'a status write without a certificate needs no sign',
  );
  const signed = await storeOf('sid').updateStatus<CertificateSigningRequest>(
    CertificateSigningRequestKind,
    { ...failedBySam, status: { ...failedBySam.status, certificate: chain } },
  );
  t.equal(signed.status?.certificate, chain);
  t.same(
    signed.status?.conditions?.map((c) => c.type),
    ['Approved', 'Custom'],
  );
  const again = await rejection(
    storeOf('sid').updateStatus(CertificateSigningRequestKind, {
      ...signed,
      status: { ...signed.status, certificate: encodeBytes((await makeCA()).certificatePem) },
    }),
  );
  t.ok(isStoreError(again, 'Invalid'));
  t.match(String((again as Error).message), /updates may not modify existing certificate content/);
});
