import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { CERTIFICATE_NAME_ANNOTATION } from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
  isApproved,
  isDenied,
} from '../../src/api/certificate-request.js';
import { findCondition } from '../../src/api/conditions.js';
import { ClusterIssuerKind, type Issuer } from '../../src/api/issuer.js';
import {
  ALLOW_IS_CA_ANNOTATION,
  hashIdentifier,
  NODE_ID_HASH_LABEL,
  VOLUME_ID_HASH_LABEL,
} from '../../src/api/labels.js';
import { SecretKind } from '../../src/api/secret.js';
import { approvalSettled } from '../../src/issuer/certificaterequests/approval-policy.js';
import {
  certificateRequest,
  clusterIssuer,
  tlsSecret,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { until } from '../support/eventually.js';
import { keyAndCsr, makeCA } from '../support/issuer-fixtures.js';
import { issuedPem, startHarness } from '../support/issuer-stack-harness.js';

t.test('the approver approves with reason cert-manager.io', async (t) => {
  const h = await startHarness(t);
  const { csrPem } = await keyAndCsr({ algorithm: 'Ed25519' });
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'r',
      withNamespace('ns'),
      withIssuerRef({ name: 'x', group: 'example.com' }),
      withCsr(csrPem),
    ),
  );
  const cr = await h.request(
    'ns',
    'r',
    (c) => findCondition(c.status?.conditions, 'Approved') !== undefined,
  );
  const approvedCondition = findCondition(cr.status?.conditions, 'Approved');
  t.equal(approvedCondition?.status, 'True');
  t.equal(approvedCondition?.reason, 'cert-manager.io');
  t.equal(approvedCondition?.message, 'Certificate request has been approved by cert-manager.io');
  await h.events.waitFor((e) => e.name === 'r');
  t.same(
    h.events.eventsFor('CertificateRequest', 'r', 'ns').map((e) => [e.type, e.reason]),
    [['Normal', 'cert-manager.io']],
  );
});

t.test('a policy that abstains leaves the request for another approver', async (t) => {
  const seen: string[] = [];
  const h = await startHarness(t, {
    approval: (request) => {
      seen.push(request.metadata.name);
      return request.metadata.name === 'allowed'
        ? { decision: 'approve', reason: 'policy', message: 'allowed by test policy' }
        : { decision: 'abstain' };
    },
  });
  const { csrPem } = await keyAndCsr({ algorithm: 'Ed25519' });
  const ref = { issuerRef: { name: 'x', group: 'example.com' } };
  await h.store.create(
    CertificateRequestKind,
    certificateRequest('other', withNamespace('ns'), withSpec(ref), withCsr(csrPem)),
  );
  await h.store.create(
    CertificateRequestKind,
    certificateRequest('allowed', withNamespace('ns'), withSpec(ref), withCsr(csrPem)),
  );
  await h.request(
    'ns',
    'allowed',
    (c) => findCondition(c.status?.conditions, 'Approved')?.reason === 'policy',
  );
  const other = await h.store.get(CertificateRequestKind, 'other', 'ns');
  t.same((other as { status?: unknown }).status, undefined, 'abstained request is untouched');
  t.ok(seen.includes('other'), 'the policy was asked');
});

t.test('settled requests are not re-decided', async (t) => {
  const base = certificateRequest(
    'r',
    withNamespace('ns'),
    withIssuerRef({ name: 'x' }),
    withCsr(''),
  );
  const withConditions = (
    conditions: Array<{ type: string; status: 'True' | 'False'; reason?: string }>,
  ) => ({
    ...base,
    status: { conditions },
  });
  t.ok(approvalSettled(withConditions([{ type: 'Approved', status: 'True' }])));
  t.ok(approvalSettled(withConditions([{ type: 'Denied', status: 'True' }])));
  t.ok(approvalSettled(withConditions([{ type: 'Ready', status: 'False', reason: 'Failed' }])));
  t.ok(approvalSettled(withConditions([{ type: 'Ready', status: 'True', reason: 'Issued' }])));
  t.notOk(approvalSettled(withConditions([{ type: 'Ready', status: 'False', reason: 'Pending' }])));
  t.notOk(approvalSettled(base));
});

// cert-csi's own rule (README "CA certificates for volumes"): a request the node plugin made
// for a volume with is-ca is denied unless its issuer opts in; the bootstrap CA Certificate's
// request and users' own requests are approved as before.
t.test('CA certificates for CSI volumes need the issuer’s annotation', async (t) => {
  const h = await startHarness(t);
  const ca = await makeCA();
  await h.store.create(
    SecretKind,
    tlsSecret('kube-system', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  await h.store.create(
    ClusterIssuerKind,
    clusterIssuer('ca', withSpec({ ca: { secretName: 'ca' } })),
  );
  await h.issuerReason(undefined, 'ca', 'KeyPairVerified');
  const { csrPem } = await keyAndCsr({ algorithm: 'Ed25519' }, { subject: { commonName: 'x' } });
  const issuerRef = { name: 'ca', kind: 'ClusterIssuer' };
  const labels = {
    [NODE_ID_HASH_LABEL]: hashIdentifier('node-1'),
    [VOLUME_ID_HASH_LABEL]: hashIdentifier('csi-1'),
  };
  const create = (name: string, isCA: boolean, extra: Partial<CertificateRequest['metadata']>) => {
    const cr = certificateRequest(
      name,
      withNamespace('sandbox'),
      withSpec({ issuerRef, isCA }),
      withCsr(csrPem),
    );
    return h.store.create(CertificateRequestKind, {
      ...cr,
      metadata: { ...cr.metadata, ...extra },
    });
  };
  await create('volume-ca', true, { labels });
  await create('volume-leaf', false, { labels });
  await create('certificate-ca', true, {
    annotations: { [CERTIFICATE_NAME_ANNOTATION]: 'bootstrap-ca' },
  });
  await create('users-own-ca', true, {});

  const denied = await h.request('sandbox', 'volume-ca', (c) => isDenied(c));
  const condition = findCondition(denied.status?.conditions, 'Denied');
  t.equal(condition?.reason, 'IsCANotAllowed');
  t.equal(
    condition?.message,
    'a CSI volume asked for a CA certificate (is-ca: "true", spec.isCA): ClusterIssuer "ca" does not allow CA certificates for CSI volumes: set the annotation cert-csi.io/allow-is-ca: "true" on it to allow them',
  );
  t.equal(denied.status?.certificate, undefined, 'not signed');
  const warning = await h.events.waitFor((e) => e.name === 'volume-ca' && e.type === 'Warning');
  t.equal(warning.reason, 'IsCANotAllowed');
  for (const name of ['volume-leaf', 'certificate-ca', 'users-own-ca']) {
    const issued = await h.readyReason('sandbox', name, 'Issued');
    t.ok(isApproved(issued), `${name}: approved and issued`);
  }
  const bootstrap = new X509Certificate(
    issuedPem(await h.readyReason('sandbox', 'certificate-ca', 'Issued')).certificate,
  );
  t.ok(bootstrap.ca, "the Certificate's CA is a CA");

  // The issuer opts in: the next volume request is approved and signed CA:TRUE.
  const current = await h.store.get<Issuer>(ClusterIssuerKind, 'ca');
  await h.store.update(ClusterIssuerKind, {
    ...current,
    metadata: { ...current.metadata, annotations: { [ALLOW_IS_CA_ANNOTATION]: 'true' } },
  });
  await until(
    () =>
      h.controllers.informers.informer<Issuer>(ClusterIssuerKind).get('ca')?.metadata.annotations?.[
        ALLOW_IS_CA_ANNOTATION
      ],
    { what: "the approver's cache to see the annotation" },
  );
  await create('volume-ca-allowed', true, { labels });
  const signed = await h.readyReason('sandbox', 'volume-ca-allowed', 'Issued');
  t.ok(isApproved(signed), 'approved');
  t.ok(new X509Certificate(issuedPem(signed).certificate).ca, 'signed CA:TRUE');
});
