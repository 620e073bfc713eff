import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import t from 'tap';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { PkiError } from '../../src/pki/errors.js';
import { generatePrivateKey, type KeySpec } from '../../src/pki/keys.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { encodePkcs12, PKCS12_PROFILES, type Pkcs12Profile } from '../../src/pki/pkcs12.js';
import { hasKeytool, keytoolList, opensslPkcs12 } from './fixtures/keystore-tools.js';

const DAY = 24 * 3600_000;

// Subtests run side by side; openssl and keytool a few at a time (fixtures/tool-run.ts).
t.jobs = 3;

// What `openssl pkcs12 -info` prints for each profile: go-pkcs12's parameters.
const PROFILE_INFO: Record<Pkcs12Profile, RegExp[]> = {
  LegacyRC2: [
    /MAC: sha1, Iteration 1\n/,
    /MAC length: 20, salt length: 8/,
    /PKCS7 Encrypted data: pbeWithSHA1And40BitRC2-CBC, Iteration 2048/,
    /Shrouded Keybag: pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048/,
  ],
  LegacyDES: [
    /MAC: sha1, Iteration 1\n/,
    /MAC length: 20, salt length: 8/,
    /PKCS7 Encrypted data: pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048/,
    /Shrouded Keybag: pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048/,
  ],
  Modern2023: [
    /MAC: sha256, Iteration 2048/,
    /MAC length: 32, salt length: 16/,
    /PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/,
    /Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/,
  ],
};

// OpenSSL 3 keeps RC2 in its legacy provider; 3DES and AES need no flag.
const legacyFlag = (profile: Pkcs12Profile) => (profile === 'LegacyRC2' ? ['-legacy'] : []);

function info(p12: Buffer, password: string, profile: Pkcs12Profile, extra: string[] = []) {
  return opensslPkcs12(p12, password, [...legacyFlag(profile), ...extra]);
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

const KEY_SPECS = [
  { algorithm: 'RSA', size: 2048 },
  { algorithm: 'ECDSA', size: 256 },
  { algorithm: 'Ed25519' },
] as const;

for (const spec of KEY_SPECS) {
  t.test(`${spec.algorithm} key: openssl reads key and leaf back unchanged`, async (t) => {
    const key = await generatePrivateKey(spec);
    const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
    // The openssl runs go at once (fixtures/tool-run.ts bounds them); assertions keep their order.
    const outs = await Promise.all(
      PKCS12_PROFILES.map(async (profile) => {
        const p12 = await encodePkcs12(key, leaf, 'changeit', { profile });
        return info(p12, 'changeit', profile, ['-nodes']);
      }),
    );
    for (const [i, profile] of PKCS12_PROFILES.entries()) {
      const out = outs[i] as string;
      for (const line of PROFILE_INFO[profile]) t.match(out, line, `${profile} algorithms`);
      t.ok(pemKey(out).equals(key), `${profile}: private key equals the input`);
      t.ok(pkcs8(pemKey(out)).equals(pkcs8(key)), `${profile}: PKCS#8 bytes equal the input`);
      const certs = pemCertificates(out);
      t.equal(certs.length, 1);
      t.ok(certs[0]?.equals(new X509Certificate(leaf).raw), `${profile}: leaf DER unchanged`);
      const localKeyIds = [...out.matchAll(/localKeyID: ([0-9A-F ]+)/g)].map((m) => m[1]?.trim());
      t.equal(localKeyIds.length, 2, `${profile}: key and leaf carry a localKeyID`);
      t.equal(localKeyIds[0], localKeyIds[1], `${profile}: the same localKeyID pairs them`);
      t.notMatch(out, /friendlyName/, `${profile}: no friendlyName unless asked for`);
    }
  });
}

t.test('without a profile: Modern2023, as before profiles existed', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  const out = await opensslPkcs12(await encodePkcs12(key, leaf, 'changeit'), 'changeit', [
    '-nodes',
  ]);
  for (const line of PROFILE_INFO.Modern2023) t.match(out, line);
});

t.test('a three-certificate chain keeps all three, leaf first', async (t) => {
  const chain = await threeCertificateChain({ algorithm: 'ECDSA' });
  const outs = await Promise.all(
    PKCS12_PROFILES.map(async (profile) => {
      const p12 = await encodePkcs12(chain.key, chain.chainPem, 's3cret', {
        friendlyName: 'tls',
        profile,
      });
      return info(p12, 's3cret', profile, ['-nokeys']);
    }),
  );
  for (const [i, profile] of PKCS12_PROFILES.entries()) {
    const out = outs[i] as string;
    t.notMatch(out, /PRIVATE KEY/, '-nokeys prints no key');
    const certs = pemCertificates(out);
    t.same(
      certs.map((c) => c.toString('hex')),
      chain.certs.map((pem) => new X509Certificate(pem).raw.toString('hex')),
      `${profile}: leaf, intermediate, root in order`,
    );
    t.match(out, /friendlyName: tls/);
    t.equal([...out.matchAll(/localKeyID/g)].length, 1, 'only the leaf is paired with the key');
    t.match(out, /subject=CN = leaf[\s\S]*subject=CN = intermediate[\s\S]*subject=CN = root/);
  }
});

t.test('a wrong password fails in openssl', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  const failures = await Promise.all(
    PKCS12_PROFILES.map(async (profile) => {
      const p12 = await encodePkcs12(key, leaf, 'right', { profile });
      return info(p12, 'wrong', profile, ['-nodes']).then(
        () => undefined,
        (err: { stderr?: string }) => err,
      );
    }),
  );
  for (const [i, profile] of PKCS12_PROFILES.entries()) {
    const failure = failures[i];
    t.ok(failure, `${profile}: openssl exits non-zero`);
    t.match(failure?.stderr, /mac verify (error|failure)/i);
  }
});

t.test(
  'passwords: UTF-8 for PBES2, BMPString for the legacy PBEs and MACs; empty works',
  async (t) => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
    const cases = PKCS12_PROFILES.flatMap((profile) =>
      ['pässwörd €', ''].map((password) => ({ profile, password })),
    );
    const outs = await Promise.all(
      cases.map(async ({ profile, password }) => {
        const p12 = await encodePkcs12(key, leaf, password, { profile });
        return info(p12, password, profile, ['-nodes']);
      }),
    );
    for (const [i, { profile, password }] of cases.entries()) {
      const out = outs[i] as string;
      t.ok(pemKey(out).equals(key), `${profile}: key decrypts with ${JSON.stringify(password)}`);
    }
  },
);

t.test('every call uses fresh salts and IVs', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  for (const profile of PKCS12_PROFILES) {
    const [a, b] = await Promise.all([
      encodePkcs12(key, leaf, 'x', { profile }),
      encodePkcs12(key, leaf, 'x', { profile }),
    ]);
    t.notOk(a.equals(b), profile);
  }
});

t.test('Java keytool reads the key entry with its chain', async (t) => {
  if (!(await hasKeytool())) {
    t.pass('Java keytool reads the keystore', {
      skip: 'skipped: keytool (Java) is not installed',
    });
    return;
  }
  // Nine JVMs: they run a few at a time (fixtures/tool-run.ts), not one after another.
  const cases = await Promise.all(
    KEY_SPECS.map(async (spec) => ({ spec, chain: await threeCertificateChain(spec) })),
  );
  const runs = cases.flatMap(({ spec, chain }) =>
    PKCS12_PROFILES.map((profile) => ({ spec, chain, profile })),
  );
  const outs = await Promise.all(
    runs.map(async ({ chain, profile }) => {
      const p12 = await encodePkcs12(chain.key, chain.chainPem, 'changeit', {
        friendlyName: 'tls',
        profile,
      });
      return keytoolList(p12, 'changeit');
    }),
  );
  for (const [i, { spec, profile }] of runs.entries()) {
    const out = outs[i] as string;
    const name = `${spec.algorithm} ${profile}`;
    t.match(out, /Your keystore contains 1 entry/, name);
    t.match(out, /Alias name: tls\s+Creation date: .*\s+Entry type: PrivateKeyEntry/, name);
    t.match(out, /Certificate chain length: 3/, name);
  }
});

t.test('errors name the problem, never the password', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await createSelfSignedCa({ key, commonName: 'leaf', durationMs: DAY });
  const password = 'hunter2-secret';
  const cases: Array<[KeyObject, string, RegExp, Pkcs12Profile?]> = [
    [key, '', /^cannot create PKCS#12: no certificates in chain$/],
    [key, 'no PEM here', /no certificates in chain/],
    [key, `${leaf}-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n`, /PEM block 2 is "FOO"/],
    [createPublicKey(key), leaf, /a private key is required, got a public key/],
    [
      await generatePrivateKey({ algorithm: 'ECDSA' }),
      leaf,
      /the private key does not match the leaf certificate/,
    ],
    // PBMAC1: neither OpenSSL 3.0 nor Java 17 reads it.
    [key, leaf, /^unsupported PKCS#12 profile "Modern2026"$/, 'Modern2026' as Pkcs12Profile],
    [key, leaf, /^unsupported PKCS#12 profile "toString"$/, 'toString' as Pkcs12Profile],
  ];
  for (const [k, chainPem, message, profile] of cases) {
    const err = await encodePkcs12(k, chainPem, password, profile ? { profile } : {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(err, PkiError);
    t.match((err as Error).message, message);
    t.notMatch((err as Error).message, password);
  }
});
