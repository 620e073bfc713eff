import { execFile } from 'node:child_process';
import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { PkiError } from '../../src/pki/errors.js';
import { generatePrivateKey, type KeySpec } from '../../src/pki/keys.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { encodePkcs12 } from '../../src/pki/pkcs12.js';

const run = promisify(execFile);
const DAY = 24 * 3600_000;

async function withFile<T>(data: Buffer, fn: (path: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'pkcs12-test-'));
  try {
    const path = join(dir, 'keystore.p12');
    await writeFile(path, data);
    return await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `openssl pkcs12 -info` output (stdout + stderr); rejects when openssl fails. */
async function info(p12: Buffer, password: string, extra: string[] = []): Promise<string> {
  return withFile(p12, async (path) => {
    const { stdout, stderr } = await run('openssl', [
      'pkcs12',
      '-in',
      path,
      '-passin',
      `pass:${password}`,
      '-info',
      ...extra,
    ]);
    return stdout + stderr;
  });
}

function pemCertificates(text: string): Buffer[] {
  return decodePemBlocks(text)
    .filter((b) => b.label === 'CERTIFICATE')
    .map((b) => Buffer.from(b.der));
}

function pemKey(text: string): KeyObject {
  const block = decodePemBlocks(text).find((b) => b.label === 'PRIVATE KEY');
  if (!block) throw new Error('no PRIVATE KEY block in openssl output');
  return createPrivateKey({ key: Buffer.from(block.der), format: 'der', type: 'pkcs8' });
}

const pkcs8 = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'der' });

async function issue(
  commonName: string,
  spec: KeySpec,
  signer: { certificatePem: string; key: KeyObject },
  isCA: boolean,
): Promise<{ pem: string; key: KeyObject }> {
  const key = await generatePrivateKey(spec);
  const csr = await parseCsr(await createCsr({ key, subject: { commonName } }));
  const pem = await signCertificate(csr, { durationMs: DAY, isCA, usages: [] }, signer);
  return { pem, key };
}

async function threeCertificateChain(spec: KeySpec) {
  const rootKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const root = await createSelfSignedCa({ key: rootKey, commonName: 'root', durationMs: DAY });
  const inter = await issue(
    'intermediate',
    { algorithm: 'ECDSA' },
    { certificatePem: root, key: rootKey },
    true,
  );
  const leaf = await issue('leaf', spec, { certificatePem: inter.pem, key: inter.key }, false);
  return {
    key: leaf.key,
    chainPem: leaf.pem + inter.pem + root,
    certs: [leaf.pem, inter.pem, root],
  };
}

const profile = [
  /MAC: sha256, Iteration 2048/,
  /PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/,
  /Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/,
];

for (const spec of [
  { algorithm: 'RSA', size: 2048 },
  { algorithm: 'ECDSA', size: 256 },
  { algorithm: 'Ed25519' },
] as const) {
  t.test(`${spec.algorithm} key: openssl reads key and leaf back unchanged`, async (t) => {
    const key = await generatePrivateKey(spec);
    const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
    const p12 = await encodePkcs12(key, leaf, 'changeit');
    const out = await info(p12, 'changeit', ['-nodes']);
    for (const line of profile) t.match(out, line, 'OpenSSL 3 modern profile');
    t.ok(pemKey(out).equals(key), 'private key equals the input');
    t.ok(pkcs8(pemKey(out)).equals(pkcs8(key)), 'PKCS#8 bytes equal the input');
    const certs = pemCertificates(out);
    t.equal(certs.length, 1);
    t.ok(certs[0]?.equals(new X509Certificate(leaf).raw), 'leaf DER equals the input');
    const localKeyIds = [...out.matchAll(/localKeyID: ([0-9A-F ]+)/g)].map((m) => m[1]?.trim());
    t.equal(localKeyIds.length, 2, 'key and leaf carry a localKeyID');
    t.equal(localKeyIds[0], localKeyIds[1], 'the same localKeyID pairs key and leaf');
    t.notMatch(out, /friendlyName/, 'no friendlyName unless asked for');
  });
}

t.test('a three-certificate chain keeps all three, leaf first', async (t) => {
  const chain = await threeCertificateChain({ algorithm: 'ECDSA' });
  const p12 = await encodePkcs12(chain.key, chain.chainPem, 's3cret', { friendlyName: 'tls' });
  const out = await info(p12, 's3cret', ['-nokeys']);
  t.notMatch(out, /PRIVATE KEY/, '-nokeys prints no key');
  const certs = pemCertificates(out);
  t.same(
    certs.map((c) => c.toString('hex')),
    chain.certs.map((pem) => new X509Certificate(pem).raw.toString('hex')),
    'leaf, intermediate, root in order',
  );
  t.match(out, /friendlyName: tls/);
  t.equal([...out.matchAll(/localKeyID/g)].length, 1, 'only the leaf is paired with the key');
  t.match(out, /subject=CN = leaf[\s\S]*subject=CN = intermediate[\s\S]*subject=CN = root/);
});

t.test('a wrong password fails in openssl', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  const p12 = await encodePkcs12(key, leaf, 'right');
  const failure = await info(p12, 'wrong', ['-nodes']).then(
    () => undefined,
    (err: { stderr?: string }) => err,
  );
  t.ok(failure, 'openssl exits non-zero');
  t.match(failure?.stderr, /mac verify (error|failure)/i);
});

t.test('passwords are UTF-8 like OpenSSL 3 expects; the empty password works', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  for (const password of ['pässwörd €', '']) {
    const p12 = await encodePkcs12(key, leaf, password);
    const out = await info(p12, password, ['-nodes']);
    t.ok(pemKey(out).equals(key), `key decrypts with ${JSON.stringify(password)}`);
  }
});

t.test('every call uses fresh salts and IVs', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  const [a, b] = await Promise.all([encodePkcs12(key, leaf, 'x'), encodePkcs12(key, leaf, 'x')]);
  t.notOk(a.equals(b));
});

t.test('Java keytool reads the key entry with its chain', async (t) => {
  const probe = await run('keytool', ['-help']).then(
    () => true,
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
  );
  if (!probe) {
    t.pass('Java keytool reads the keystore', {
      skip: 'skipped: keytool (Java) is not installed',
    });
    return;
  }
  for (const spec of [{ algorithm: 'RSA' }, { algorithm: 'Ed25519' }] as const) {
    const chain = await threeCertificateChain(spec);
    const p12 = await encodePkcs12(chain.key, chain.chainPem, 'changeit', {
      friendlyName: 'tls',
    });
    const out = await withFile(p12, async (path) => {
      const { stdout } = await run('keytool', [
        '-list',
        '-v',
        '-storetype',
        'PKCS12',
        '-keystore',
        path,
        '-storepass',
        'changeit',
      ]);
      return stdout;
    });
    t.match(out, /Alias name: tls/, spec.algorithm);
    t.match(out, /Entry type: PrivateKeyEntry/);
    t.match(out, /Certificate chain length: 3/);
  }
});

t.test('errors name the problem, never the password', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  const password = 'hunter2-secret';
  const cases: Array<[KeyObject, string, RegExp]> = [
    [key, '', /^cannot create PKCS#12: no certificates in chain$/],
    [key, 'no PEM here', /no certificates in chain/],
    [key, `${leaf}-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n`, /PEM block 2 is "FOO"/],
    [createPublicKey(key), leaf, /a private key is required, got a public key/],
    [
      await generatePrivateKey({ algorithm: 'ECDSA' }),
      leaf,
      /the private key does not match the leaf certificate/,
    ],
  ];
  for (const [k, chainPem, message] of cases) {
    const err = await encodePkcs12(k, chainPem, password).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(err, PkiError);
    t.match((err as Error).message, message);
    t.notMatch((err as Error).message, password);
  }
});
