import t from 'tap';
import { findCondition } from '../../src/api/conditions.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { SecretKind } from '../../src/api/secret.js';
import { issuerReadiness } from '../../src/issuer/issuer-readiness.js';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { decodePrivateKey, encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import {
  clusterIssuer,
  issuer,
  tlsSecret,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { startHarness } from '../support/issuer-stack-harness.js';
import { waitForObject } from '../support/wait-for-object.js';

t.test('a CA issuer turns Ready when its secret appears', async (t) => {
  const h = await startHarness(t);
  await h.store.create(
    IssuerKind,
    issuer('ca', withNamespace('ns'), withSpec({ ca: { secretName: 'ca-pair' } })),
  );
  const missing = await h.issuerReason('ns', 'ca', 'ErrGetKeyPair');
  const condition = findCondition(missing.status?.conditions, 'Ready');
  t.equal(condition?.status, 'False');
  t.equal(condition?.message, 'Error getting keypair for CA issuer: secrets "ca-pair" not found');
  t.equal(condition?.observedGeneration, 1);
  const warning = await h.events.waitFor((e) => e.name === 'ca' && e.reason === 'ErrGetKeyPair');
  t.equal(warning.type, 'Warning');

  const ca = await makeCA();
  await h.store.create(
    SecretKind,
    tlsSecret('ns', 'ca-pair', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  const ready = await h.issuerReason('ns', 'ca', 'KeyPairVerified');
  t.equal(findCondition(ready.status?.conditions, 'Ready')?.status, 'True');
  await h.events.waitFor((e) => e.name === 'ca' && e.reason === 'KeyPairVerified');
  t.same(
    h.events.eventsFor('Issuer', 'ca', 'ns').map((e) => e.reason),
    ['ErrGetKeyPair', 'KeyPairVerified'],
  );
});

t.test('a leaf certificate in the CA secret is ErrInvalidKeyPair', async (t) => {
  const h = await startHarness(t);
  const root = await makeCA();
  const leafKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const leafPem = await signCertificate(
    await parseCsr(await createCsr({ key: leafKey, subject: { commonName: 'leaf' } })),
    { durationMs: 3600_000, isCA: false, usages: [] },
    { certificatePem: root.certificatePem, key: decodePrivateKey(root.keyPem) },
  );
  await h.store.create(
    SecretKind,
    tlsSecret('ns', 'leaf', { 'tls.crt': leafPem, 'tls.key': encodePrivateKey(leafKey, 'PKCS8') }),
  );
  await h.store.create(
    IssuerKind,
    issuer('leafy', withNamespace('ns'), withSpec({ ca: { secretName: 'leaf' } })),
  );
  const notCA = await h.issuerReason('ns', 'leafy', 'ErrInvalidKeyPair');
  t.equal(
    findCondition(notCA.status?.conditions, 'Ready')?.message,
    'Error getting keypair for CA issuer: certificate is not a CA',
  );
});

t.test('ClusterIssuer secrets come from the cluster resource namespace', async (t) => {
  const h = await startHarness(t, { clusterResourceNamespace: 'cert-csi' });
  const ca = await makeCA();
  const pair = { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem };
  // Same name in the default namespace must not count.
  await h.store.create(SecretKind, tlsSecret('kube-system', 'root', pair));
  await h.store.create(
    ClusterIssuerKind,
    clusterIssuer('root', withSpec({ ca: { secretName: 'root' } })),
  );
  await h.issuerReason(undefined, 'root', 'ErrGetKeyPair');
  await h.store.create(SecretKind, tlsSecret('cert-csi', 'root', pair));
  await h.issuerReason(undefined, 'root', 'KeyPairVerified');
});

t.test('SelfSigned issuers are always ready; a later generation is observed', async (t) => {
  const h = await startHarness(t);
  await h.store.create(
    IssuerKind,
    issuer('self', withNamespace('ns'), withSpec({ selfSigned: {} })),
  );
  const ready = await h.issuerReason('ns', 'self', 'IsReady');
  const condition = findCondition(ready.status?.conditions, 'Ready');
  t.equal(condition?.status, 'True');
  t.equal(condition?.message, '');
  const firstTransition = condition?.lastTransitionTime;

  await h.store.update(IssuerKind, {
    ...ready,
    spec: { selfSigned: { crlDistributionPoints: ['http://crl.example.com/ca.crl'] } },
  });
  const observed = await waitForObject<Issuer>(
    h.store,
    IssuerKind,
    'self',
    'ns',
    (i) => findCondition(i.status?.conditions, 'Ready')?.observedGeneration === 2,
  );
  t.equal(
    findCondition(observed.status?.conditions, 'Ready')?.lastTransitionTime,
    firstTransition,
    'same status keeps its transition time',
  );
  // The first sync has ended by now (one key is synced at a time): any event it made is there.
  t.same(
    h.events.eventsFor('Issuer', 'self', 'ns'),
    [],
    "no event, as cert-manager's SelfSigned setup records none (it logged an empty message)",
  );
});

t.test('issuer types this stack does not run are left alone', async (t) => {
  t.equal(
    issuerReadiness(issuer('acme', withNamespace('ns'), withSpec({ acme: {} })), () => undefined),
    undefined,
  );
  const key = await generatePrivateKey({ algorithm: 'Ed25519' });
  const certificatePem = await createSelfSignedCa({ key, commonName: 'ed', durationMs: 3600_000 });
  const readiness = issuerReadiness(
    issuer('ed', withNamespace('ns'), withSpec({ ca: { secretName: 's' } })),
    () =>
      tlsSecret('ns', 's', {
        'tls.crt': certificatePem,
        'tls.key': encodePrivateKey(key, 'PKCS8'),
      }),
  );
  t.equal(readiness?.condition.reason, 'KeyPairVerified', 'an Ed25519 CA is accepted');
});
