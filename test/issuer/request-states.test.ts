import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { findCondition } from '../../src/api/conditions.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../../src/api/labels.js';
import { SecretKind } from '../../src/api/secret.js';
import {
  certificateRequest,
  clusterIssuer,
  issuer,
  tlsSecret,
  withAnnotations,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { keyAndCsr, makeCA } from '../support/issuer-fixtures.js';
import { allControllersExcept, issuedPem, startHarness } from '../support/issuer-stack-harness.js';
import { csrWithSubject, oneAttributeName } from '../support/raw-name-fixtures.js';

const ecdsa = { algorithm: 'ECDSA', size: 256 } as const;

t.test('a denied request ends Ready=False/Denied with failureTime', async (t) => {
  const h = await startHarness(t, {
    approval: () => ({ decision: 'deny', reason: 'policy.example.com', message: 'not allowed' }),
  });
  await h.store.create(ClusterIssuerKind, clusterIssuer('self', withSpec({ selfSigned: {} })));
  const { csrPem } = await keyAndCsr(ecdsa);
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'denied',
      withNamespace('ns'),
      withIssuerRef({ name: 'self', kind: 'ClusterIssuer' }),
      withCsr(csrPem),
    ),
  );
  const cr = await h.readyReason('ns', 'denied', 'Denied');
  const ready = findCondition(cr.status?.conditions, 'Ready');
  t.equal(ready?.status, 'False');
  t.equal(ready?.message, 'The CertificateRequest was denied by an approval controller');
  const denied = findCondition(cr.status?.conditions, 'Denied');
  t.equal(denied?.status, 'True');
  t.equal(denied?.reason, 'policy.example.com');
  t.equal(denied?.message, 'not allowed');
  t.ok(cr.status?.failureTime, 'failureTime is set');
  t.equal(findCondition(cr.status?.conditions, 'Approved'), undefined);
  t.equal(cr.status?.certificate, undefined);
});

t.test('a request that is never approved gets no Ready condition', async (t) => {
  const h = await startHarness(t, {
    enabled: allControllersExcept('certificaterequests-approver'),
  });
  await h.store.create(ClusterIssuerKind, clusterIssuer('self', withSpec({ selfSigned: {} })));
  await h.issuerReason(undefined, 'self', 'IsReady');
  const { csrPem } = await keyAndCsr(ecdsa);
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'waiting',
      withNamespace('ns'),
      withIssuerRef({ name: 'self', kind: 'ClusterIssuer' }),
      withCsr(csrPem),
    ),
  );
  // The controller reports the wait as an event, not as a condition.
  const event = await h.events.waitFor((e) => e.name === 'waiting');
  t.equal(event.reason, 'WaitingForApproval');
  t.equal(event.message, 'Not signing CertificateRequest until it is Approved');
  const cr = await h.store.get(CertificateRequestKind, 'waiting', 'ns');
  t.same((cr as { status?: unknown }).status, undefined);
});

t.test(
  'a missing issuer leaves the request Pending with IssuerNotFound until it appears',
  async (t) => {
    const h = await startHarness(t);
    const ca = await makeCA();
    const { csrPem } = await keyAndCsr(ecdsa, { dnsNames: ['a.example.com'] });
    await h.store.create(
      CertificateRequestKind,
      certificateRequest(
        'early',
        withNamespace('ns'),
        withIssuerRef({ name: 'late-ca' }),
        withCsr(csrPem),
      ),
    );
    const pending = await h.readyReason('ns', 'early', 'Pending');
    t.equal(
      findCondition(pending.status?.conditions, 'Ready')?.message,
      'Referenced "Issuer" not found: issuer.cert-manager.io "late-ca" not found',
    );
    const notFound = await h.events.waitFor(
      (e) => e.name === 'early' && e.reason === 'IssuerNotFound',
    );
    t.equal(notFound.type, 'Normal');
    t.equal(
      notFound.message,
      'Referenced "Issuer" not found: issuer.cert-manager.io "late-ca" not found',
    );
    t.equal(pending.status?.failureTime, undefined, 'Pending is not a failure');

    await h.store.create(
      SecretKind,
      tlsSecret('ns', 'late-ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
    );
    await h.store.create(
      IssuerKind,
      issuer('late-ca', withNamespace('ns'), withSpec({ ca: { secretName: 'late-ca' } })),
    );
    const issued = await h.readyReason('ns', 'early', 'Issued');
    t.ok(issued.status?.certificate, 'issued once the issuer exists');
  },
);

t.test('a not-ready issuer leaves the request Pending with IssuerNotReady', async (t) => {
  const h = await startHarness(t);
  await h.store.create(
    IssuerKind,
    issuer('broken', withNamespace('ns'), withSpec({ ca: { secretName: 'absent' } })),
  );
  await h.issuerReason('ns', 'broken', 'ErrGetKeyPair');
  const { csrPem } = await keyAndCsr(ecdsa);
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'blocked',
      withNamespace('ns'),
      withIssuerRef({ name: 'broken' }),
      withCsr(csrPem),
    ),
  );
  const cr = await h.readyReason('ns', 'blocked', 'Pending');
  t.equal(
    findCondition(cr.status?.conditions, 'Ready')?.message,
    'Referenced issuer does not have a Ready status condition',
  );
  const event = await h.events.waitFor(
    (e) => e.name === 'blocked' && e.reason === 'IssuerNotReady',
  );
  t.equal(event.message, 'Referenced issuer does not have a Ready status condition');
});

t.test('an unparsable CSR is a final failure', async (t) => {
  const h = await startHarness(t);
  const ca = await makeCA();
  await h.store.create(
    SecretKind,
    tlsSecret('ns', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  await h.store.create(
    IssuerKind,
    issuer('ca', withNamespace('ns'), withSpec({ ca: { secretName: 'ca' } })),
  );
  await h.issuerReason('ns', 'ca', 'KeyPairVerified');
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'garbage',
      withNamespace('ns'),
      withIssuerRef({ name: 'ca' }),
      withCsr('this is not a CSR'),
    ),
  );
  const cr = await h.readyReason('ns', 'garbage', 'Failed');
  const ready = findCondition(cr.status?.conditions, 'Ready');
  t.equal(ready?.status, 'False');
  t.match(ready?.message, /^Error generating certificate template: /);
  t.ok(cr.status?.failureTime);
  const warning = await h.events.waitFor((e) => e.name === 'garbage' && e.type === 'Warning');
  t.equal(warning.reason, 'SigningError');
  t.match(warning.message, /^Error generating certificate template: /);
});

t.test(
  'a CSR whose subject no certificate reader can read fails instead of being signed',
  async (t) => {
    const h = await startHarness(t);
    const ca = await makeCA();
    await h.store.create(
      SecretKind,
      tlsSecret('ns', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
    );
    await h.store.create(
      IssuerKind,
      issuer('ca', withNamespace('ns'), withSpec({ ca: { secretName: 'ca' } })),
    );
    await h.issuerReason('ns', 'ca', 'KeyPairVerified');
    // A user's CSR with CN BOOLEAN TRUE: signed, it would be a certificate nobody can parse.
    const csrPem = await csrWithSubject(oneAttributeName('0101ff'));
    await h.store.create(
      CertificateRequestKind,
      certificateRequest(
        'boolean-cn',
        withNamespace('ns'),
        withIssuerRef({ name: 'ca' }),
        withCsr(csrPem),
      ),
    );
    const cr = await h.readyReason('ns', 'boolean-cn', 'Failed');
    t.equal(cr.status?.certificate, undefined, 'nothing signed');
    t.match(
      findCondition(cr.status?.conditions, 'Ready')?.message,
      /^Error signing certificate: the subject cannot be put in a certificate: the value of CN is a BOOLEAN, not a string type/,
    );
  },
);

t.test('requests for other issuer groups are left alone', async (t) => {
  const h = await startHarness(t);
  const { csrPem } = await keyAndCsr(ecdsa);
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'external',
      withNamespace('ns'),
      withIssuerRef({ name: 'pca', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' }),
      withCsr(csrPem),
    ),
  );
  const cr = await h.request(
    'ns',
    'external',
    (c) => findCondition(c.status?.conditions, 'Approved')?.status === 'True',
  );
  t.equal(findCondition(cr.status?.conditions, 'Ready'), undefined, 'no Ready condition');
});

t.test('an issuer without a type leaves the request Pending with IssuerTypeMissing', async (t) => {
  const h = await startHarness(t);
  await h.store.create(IssuerKind, issuer('empty', withNamespace('ns'), withSpec({})));
  const { csrPem } = await keyAndCsr(ecdsa);
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'typeless',
      withNamespace('ns'),
      withIssuerRef({ name: 'empty' }),
      withCsr(csrPem),
    ),
  );
  const cr = await h.readyReason('ns', 'typeless', 'Pending');
  t.equal(findCondition(cr.status?.conditions, 'Ready')?.message, 'Missing issuer type');
});

t.test('SelfSigned: ca.crt is the certificate itself', async (t) => {
  const h = await startHarness(t);
  await h.store.create(
    IssuerKind,
    issuer('self', withNamespace('ns'), withSpec({ selfSigned: {} })),
  );
  const { keyPem, csrPem } = await keyAndCsr(ecdsa, {
    subject: { commonName: 'self.example.com' },
    dnsNames: ['self.example.com'],
  });
  await h.store.create(SecretKind, tlsSecret('ns', 'self-key', { 'tls.key': keyPem }));
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'self',
      withNamespace('ns'),
      withSpec({ issuerRef: { name: 'self' }, duration: '1h' }),
      withCsr(csrPem),
      withAnnotations({ [PRIVATE_KEY_SECRET_NAME_ANNOTATION]: 'self-key' }),
    ),
  );
  const cr = await h.readyReason('ns', 'self', 'Issued');
  const pem = issuedPem(cr);
  t.equal(pem.ca, pem.certificate);
  const cert = new X509Certificate(pem.certificate);
  t.equal(cert.subject, cert.issuer);
  t.ok(cert.verify(cert.publicKey), 'signed by its own key');
});

t.test('SelfSigned: missing annotation, missing secret and a foreign key', async (t) => {
  const h = await startHarness(t);
  await h.store.create(
    IssuerKind,
    issuer('self', withNamespace('ns'), withSpec({ selfSigned: {} })),
  );
  const { csrPem } = await keyAndCsr(ecdsa, { subject: { commonName: 'x' } });

  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'no-annotation',
      withNamespace('ns'),
      withIssuerRef({ name: 'self' }),
      withCsr(csrPem),
    ),
  );
  const noAnnotation = await h.readyReason('ns', 'no-annotation', 'Failed');
  t.equal(
    findCondition(noAnnotation.status?.conditions, 'Ready')?.message,
    'Annotation "cert-manager.io/private-key-secret-name" missing or reference empty: secret name missing',
  );

  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'no-secret',
      withNamespace('ns'),
      withIssuerRef({ name: 'self' }),
      withCsr(csrPem),
      withAnnotations({
        [PRIVATE_KEY_SECRET_NAME_ANNOTATION]: 'nope',
      }),
    ),
  );
  const noSecret = await h.readyReason('ns', 'no-secret', 'Pending');
  t.equal(
    findCondition(noSecret.status?.conditions, 'Ready')?.message,
    'Referenced secret ns/nope not found: secrets "nope" not found',
  );

  const other = await keyAndCsr(ecdsa);
  await h.store.create(SecretKind, tlsSecret('ns', 'other-key', { 'tls.key': other.keyPem }));
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'wrong-key',
      withNamespace('ns'),
      withIssuerRef({ name: 'self' }),
      withCsr(csrPem),
      withAnnotations({
        [PRIVATE_KEY_SECRET_NAME_ANNOTATION]: 'other-key',
      }),
    ),
  );
  const wrongKey = await h.readyReason('ns', 'wrong-key', 'Failed');
  t.equal(
    findCondition(wrongKey.status?.conditions, 'Ready')?.message,
    'Error generating certificate template: CSR not signed by referenced private key',
  );
  const warning = await h.events.waitFor((e) => e.name === 'wrong-key' && e.type === 'Warning');
  t.equal(warning.reason, 'ErrorKeyMatch');
});
