// The csi-driver e2e cases that need no cluster (its test/e2e/suite/cases), through the
// real unix socket with a real gRPC client.
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { decodeBytes } from '../../src/api/certificate-request.js';
import { parseCsr } from '../../src/pki/csr.js';
import { opensslText, run, withTempDir } from '../support/issuer-fixtures.js';
import { allowVolumeCa, embeddedCA, startPlugin } from '../support/plugin-harness.js';

const podUid = '0a99d1e4-5b1c-4c8a-9f0e-2f6d7f9b1c11';

t.test(
  'extra attributes become CertificateRequest annotations; the request matches the spec',
  async (t) => {
    const p = await startPlugin(t);
    const { target } = await p.publish(
      'csi-annotations',
      embeddedCA({
        'custom.group.io/custom-key': 'custom-value',
        'csi.cert-manager.io/duration': '123h',
        'csi.cert-manager.io/is-ca': 'false',
        'csi.cert-manager.io/common-name': 'app.sandbox',
        'csi.cert-manager.io/dns-names': 'a.example.com,b.example.com',
        'csi.cert-manager.io/ip-sans': '10.0.0.7,fd00::7',
        'csi.cert-manager.io/uri-sans': 'spiffe://cluster.local/ns/sandbox/sa/app',
      }),
    );
    const requests = await p.requests();
    t.equal(requests.length, 1, 'exactly one CertificateRequest');
    const [cr] = requests;
    if (!cr) return;
    t.equal(cr.metadata.namespace, 'sandbox', "in the pod's namespace");
    t.equal(cr.metadata.annotations?.['custom.group.io/custom-key'], 'custom-value');
    t.same(cr.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Pod', name: 'app-0', uid: podUid },
    ]);
    t.equal(
      cr.metadata.labels?.['csi.cert-manager.io/node-id-hash'],
      'f56fd9f8b',
      'test-node hash',
    );
    t.match(
      cr.metadata.labels?.['csi.cert-manager.io/volume-id-hash'],
      /^[bcdfghjklmnpqrstvwxz2456789]+$/,
    );
    t.same(cr.spec.issuerRef, {
      name: 'embedded-ca',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
    t.equal(cr.spec.duration, '123h');
    t.equal(cr.spec.isCA, false);
    t.same(cr.spec.usages, ['digital signature', 'key encipherment']);
    const csr = await parseCsr(decodeBytes(cr.spec.request) ?? '');
    t.equal(csr.subject, 'CN=app.sandbox');
    t.same(csr.sans.dnsNames, ['a.example.com', 'b.example.com'], 'DNS names in order');
    t.same(csr.sans.uris, ['spiffe://cluster.local/ns/sandbox/sa/app']);
    t.equal(csr.sans.ipAddresses.length, 2);

    const certificate = await readFile(join(target, 'tls.crt'), 'utf8');
    t.equal(
      certificate,
      decodeBytes(cr.status?.certificate),
      'tls.crt is status.certificate byte for byte',
    );
    const key = await readFile(join(target, 'tls.key'), 'utf8');
    const cert = new X509Certificate(certificate);
    t.ok(cert.checkPrivateKey(createPrivateKey(key)), 'the key matches the certificate');
    t.equal(
      new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime(),
      123 * 3600_000,
      'duration',
    );
    const ca = await readFile(join(target, 'ca.crt'), 'utf8');
    await withTempDir(async (dir) => {
      await writeFile(join(dir, 'ca.pem'), ca);
      const { stdout } = await run('openssl', [
        'verify',
        '-CAfile',
        join(dir, 'ca.pem'),
        join(target, 'tls.crt'),
      ]);
      t.match(stdout, /: OK/, 'openssl verifies the chain');
    });
  },
);

t.test('fs-group: files and data dir belong to the group', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish(
    'csi-fsgroup',
    embeddedCA({ 'csi.cert-manager.io/fs-group': '2000' }),
  );
  const dataDir = p.dataRoot.dataDir('csi-fsgroup');
  const dirStat = await stat(dataDir);
  t.equal(dirStat.gid, 2000, 'data dir group');
  t.equal(dirStat.mode & 0o777, 0o550, 'data dir mode');
  for (const name of ['tls.key', 'tls.crt', 'ca.crt']) {
    const fileStat = await stat(join(dataDir, name));
    t.equal(fileStat.gid, 2000, `${name} group`);
    t.equal(fileStat.mode & 0o777, 0o440, `${name} mode`);
    const targetStat = await stat(join(target, name));
    t.equal(targetStat.gid, 2000, `${name} group at the target`);
  }
});

t.test('the pod fsGroup arrives as volume_mount_group; the attribute wins over it', async (t) => {
  const p = await startPlugin(t);
  await p.publish('csi-mount-group', embeddedCA(), { fsGroup: '3000' });
  t.equal((await stat(p.dataRoot.dataDir('csi-mount-group'))).gid, 3000);
  await p.publish('csi-both', embeddedCA({ 'csi.cert-manager.io/fs-group': '4000' }), {
    fsGroup: '3000',
  });
  t.equal((await stat(p.dataRoot.dataDir('csi-both'))).gid, 4000);
});

t.test('key encodings: default RSA PKCS#1, PKCS8, and ECDSA PKCS8', async (t) => {
  const p = await startPlugin(t);
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['default', {}, /^-----BEGIN RSA PRIVATE KEY-----\n[^-]+-----END RSA PRIVATE KEY-----\n$/],
    ['PKCS1', { 'csi.cert-manager.io/key-encoding': 'PKCS1' }, /^-----BEGIN RSA PRIVATE KEY-----/],
    [
      'PKCS8',
      { 'csi.cert-manager.io/key-encoding': 'PKCS8' },
      /^-----BEGIN PRIVATE KEY-----\n[^-]+-----END PRIVATE KEY-----\n$/,
    ],
    [
      'ECDSA',
      { 'csi.cert-manager.io/key-algorithm': 'ECDSA', 'csi.cert-manager.io/key-size': '384' },
      /^-----BEGIN PRIVATE KEY-----/,
    ],
    ['Ed25519', { 'csi.cert-manager.io/key-algorithm': 'ed25519' }, /^-----BEGIN PRIVATE KEY-----/],
  ];
  for (const [label, attributes, shape] of cases) {
    const volumeId = `csi-key-${label.toLowerCase()}`;
    const { target } = await p.publish(volumeId, embeddedCA(attributes));
    const pem = await readFile(join(target, 'tls.key'), 'utf8');
    t.match(pem, shape, `${label}: one PEM block, nothing after it`);
    const cert = new X509Certificate(await readFile(join(target, 'tls.crt')));
    t.ok(cert.checkPrivateKey(createPrivateKey(pem)), `${label}: key matches`);
  }
  const ecdsa = new X509Certificate(
    await readFile(join(p.dir, 'pods', 'csi-key-ecdsa', 'mount', 'tls.crt')),
  );
  t.equal(ecdsa.publicKey.asymmetricKeyDetails?.namedCurve, 'secp384r1');
});

t.test('PKCS#12 opens with openssl pkcs12 -passin and holds the same key and leaf', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish(
    'csi-pkcs12',
    embeddedCA({
      'csi.cert-manager.io/pkcs12-enable': 'true',
      'csi.cert-manager.io/pkcs12-password': 'a-random-password',
      'csi.cert-manager.io/pkcs12-filename': 'foo.p12',
    }),
  );
  const p12 = join(target, 'foo.p12');
  const { stdout: certs } = await run('openssl', [
    'pkcs12',
    '-in',
    p12,
    '-passin',
    'pass:a-random-password',
    '-nokeys',
    '-clcerts',
  ]);
  const leaf = await readFile(join(target, 'tls.crt'), 'utf8');
  t.equal(
    new X509Certificate(certs).fingerprint256,
    new X509Certificate(leaf).fingerprint256,
    'same leaf',
  );
  const { stdout: keyPem } = await run('openssl', [
    'pkcs12',
    '-in',
    p12,
    '-passin',
    'pass:a-random-password',
    '-nocerts',
    '-nodes',
  ]);
  const fromP12 = createPublicKey(createPrivateKey(keyPem)).export({ format: 'der', type: 'spki' });
  const fromFile = createPublicKey(
    createPrivateKey(await readFile(join(target, 'tls.key'), 'utf8')),
  ).export({ format: 'der', type: 'spki' });
  t.same(fromP12, fromFile, 'same key');
  await t.rejects(
    run('openssl', ['pkcs12', '-in', p12, '-passin', 'pass:wrong', '-nokeys']),
    'a wrong password is refused',
  );
  const metadata = await readFile(p.dataRoot.metadataPath('csi-pkcs12'), 'utf8');
  t.notMatch(metadata, /a-random-password/, 'the password is not in metadata.json');
});

t.test('key usages and isCA reach the certificate', async (t) => {
  const p = await startPlugin(t);
  await allowVolumeCa(p);
  const { target } = await p.publish(
    'csi-usages',
    embeddedCA({
      'csi.cert-manager.io/is-ca': 'true',
      'csi.cert-manager.io/key-usages':
        'signing,digital signature,content commitment,key encipherment,key agreement,data encipherment',
    }),
  );
  const [cr] = await p.requests();
  t.same(cr?.spec.usages, [
    'signing',
    'digital signature',
    'content commitment',
    'key encipherment',
    'key agreement',
    'data encipherment',
  ]);
  t.equal(cr?.spec.isCA, true);
  const text = await opensslText(await readFile(join(target, 'tls.crt'), 'utf8'));
  t.match(
    text,
    /Key Usage: critical\s+Digital Signature, Non Repudiation, Key Encipherment, Data Encipherment, Key Agreement, Certificate Sign/,
  );
  t.match(text, /CA:TRUE/);
});

t.test('variables expand in CN, DNS and URI SANs', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish(
    'csi-variables',
    embeddedCA({
      'csi.cert-manager.io/common-name': '$POD_NAME.${POD_NAMESPACE}',
      'csi.cert-manager.io/dns-names':
        '$POD_NAME-my-dns-$POD_NAMESPACE-${POD_UID},${POD_NAME},\n${POD_NAME}.${POD_NAMESPACE},$POD_NAME.${POD_NAMESPACE}.svc,${POD_UID},${SERVICE_ACCOUNT_NAME}',
      'csi.cert-manager.io/uri-sans':
        'spiffe://foo.bar/${POD_NAMESPACE}/$POD_NAME/$POD_UID,\nfile://foo-bar,\nbar://${POD_UID}',
    }),
    { pod: { 'csi.storage.k8s.io/serviceAccount.name': 'custom-sa' } },
  );
  const cert = new X509Certificate(await readFile(join(target, 'tls.crt')));
  t.equal(cert.subject, 'CN=app-0.sandbox');
  const sans = (cert.subjectAltName ?? '').split(', ');
  t.same(
    sans.filter((s) => s.startsWith('DNS:')).sort(),
    [
      `DNS:app-0-my-dns-sandbox-${podUid}`,
      'DNS:app-0',
      'DNS:app-0.sandbox',
      'DNS:app-0.sandbox.svc',
      `DNS:${podUid}`,
      'DNS:custom-sa',
    ].sort(),
  );
  t.same(
    sans.filter((s) => s.startsWith('URI:')),
    [`URI:spiffe://foo.bar/sandbox/app-0/${podUid}`, 'URI:file://foo-bar', `URI:bar://${podUid}`],
  );
});
