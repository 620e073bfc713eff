import { createHash, X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  type CertificateTemplate,
  createSelfSignedCa,
  randomSerialNumber,
  signCertificate,
  subjectKeyIdOf,
} from '../../src/pki/certificate.js';
import { readCertificateFields } from '../../src/pki/certificate-fields.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { encodePrivateKey, generatePrivateKey, type KeySpec, spkiOf } from '../../src/pki/keys.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { x509 } from '../support/x509-provider.js';
import { openssl } from './fixtures/openssl.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

const leafTemplate: CertificateTemplate = {
  durationMs: 90 * DAY,
  isCA: false,
  usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'],
};

function der(pem: string): Uint8Array {
  return decodePemBlocks(pem)[0]?.der ?? new Uint8Array();
}

function ext<T extends x509.Extension>(pem: string, oid: string): T | null {
  return new x509.X509Certificate(pem).getExtension<T>(oid);
}

const hex = (b: Uint8Array | ArrayBuffer): string => Buffer.from(new Uint8Array(b)).toString('hex');

t.test('a CA of each key type signs a leaf that openssl verifies', async (t) => {
  const cases: Array<[KeySpec, string]> = [
    [{ algorithm: 'RSA' }, 'sha256WithRSAEncryption'],
    [{ algorithm: 'ECDSA' }, 'ecdsa-with-SHA256'],
    [{ algorithm: 'ECDSA', size: 384 }, 'ecdsa-with-SHA384'],
    [{ algorithm: 'Ed25519' }, 'ED25519'],
  ];
  for (const [spec, sigAlg] of cases) {
    const name = `${spec.algorithm}${spec.size ?? ''}`;
    const caKey = await generatePrivateKey(spec);
    const caPem = await createSelfSignedCa({
      key: caKey,
      commonName: `${name} CA`,
      durationMs: 365 * DAY,
    });
    const leafKey = await generatePrivateKey(spec);
    const csr = await parseCsr(
      await createCsr({
        key: leafKey,
        subject: { commonName: 'leaf', organizations: ['Example'] },
        dnsNames: ['leaf.example', 'alt.example'],
        ipAddresses: ['10.0.0.7', 'fd00::7'],
        uris: ['spiffe://cluster.local/ns/default/sa/app'],
        emailAddresses: ['leaf@example.com'],
      }),
    );
    const now = new Date();
    const leafPem = await signCertificate(
      csr,
      leafTemplate,
      { certificatePem: caPem, key: caKey },
      now,
    );

    t.match(leafPem, /^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
    t.match(
      await openssl(['verify', '-CAfile', '{ca}', '{leaf}'], { ca: caPem, leaf: leafPem }),
      /leaf: OK/,
      `${name}: openssl verify`,
    );
    const text = await openssl(['x509', '-in', '{leaf}', '-noout', '-text'], { leaf: leafPem });
    t.match(text, `Signature Algorithm: ${sigAlg}`, `${name}: signature algorithm from the CA key`);
    t.match(text, /X509v3 Key Usage: critical\s*\n\s*Digital Signature, Key Encipherment\n/);
    t.match(
      text,
      /X509v3 Extended Key Usage: \s*\n\s*TLS Web Server Authentication, TLS Web Client Authentication\n/,
    );
    t.match(text, /X509v3 Basic Constraints: critical\s*\n\s*CA:FALSE\n/);
    t.match(text, /X509v3 Subject Alternative Name: \s*\n/, 'SAN not critical: the subject is set');

    const cert = new X509Certificate(leafPem);
    const ca = new X509Certificate(caPem);
    t.ok(cert.verify(ca.publicKey));
    t.ok(cert.checkIssued(ca));
    t.notOk(cert.ca);
    t.equal(
      cert.subjectAltName,
      'DNS:leaf.example, DNS:alt.example, email:leaf@example.com, IP Address:10.0.0.7, IP Address:FD00:0:0:0:0:0:0:7, URI:spiffe://cluster.local/ns/default/sa/app',
    );
    t.equal(cert.subject, 'O=Example\nCN=leaf');
    t.equal(cert.issuer, `CN=${name} CA`);

    const fields = readCertificateFields(der(leafPem));
    t.equal(hex(fields.subjectDer), hex(csr.subjectDer), 'subject copied verbatim from the CSR');
    t.equal(
      hex(fields.issuerDer),
      hex(readCertificateFields(der(caPem)).subjectDer),
      'issuer = CA subject DER',
    );
    t.equal(
      fields.notBefore.getTime(),
      Math.floor(now.getTime() / 1000) * 1000,
      'NotBefore = now, no backdating',
    );
    t.equal(fields.notAfter.getTime() - fields.notBefore.getTime(), leafTemplate.durationMs);
    t.equal(
      new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime(),
      leafTemplate.durationMs,
    );

    const ski = ext<x509.SubjectKeyIdentifierExtension>(leafPem, '2.5.29.14');
    const aki = ext<x509.AuthorityKeyIdentifierExtension>(leafPem, '2.5.29.35');
    const caSki = ext<x509.SubjectKeyIdentifierExtension>(caPem, '2.5.29.14');
    t.equal(ski?.keyId, hex(subjectKeyIdOf(new Uint8Array(spkiOf(leafKey)))));
    t.equal(aki?.keyId, caSki?.keyId, 'AKI = CA SKI');
    t.equal(ski?.keyId.length, 40, 'SHA-1 sized key id');

    // Node prints the serial's value without DER's 0x00 sign pad: a value below 2^159 is one
    // whose encoding, pad included, fits in 20 bytes (RFC 5280 4.1.2.2).
    const serial = BigInt(`0x${cert.serialNumber}`);
    t.ok(serial > 0n && serial < 2n ** 159n, 'positive serial of at most 20 bytes');
  }
});

t.test('SKI is the SHA-1 of the subjectPublicKey bits, like openssl computes it', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await createSelfSignedCa({ key, commonName: 'ski', durationMs: HOUR });
  const pubDer = Buffer.from(spkiOf(key));
  // The uncompressed P-256 point is the last 65 bytes of the SPKI.
  const expected = createHash('sha1')
    .update(pubDer.subarray(pubDer.length - 65))
    .digest('hex');
  t.equal(ext<x509.SubjectKeyIdentifierExtension>(caPem, '2.5.29.14')?.keyId, expected);
  t.throws(() => subjectKeyIdOf(Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x00)), {
    name: 'PkiError',
    message: 'malformed DER: bad public key',
  });
});

t.test('createSelfSignedCa makes a CA for its key', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 384 });
  const now = new Date('2030-01-01T00:00:00.750Z');
  const pem = await createSelfSignedCa({
    key,
    commonName: 'Embedded CA',
    durationMs: 10 * DAY,
    now,
  });
  const cert = new X509Certificate(pem);
  t.ok(cert.ca);
  t.equal(cert.subject, 'CN=Embedded CA');
  t.equal(cert.issuer, 'CN=Embedded CA');
  t.ok(cert.verify(cert.publicKey));
  const text = await openssl(['x509', '-in', '{c}', '-noout', '-text'], { c: pem });
  t.match(text, /Key Usage: critical\s*\n\s*Digital Signature, Certificate Sign, CRL Sign\n/);
  t.match(text, /Basic Constraints: critical\s*\n\s*CA:TRUE\n/, 'CA:TRUE without pathlen');
  t.notMatch(text, /Extended Key Usage/);
  const ski = ext<x509.SubjectKeyIdentifierExtension>(pem, '2.5.29.14');
  t.equal(
    ext<x509.AuthorityKeyIdentifierExtension>(pem, '2.5.29.35')?.keyId,
    ski?.keyId,
    'AKI = own SKI',
  );
  t.same(readCertificateFields(der(pem)).notBefore, new Date('2030-01-01T00:00:00Z'));
  const at = String(Math.floor(now.getTime() / 1000) + 60);
  t.match(await openssl(['verify', '-attime', at, '-CAfile', '{c}', '{c}'], { c: pem }), /OK/);
  // Default now is the current time.
  const current = new X509Certificate(
    await createSelfSignedCa({ key, commonName: 'x', durationMs: HOUR }),
  );
  t.ok(Math.abs(new Date(current.validFrom).getTime() - Date.now()) < 5000);
});

t.test('isCA, usages, CRL, OCSP and issuing URLs from the template', async (t) => {
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await createSelfSignedCa({ key: caKey, commonName: 'CA', durationMs: DAY });
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csr = await parseCsr(await createCsr({ key, subject: { commonName: 'sub-ca' } }));
  const pem = await signCertificate(
    csr,
    {
      durationMs: HOUR,
      isCA: true,
      usages: [],
      crlDistributionPoints: ['http://crl.example/ca.crl', 'http://crl2.example/ca.crl'],
      ocspServers: ['http://ocsp.example'],
      issuingCertificateURLs: ['http://ca.example/ca.crt'],
    },
    { certificatePem: caPem, key: caKey },
  );
  const cert = new X509Certificate(pem);
  t.ok(cert.ca);
  const text = await openssl(['x509', '-in', '{c}', '-noout', '-text'], { c: pem });
  t.match(
    text,
    /Key Usage: critical\s*\n\s*Digital Signature, Key Encipherment, Certificate Sign\n/,
  );
  t.match(text, /Basic Constraints: critical\s*\n\s*CA:TRUE\n/);
  t.match(
    text,
    /OCSP - URI:http:\/\/ocsp.example\n\s*CA Issuers - URI:http:\/\/ca.example\/ca.crt\n/,
  );
  t.match(
    text,
    /Full Name:\s*\n\s*URI:http:\/\/crl.example\/ca.crl\n\s*\n?\s*Full Name:\s*\n\s*URI:http:\/\/crl2.example\/ca.crl/,
  );
  t.notMatch(text, /Subject Alternative Name/, 'no SAN extension when the CSR has none');
  t.match(await openssl(['verify', '-CAfile', '{ca}', '{c}'], { ca: caPem, c: pem }), /OK/);

  const onlyEku = await signCertificate(
    csr,
    { durationMs: HOUR, isCA: false, usages: ['server auth'] },
    { certificatePem: caPem, key: caKey },
  );
  const t2 = await openssl(['x509', '-in', '{c}', '-noout', '-text'], { c: onlyEku });
  t.notMatch(t2, /X509v3 Key Usage/, 'no KeyUsage extension when no key usage bit is set');
  t.match(t2, /Extended Key Usage: \s*\n\s*TLS Web Server Authentication\n/);

  await t.rejects(
    signCertificate(
      csr,
      { durationMs: HOUR, isCA: false, usages: ['bogus'] },
      { certificatePem: caPem, key: caKey },
    ),
    { name: 'PkiError', message: 'unknown key usage "bogus"' },
  );
  for (const durationMs of [0, -HOUR, Number.NaN]) {
    await t.rejects(
      signCertificate(csr, { ...leafTemplate, durationMs }, { certificatePem: caPem, key: caKey }),
      { name: 'PkiError', message: /^certificate duration must be positive/ },
    );
  }
});

t.test('an empty subject makes the SAN extension critical', async (t) => {
  const caKey = await generatePrivateKey({ algorithm: 'Ed25519' });
  const caPem = await createSelfSignedCa({ key: caKey, commonName: 'CA', durationMs: DAY });
  const key = await generatePrivateKey({ algorithm: 'Ed25519' });
  const csr = await parseCsr(await createCsr({ key, uris: ['spiffe://td/workload'] }));
  const pem = await signCertificate(csr, leafTemplate, { certificatePem: caPem, key: caKey });
  const text = await openssl(['x509', '-in', '{c}', '-noout', '-text'], { c: pem });
  t.match(text, /Subject Alternative Name: critical\s*\n\s*URI:spiffe:\/\/td\/workload\n/);
  t.notOk(new X509Certificate(pem).subject, 'node reports no subject');
  t.match(await openssl(['verify', '-CAfile', '{ca}', '{c}'], { ca: caPem, c: pem }), /OK/);
});

t.test('SAN and NameConstraints are copied raw from the CSR', async (t) => {
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await createSelfSignedCa({ key: caKey, commonName: 'CA', durationMs: DAY });
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await openssl(
    [
      'req',
      '-new',
      '-key',
      '{key}',
      '-subj',
      '/CN=constrained',
      '-addext',
      'subjectAltName=DNS:a.example.com,otherName:1.2.3.4;UTF8:kept',
      '-addext',
      'nameConstraints=critical,permitted;DNS:.example.com',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
    ],
    { key: encodePrivateKey(key, 'PKCS8') },
  );
  const csr = await parseCsr(csrPem);
  const pem = await signCertificate(
    csr,
    { ...leafTemplate, isCA: true },
    { certificatePem: caPem, key: caKey },
  );
  const text = await openssl(['x509', '-in', '{c}', '-noout', '-text'], { c: pem });
  t.match(text, /Name Constraints: critical\s*\n\s*Permitted:\s*\n\s*DNS:.example.com\n/);
  t.match(text, /DNS:a.example.com, othername: 1.2.3.4::kept/, 'otherName survives');
  const fields = readCertificateFields(der(pem));
  t.equal(
    hex(fields.extensions.get('2.5.29.17')?.value ?? new Uint8Array()),
    hex(csr.sanExtension?.der ?? new Uint8Array()),
  );
  // Key usage in the CSR is ignored: it comes from the template.
  t.match(
    text,
    /Key Usage: critical\s*\n\s*Digital Signature, Key Encipherment, Certificate Sign\n/,
  );
});

t.test('self-signed issuance uses the referenced key and the CSR subject as issuer', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csr = await parseCsr(
    await createCsr({ key, subject: { commonName: 'self' }, dnsNames: ['self.example'] }),
  );
  const pem = await signCertificate(csr, { ...leafTemplate, isCA: true }, { selfSigned: key });
  const cert = new X509Certificate(pem);
  t.equal(cert.issuer, 'CN=self');
  t.equal(cert.subject, 'CN=self');
  t.ok(cert.verify(cert.publicKey));
  const fields = readCertificateFields(der(pem));
  t.equal(hex(fields.issuerDer), hex(fields.subjectDer));
  t.equal(
    ext<x509.AuthorityKeyIdentifierExtension>(pem, '2.5.29.35')?.keyId,
    ext<x509.SubjectKeyIdentifierExtension>(pem, '2.5.29.14')?.keyId,
  );
  t.match(await openssl(['verify', '-CAfile', '{c}', '{c}'], { c: pem }), /OK/);

  const leaf = await signCertificate(csr, leafTemplate, { selfSigned: key });
  t.notOk(new X509Certificate(leaf).ca);

  const other = await generatePrivateKey({ algorithm: 'ECDSA' });
  await t.rejects(signCertificate(csr, leafTemplate, { selfSigned: other }), {
    name: 'PkiError',
    message: 'CSR not signed by referenced private key',
  });
});

t.test('signer problems are PkiErrors', async (t) => {
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await createSelfSignedCa({ key: caKey, commonName: 'CA', durationMs: DAY });
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csr = await parseCsr(await createCsr({ key, subject: { commonName: 'x' } }));
  await t.rejects(signCertificate(csr, leafTemplate, { certificatePem: caPem, key }), {
    name: 'PkiError',
    message: 'signer private key does not match the signer certificate',
  });
  await t.rejects(signCertificate(csr, leafTemplate, { certificatePem: 'nothing', key: caKey }), {
    message: 'signer certificate PEM holds no certificate',
  });
  await t.rejects(
    signCertificate(csr, leafTemplate, {
      certificatePem: '-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n',
      key: caKey,
    }),
    { message: /^cannot parse certificate: / },
  );
});

t.test('a signer certificate without SKI still yields an AKI', async (t) => {
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      '{key}',
      '-subj',
      '/CN=no-ski',
      '-days',
      '1',
      '-config',
      '{cnf}',
    ],
    {
      key: encodePrivateKey(caKey, 'PKCS8'),
      cnf: '[req]\ndistinguished_name=dn\nx509_extensions=ext\n[dn]\n[ext]\nbasicConstraints=critical,CA:TRUE\nsubjectKeyIdentifier=none\nauthorityKeyIdentifier=none\n',
    },
  );
  t.notOk(readCertificateFields(der(caPem)).extensions.has('2.5.29.14'), 'the CA has no SKI');
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csr = await parseCsr(await createCsr({ key, subject: { commonName: 'x' } }));
  const pem = await signCertificate(csr, leafTemplate, { certificatePem: caPem, key: caKey });
  t.equal(
    ext<x509.AuthorityKeyIdentifierExtension>(pem, '2.5.29.35')?.keyId,
    hex(subjectKeyIdOf(new Uint8Array(spkiOf(caKey)))),
  );
  t.match(await openssl(['verify', '-CAfile', '{ca}', '{c}'], { ca: caPem, c: pem }), /OK/);
});

t.test('RSA-3072 CA keys sign with SHA-384', async (t) => {
  const keyPem = await openssl([
    'genpkey',
    '-algorithm',
    'RSA',
    '-pkeyopt',
    'rsa_keygen_bits:3072',
  ]);
  const { decodePrivateKey } = await import('../../src/pki/keys.js');
  const caKey = decodePrivateKey(keyPem);
  const caPem = await createSelfSignedCa({ key: caKey, commonName: 'rsa3072', durationMs: DAY });
  const text = await openssl(['x509', '-in', '{c}', '-noout', '-text'], { c: caPem });
  t.match(text, 'Signature Algorithm: sha384WithRSAEncryption');
});

t.test('random serial numbers are 20 bytes with the top bit clear', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const s = randomSerialNumber();
    t.equal(s.length, 40);
    t.ok(Number.parseInt(s.slice(0, 2), 16) < 0x80);
    seen.add(s);
  }
  t.equal(seen.size, 200);
  let calls = 0;
  const zerosFirst = (size: number): Buffer =>
    calls++ === 0 ? Buffer.alloc(size) : Buffer.alloc(size, 0xff);
  t.equal(
    randomSerialNumber(zerosFirst),
    `7f${'ff'.repeat(19)}`,
    'an all-zero draw is retried; the top bit is cleared',
  );
  t.equal(calls, 2);
});
