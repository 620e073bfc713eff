import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { findCondition } from '../../src/api/conditions.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import { SecretKind } from '../../src/api/secret.js';
import type { KeySpec } from '../../src/pki/keys.js';
import {
  certificateRequest,
  clusterIssuer,
  issuer,
  tlsSecret,
  withCsr,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { keyAndCsr, makeCA, opensslText, opensslVerify } from '../support/issuer-fixtures.js';
import { issuedPem, startHarness } from '../support/issuer-stack-harness.js';

const keyTypes: Array<[string, KeySpec]> = [
  ['RSA-2048', { algorithm: 'RSA', size: 2048 }],
  ['ECDSA P-256', { algorithm: 'ECDSA', size: 256 }],
  ['ECDSA P-384', { algorithm: 'ECDSA', size: 384 }],
  ['Ed25519', { algorithm: 'Ed25519' }],
];

t.test('a CA issuer signs a request for each key type', async (t) => {
  const h = await startHarness(t);
  const ca = await makeCA();
  await h.store.create(
    SecretKind,
    tlsSecret('team-a', 'ca-key-pair', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  await h.store.create(
    IssuerKind,
    issuer('ca', withNamespace('team-a'), withSpec({ ca: { secretName: 'ca-key-pair' } })),
  );
  const ready = await h.issuerReason('team-a', 'ca', 'KeyPairVerified');
  t.equal(findCondition(ready.status?.conditions, 'Ready')?.message, 'Signing CA verified');

  for (const [label, spec] of keyTypes) {
    const name = `req-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
    const { csrPem } = await keyAndCsr(spec, {
      subject: { commonName: 'app.team-a.svc', organizations: ['cert-csi'] },
      dnsNames: ['app.team-a.svc', 'app.example.com'],
      ipAddresses: ['10.0.0.7', 'fd00::7'],
      uris: ['spiffe://cluster.local/ns/team-a/sa/app'],
      emailAddresses: ['app@example.com'],
    });
    await h.store.create(
      CertificateRequestKind,
      certificateRequest(
        name,
        withNamespace('team-a'),
        withSpec({
          issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
          duration: '48h',
          usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'],
        }),
        withCsr(csrPem),
      ),
    );
    const issued = await h.readyReason('team-a', name, 'Issued');
    const ready = findCondition(issued.status?.conditions, 'Ready');
    t.equal(ready?.status, 'True', `${label}: Ready=True`);
    t.equal(ready?.message, 'Certificate fetched from issuer successfully');
    t.equal(findCondition(issued.status?.conditions, 'Approved')?.reason, 'cert-manager.io');
    const pem = issuedPem(issued);
    t.equal(pem.ca.trim(), ca.certificatePem.trim(), `${label}: ca.crt is the root`);
    t.match(await opensslVerify(pem.ca, pem.certificate), /: OK/, `${label}: openssl verify`);

    const leaf = new X509Certificate(pem.certificate);
    t.equal(leaf.ca, false, `${label}: not a CA`);
    const lifetime = new Date(leaf.validTo).getTime() - new Date(leaf.validFrom).getTime();
    t.equal(lifetime, 48 * 3600 * 1000, `${label}: lifetime is the requested duration`);
    t.match(leaf.subjectAltName, /DNS:app\.team-a\.svc/);
    t.match(leaf.subjectAltName, /DNS:app\.example\.com/);
    t.match(leaf.subjectAltName, /IP Address:10\.0\.0\.7/);
    t.match(leaf.subjectAltName, /IP Address:FD00:0:0:0:0:0:0:7/);
    t.match(leaf.subjectAltName, /URI:spiffe:\/\/cluster\.local\/ns\/team-a\/sa\/app/);
    t.match(leaf.subjectAltName, /email:app@example\.com/);
    const text = await opensslText(pem.certificate);
    t.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    t.match(
      text,
      /X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/,
    );
    t.match(text, /X509v3 Basic Constraints: critical\s+CA:FALSE/);
    t.match(text, /Subject: O ?= ?cert-csi, CN ?= ?app\.team-a\.svc/);
    t.match(text, /X509v3 Authority Key Identifier/);
  }
});

t.test('isCA and default usages reach the certificate; default duration is 90 days', async (t) => {
  const h = await startHarness(t);
  const ca = await makeCA({ algorithm: 'RSA', size: 2048 });
  await h.store.create(
    SecretKind,
    tlsSecret('kube-system', 'root', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  await h.store.create(
    ClusterIssuerKind,
    clusterIssuer('root', withSpec({ ca: { secretName: 'root' } })),
  );
  await h.issuerReason(undefined, 'root', 'KeyPairVerified');

  const { csrPem } = await keyAndCsr(
    { algorithm: 'ECDSA', size: 256 },
    { subject: { commonName: 'sub-ca' } },
  );
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'sub-ca',
      withNamespace('anywhere'),
      withSpec({
        issuerRef: { name: 'root', kind: 'ClusterIssuer' },
        isCA: true,
      }),
      withCsr(csrPem),
    ),
  );
  const issued = await h.readyReason('anywhere', 'sub-ca', 'Issued');
  const pem = issuedPem(issued);
  const leaf = new X509Certificate(pem.certificate);
  t.equal(leaf.ca, true);
  const lifetime = new Date(leaf.validTo).getTime() - new Date(leaf.validFrom).getTime();
  t.equal(lifetime, 2160 * 3600 * 1000);
  const text = await opensslText(pem.certificate);
  t.match(text, /Key Usage: critical\s+Digital Signature, Key Encipherment, Certificate Sign/);
  t.match(text, /Basic Constraints: critical\s+CA:TRUE\s/);
  t.notMatch(text, /pathlen/);
  t.match(
    text,
    /Signature Algorithm: sha256WithRSAEncryption/,
    'signature algorithm follows the CA key',
  );
});
