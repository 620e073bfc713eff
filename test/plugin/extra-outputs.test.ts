import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { runPublish } from '../../src/cli/publish/publish-command.js';
import { DATA_LINK } from '../../src/fs/atomic-writer.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { keytoolList } from '../pki/fixtures/keystore-tools.js';
import { openssl } from '../pki/fixtures/openssl.js';
import { rejectsWith } from '../support/grpc-assert.js';
import { runInProcess } from '../support/in-process-command.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

const JKS_PASSWORD = 'jks-volume-secret';
const outputs = embeddedCA({
  'csi.cert-manager.io/key-algorithm': 'ECDSA',
  // Java refuses to parse a certificate with neither a subject nor a SAN.
  'csi.cert-manager.io/dns-names': 'app.sandbox.svc',
  'csi.cert-manager.io/combined-pem-file': 'tls-combined.pem',
  'csi.cert-manager.io/jks-enable': 'true',
  'csi.cert-manager.io/jks-password': JKS_PASSWORD,
});

const keytoolJks = (store: Buffer) =>
  keytoolList(store, JKS_PASSWORD, { storetype: 'JKS', verbose: false });

t.test('combined PEM, JKS keystore and truststore, renewed in one generation', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish('csi-outputs', outputs);
  const read = (name: string) => readFile(join(target, name));

  // Combined PEM: the key file, then the certificate file, as one file.
  const keyPem = (await read('tls.key')).toString();
  const certificatePem = (await read('tls.crt')).toString();
  const combined = (await read('tls-combined.pem')).toString();
  t.equal(combined, keyPem + certificatePem, 'tls.key then tls.crt');
  const blocks = decodePemBlocks(combined);
  t.equal(blocks[0]?.label, 'PRIVATE KEY', 'the key comes first, PKCS#8 as key-encoding says');
  t.ok(blocks.length >= 2 && blocks.slice(1).every((b) => b.label === 'CERTIFICATE'));
  const key = createPrivateKey(combined);
  const leaf = new X509Certificate(combined.slice(combined.indexOf('-----BEGIN CERTIFICATE')));
  t.ok(leaf.checkPrivateKey(key), 'the key of the combined file matches its leaf');
  const chain = combined.slice(combined.indexOf('-----BEGIN CERTIFICATE'));
  const caPem = (await read('ca.crt')).toString();
  t.match(
    await openssl(['verify', '-CAfile', '{ca}', '-untrusted', '{chain}', '{chain}'], {
      ca: caPem,
      chain,
    }),
    /: OK/,
    'the chain of the combined file verifies against ca.crt',
  );

  // JKS: the key entry `certificate` and the CA `ca`; the truststore holds the CA alone.
  // Two JVM starts at once: each takes most of a second.
  const [keystore, truststore] = await Promise.all([
    read('keystore.jks').then(keytoolJks),
    read('truststore.jks').then(keytoolJks),
  ]);
  t.match(keystore, /Your keystore contains 2 entries/);
  t.match(keystore, /^certificate, .*PrivateKeyEntry/m);
  t.match(keystore, /^ca, .*trustedCertEntry/m);
  t.match(truststore, /Your keystore contains 1 entry/);
  t.match(truststore, /^ca, .*trustedCertEntry/m);

  // The password is kept in its own 0600 file, never in metadata.json.
  const metadata = await readFile(p.dataRoot.metadataPath('csi-outputs'), 'utf8');
  t.notMatch(metadata, JKS_PASSWORD, 'no JKS password in metadata.json');
  t.equal(await readFile(p.dataRoot.jksPasswordPath('csi-outputs'), 'utf8'), JKS_PASSWORD);
  t.equal((await stat(p.dataRoot.jksPasswordPath('csi-outputs'))).mode & 0o777, 0o600);

  // A renewal replaces every file in one generation: the new combined PEM sits beside the
  // new tls.crt behind the same ..data link.
  const dataDir = p.dataRoot.dataDir('csi-outputs');
  const before = await readlink(join(dataDir, DATA_LINK));
  const outcome = await p.manager.renewNow({ volumeId: 'csi-outputs' });
  t.equal(outcome.renewed.length, 1, 'renewed');
  const after = await readlink(join(dataDir, DATA_LINK));
  t.not(after, before, 'a new generation');
  const generation = join(dataDir, after);
  t.same(
    (await readdir(generation)).sort(),
    [
      'ca.crt',
      'generation.json',
      'keystore.jks',
      'tls-combined.pem',
      'tls.crt',
      'tls.key',
      'truststore.jks',
    ],
    'every output is in the new generation',
  );
  const renewedCombined = await readFile(join(generation, 'tls-combined.pem'), 'utf8');
  const renewedCertificate = await readFile(join(generation, 'tls.crt'), 'utf8');
  t.not(renewedCertificate, certificatePem, 'a new certificate');
  t.ok(renewedCombined.endsWith(renewedCertificate), 'the combined file has the new certificate');
  t.ok(
    new X509Certificate(renewedCertificate).checkPrivateKey(createPrivateKey(renewedCombined)),
    'and the key that matches it',
  );
  // JKS keeps certificates as plain DER (keytool read the format above): the new one is in.
  const renewedKeystore = await readFile(join(generation, 'keystore.jks'));
  t.ok(
    renewedKeystore.includes(new X509Certificate(renewedCertificate).raw),
    'the keystore of the new generation holds the new certificate',
  );

  // cert-csi publish lists every file the volume holds, the extra outputs too.
  const listedTarget = join(p.dir, 'pods', 'csi-listed', 'mount');
  const listed = await runInProcess(runPublish, [
    '--endpoint',
    `unix://${join(p.dir, 'csi.sock')}`,
    '--volume-id',
    'csi-listed',
    '--target',
    listedTarget,
    ...Object.entries({
      ...outputs,
      'csi.cert-manager.io/pkcs12-enable': 'true',
      'csi.cert-manager.io/pkcs12-password': 'p12-secret',
    }).flatMap(([key, value]) => ['--attr', `${key}=${value}`]),
  ]);
  t.equal(listed.code, 0, listed.stderr);
  const filesLine = /^files: +(.*)$/m.exec(listed.stdout)?.[1]?.split(' ') ?? [];
  t.same(
    filesLine,
    [
      'tls.key',
      'tls.crt',
      'ca.crt',
      'keystore.p12',
      'tls-combined.pem',
      'keystore.jks',
      'truststore.jks',
      'generation.json',
    ].map((name) => join(listedTarget, name)),
    'the key, certificate and CA, then the PKCS#12, combined PEM and JKS files, then generation.json',
  );
  t.same(
    (await readdir(listedTarget)).filter((n) => !n.startsWith('..')).sort(),
    filesLine.map((path) => path.slice(listedTarget.length + 1)).sort(),
    'every file the volume holds is listed, and only those',
  );
  t.notMatch(listed.stdout, /p12-secret|jks-volume-secret/, 'no password printed');

  // A republish with another JKS password is refused without showing either.
  const refused = await p
    .publish('csi-outputs', { ...outputs, 'csi.cert-manager.io/jks-password': 'other-secret' })
    .then(
      () => undefined,
      (e: unknown) => e as { code?: number; details?: string },
    );
  t.equal(refused?.code, status.ALREADY_EXISTS);
  t.match(refused?.details, /csi\.cert-manager\.io\/jks-password: differs/);
  t.notMatch(refused?.details, /secret/, 'neither password is shown');
});

t.test(
  'bad output attributes are refused naming the key, before anything is written',
  async (t) => {
    const p = await startPlugin(t);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { 'csi.cert-manager.io/jks-enable': 'true' },
        /csi\.cert-manager\.io\/jks-password: Required value: required attribute when JKS KeyStore is enabled/,
      ],
      [
        { 'csi.cert-manager.io/combined-pem-file': 'tls.crt' },
        /csi\.cert-manager\.io\/combined-pem-file: Duplicate value: "tls\.crt"/,
      ],
      [
        { 'csi.cert-manager.io/jks-password': 'hunter2' },
        /csi\.cert-manager\.io\/jks-password: Invalid value: \(redacted\): cannot use attribute without/,
      ],
    ];
    for (const [attributes, expected] of cases) {
      await rejectsWith(
        t,
        p.publish('csi-bad-outputs', embeddedCA(attributes)),
        status.INVALID_ARGUMENT,
        expected,
      );
    }
    t.same(await p.dataRoot.listVolumeIds(), [], 'no volume dir');
    t.same(await p.requests(), [], 'no CertificateRequest');
  },
);
