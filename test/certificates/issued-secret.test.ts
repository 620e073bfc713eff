import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  certificateDetailAnnotations,
  issuedSecretContent,
} from '../../src/certificates/issued-secret.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { encodePrivateKey } from '../../src/pki/keys.js';
import {
  certificate,
  certificateFrom,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';

const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString();

async function leafFor(subject: Parameters<typeof createCsr>[0]) {
  const csr = await parseCsr(await createCsr(subject));
  return signCertificate(
    csr,
    { durationMs: 3_600_000, isCA: false, usages: ['digital signature'] },
    {
      selfSigned: subject.key,
    },
  );
}

const web = certificate(
  'web',
  withNamespace('apps'),
  withSpec({ secretName: 'web-tls', issuerRef: { name: 'ca' } }),
);

t.test('a Secret as cert-manager writes it (issuing/internal/secret.go)', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  // What cert-manager writes for an ECDSA key with the default PKCS1 encoding: SEC1.
  const keyPem = String(key.export({ type: 'sec1', format: 'pem' }));
  const certificatePem = await leafFor({
    key,
    subject: { commonName: 'web', organizations: ['Example, Inc.', 'Ops'], serialNumber: '7' },
    dnsNames: ['web.example.com', 'www.example.com'],
    ipAddresses: ['10.0.0.1'],
    uris: ['spiffe://cluster.local/ns/apps/sa/web'],
    emailAddresses: ['ops@example.com'],
  });
  const content = issuedSecretContent({
    certificate: certificateFrom(
      web,
      withSpec({
        secretTemplate: { labels: { team: 'web' }, annotations: { owner: 'ops' } },
        additionalOutputFormats: [{ type: 'CombinedPEM' }, { type: 'DER' }],
      }),
    ),
    requestIssuer: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    keyPem,
    certificatePem,
    caPem: certificatePem,
  });
  t.same(content.labels, { team: 'web', 'controller.cert-manager.io/fao': 'true' });
  t.same(content.annotations, {
    owner: 'ops',
    'cert-manager.io/common-name': 'web',
    'cert-manager.io/subject-serialnumber': '7',
    // In DER order: a multi-valued RDN is a SET OF, sorted by encoding (as Go encodes it too).
    'cert-manager.io/subject-organizations': 'Ops,"Example, Inc."',
    'cert-manager.io/alt-names': 'web.example.com,www.example.com',
    'cert-manager.io/ip-sans': '10.0.0.1',
    'cert-manager.io/uri-sans': 'spiffe://cluster.local/ns/apps/sa/web',
    'cert-manager.io/email-sans': 'ops@example.com',
    'cert-manager.io/certificate-name': 'web',
    'cert-manager.io/issuer-name': 'ca',
    'cert-manager.io/issuer-kind': 'ClusterIssuer',
    'cert-manager.io/issuer-group': 'cert-manager.io',
  });
  t.same(Object.keys(content.data).sort(), [
    'ca.crt',
    'key.der',
    'tls-combined.pem',
    'tls.crt',
    'tls.key',
  ]);
  t.equal(
    text(content.data['tls-combined.pem']),
    `${keyPem}\n${certificatePem}`,
    'CombinedPEM is key, newline, certificate',
  );
  const der = createPrivateKey({
    key: Buffer.from(content.data['key.der'] ?? []),
    format: 'der',
    type: 'sec1',
  });
  t.ok(der.equals(key), 'key.der is the DER of tls.key');
});

t.test(
  'empty lists and no CA: the always-present annotations stay, ca.crt is left out',
  async (t) => {
    const key = generateKeyPairSync('ed25519').privateKey;
    const certificatePem = await leafFor({ key, dnsNames: ['only.example.com'] });
    const content = issuedSecretContent({
      certificate: certificateFrom(web),
      requestIssuer: { name: 'ca' },
      keyPem: encodePrivateKey(key, 'PKCS8'),
      certificatePem,
      caPem: '',
    });
    t.same(content.annotations, {
      'cert-manager.io/common-name': '',
      'cert-manager.io/alt-names': 'only.example.com',
      'cert-manager.io/ip-sans': '',
      'cert-manager.io/uri-sans': '',
      'cert-manager.io/certificate-name': 'web',
      'cert-manager.io/issuer-name': 'ca',
      'cert-manager.io/issuer-kind': '',
      'cert-manager.io/issuer-group': '',
    });
    t.same(Object.keys(content.data).sort(), ['tls.crt', 'tls.key']);
  },
);

t.test(
  'the detail annotations are read once per parsed leaf, and each caller gets its own copy',
  async (t) => {
    const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    const leaf = new X509Certificate(
      await leafFor({ key, subject: { commonName: 'web' }, dnsNames: ['web.example.com'] }),
    );
    const first = certificateDetailAnnotations(leaf);
    t.equal(first['cert-manager.io/alt-names'], 'web.example.com');
    first['cert-manager.io/alt-names'] = 'changed by a caller';
    first.extra = 'x';
    const again = certificateDetailAnnotations(leaf);
    t.equal(again['cert-manager.io/alt-names'], 'web.example.com', 'a caller edits only its copy');
    t.notOk('extra' in again);
    const other = new X509Certificate(
      await leafFor({ key, subject: { commonName: 'api' }, dnsNames: ['api.example.com'] }),
    );
    t.equal(
      certificateDetailAnnotations(other)['cert-manager.io/common-name'],
      'api',
      'another leaf, its own',
    );
  },
);
