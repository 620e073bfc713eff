import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { encodeJks } from '../../src/pki/jks.js';
import { generatePrivateKey, type KeySpec } from '../../src/pki/keys.js';
import { runTool } from './fixtures/tool-run.js';

const DAY = 86_400_000;

// The subtests start JVMs; they run side by side, the tools a few at a time (fixtures/tool-run.ts).
t.jobs = 3;

async function leafSignedByCa(spec: KeySpec) {
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await createSelfSignedCa({ key: caKey, commonName: 'test ca', durationMs: DAY });
  const key = await generatePrivateKey(spec);
  const csr = await parseCsr(
    await createCsr({ key, subject: { commonName: 'web' }, dnsNames: ['web'] }),
  );
  const leafPem = await signCertificate(
    csr,
    { durationMs: DAY, isCA: false, usages: ['digital signature'] },
    { certificatePem: caPem, key: caKey },
  );
  return { key, leaf: new X509Certificate(leafPem), ca: new X509Certificate(caPem) };
}

async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-jks-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function keyOf(pem: string): KeyObject {
  return createPrivateKey(pem);
}

// Java is on the machine (README, Requirements): keytool reads what Java's KeyStore reads.
for (const spec of [
  { algorithm: 'RSA', size: 2048 },
  { algorithm: 'ECDSA', size: 256 },
] as const) {
  t.test(
    `keytool lists a ${spec.algorithm} key entry with its chain and the CA, and exports the same key`,
    async (t) => {
      const { key, leaf, ca } = await leafSignedByCa(spec);
      const jks = encodeJks(
        [
          { alias: 'certificate', key, chain: [leaf, ca] },
          { alias: 'ca', trusted: ca },
        ],
        'changeit',
      );
      await inTempDir(async (dir) => {
        const path = join(dir, 'keystore.jks');
        await writeFile(path, jks);
        // Listing and exporting read the same file: the two JVMs run at once.
        const p12 = join(dir, 'out.p12');
        const [{ stdout }] = await Promise.all([
          runTool('keytool', [
            '-list',
            '-v',
            '-storetype',
            'JKS',
            '-keystore',
            path,
            '-storepass',
            'changeit',
          ]),
          runTool('keytool', [
            '-importkeystore',
            '-noprompt',
            '-srckeystore',
            path,
            '-srcstoretype',
            'JKS',
            '-srcstorepass',
            'changeit',
            '-srcalias',
            'certificate',
            '-destkeystore',
            p12,
            '-deststoretype',
            'PKCS12',
            '-deststorepass',
            'changeit',
          ]),
        ]);
        t.match(stdout, /Keystore type: JKS/);
        t.match(stdout, /Your keystore contains 2 entries/);
        t.match(
          stdout,
          /Alias name: certificate\s+Creation date: .*\s+Entry type: PrivateKeyEntry\s+Certificate chain length: 2/,
        );
        t.match(stdout, /Alias name: ca\s+Creation date: .*\s+Entry type: trustedCertEntry/);
        // The key comes back out only if the key protector and the integrity hash are right.
        const { stdout: pem } = await runTool('openssl', [
          'pkcs12',
          '-in',
          p12,
          '-nocerts',
          '-nodes',
          '-passin',
          'pass:changeit',
        ]);
        t.ok(keyOf(pem).equals(key), 'the exported key is the one stored');
        t.ok((await readFile(path)).equals(jks), 'nothing rewrote the file');
      });
    },
  );
}

t.test(
  'a wrong password is refused by keytool (the integrity hash covers the store)',
  async (t) => {
    const { key, leaf } = await leafSignedByCa({ algorithm: 'ECDSA' });
    await inTempDir(async (dir) => {
      const path = join(dir, 'keystore.jks');
      await writeFile(path, encodeJks([{ alias: 'certificate', key, chain: [leaf] }], 'right'));
      const refused = await runTool('keytool', [
        '-list',
        '-storetype',
        'JKS',
        '-keystore',
        path,
        '-storepass',
        'wrong',
      ]).then(
        () => undefined,
        (err: { stdout?: string }) => err,
      );
      t.ok(refused, 'keytool fails');
      t.match(refused?.stdout, /password was incorrect|Keystore was tampered with/);
    });
  },
);

t.test('a key that is not the leaf’s is refused before anything is written', async (t) => {
  const { leaf } = await leafSignedByCa({ algorithm: 'ECDSA' });
  const other = await generatePrivateKey({ algorithm: 'ECDSA' });
  t.throws(() => encodeJks([{ alias: 'x', key: other, chain: [leaf] }], 'p'), {
    message: 'JKS entry "x": the private key does not match the leaf certificate',
  });
  t.throws(() => encodeJks([{ alias: 'x', key: other, chain: [] }], 'p'), {
    message: 'JKS entry "x": no certificate chain',
  });
});
