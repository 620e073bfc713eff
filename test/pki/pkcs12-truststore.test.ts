import { type KeyObject, X509Certificate } from 'node:crypto';
import t from 'tap';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { PkiError } from '../../src/pki/errors.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import {
  encodePkcs12TrustStore,
  PKCS12_PROFILES,
  type Pkcs12Profile,
} from '../../src/pki/pkcs12.js';
import { hasKeytool, keytoolList, opensslPkcs12 } from './fixtures/keystore-tools.js';

const DAY = 24 * 3600_000;

// Subtests run side by side; openssl and keytool a few at a time (fixtures/tool-run.ts).
t.jobs = 3;

const MAC: Record<Pkcs12Profile, RegExp> = {
  LegacyRC2: /MAC: sha1, Iteration 1\n[\s\S]*PKCS7 Encrypted data: pbeWithSHA1And40BitRC2-CBC/,
  LegacyDES: /MAC: sha1, Iteration 1\n[\s\S]*PKCS7 Encrypted data: pbeWithSHA1And3-KeyTripleDES/,
  Modern2023: /MAC: sha256, Iteration 2048[\s\S]*PKCS7 Encrypted data: PBES2, PBKDF2, AES-256/,
};

const legacyFlag = (profile: Pkcs12Profile) => (profile === 'LegacyRC2' ? ['-legacy'] : []);

// A ca.crt with two CAs (a root and an intermediate it signed), as cert-manager may get one.
async function caBundle(): Promise<string[]> {
  const rootKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const root = await createSelfSignedCa({ key: rootKey, commonName: 'root', durationMs: DAY });
  const key: KeyObject = await generatePrivateKey({ algorithm: 'RSA' });
  const csr = await parseCsr(
    await createCsr({ key, subject: { commonName: 'intermediate', organizations: ['Acme'] } }),
  );
  const intermediate = await signCertificate(
    csr,
    { durationMs: DAY, isCA: true, usages: [] },
    { certificatePem: root, key: rootKey },
  );
  return [root, intermediate];
}

const der = (pem: string) => new X509Certificate(pem).raw.toString('hex');

t.test('openssl prints every CA, in order, each a trusted certificate bag', async (t) => {
  const cas = await caBundle();
  const outs = await Promise.all(
    PKCS12_PROFILES.map(async (profile) => {
      const p12 = await encodePkcs12TrustStore(cas.join(''), 'changeit', { profile });
      return opensslPkcs12(p12, 'changeit', [...legacyFlag(profile), '-nokeys']);
    }),
  );
  for (const [i, profile] of PKCS12_PROFILES.entries()) {
    const out = outs[i] as string;
    t.match(out, MAC[profile], `${profile} algorithms`);
    const certs = decodePemBlocks(out).filter((b) => b.label === 'CERTIFICATE');
    t.same(
      certs.map((b) => Buffer.from(b.der).toString('hex')),
      cas.map(der),
      `${profile}: root, intermediate`,
    );
    t.notMatch(out, /Keybag|PRIVATE KEY/, `${profile}: no key`);
    t.equal([...out.matchAll(/2\.16\.840\.1\.113894\.746875\.1\.1/g)].length, 2);
    // Named by subject, as go-pkcs12's EncodeTrustStore names them.
    t.match(out, /friendlyName: CN=root[\s\S]*friendlyName: CN=intermediate,O=Acme/);
  }
});

t.test('a wrong password fails in openssl', async (t) => {
  const [root = ''] = await caBundle();
  const failures = await Promise.all(
    PKCS12_PROFILES.map(async (profile) => {
      const p12 = await encodePkcs12TrustStore(root, 'right', { profile });
      return opensslPkcs12(p12, 'wrong', legacyFlag(profile)).then(
        () => undefined,
        (err: { stderr?: string }) => err,
      );
    }),
  );
  for (const [i, profile] of PKCS12_PROFILES.entries()) {
    const failure = failures[i];
    t.match(failure?.stderr, /mac verify (error|failure)/i, profile);
  }
});

t.test('Java keytool lists each CA as a trustedCertEntry', async (t) => {
  if (!(await hasKeytool())) {
    t.pass('keytool lists the truststore', { skip: 'skipped: keytool (Java) is not installed' });
    return;
  }
  const cas = await caBundle();
  // Three JVMs, a few at a time (fixtures/tool-run.ts).
  const outs = await Promise.all(
    PKCS12_PROFILES.map(async (profile) => {
      const p12 = await encodePkcs12TrustStore(cas.join(''), 'changeit', { profile });
      return keytoolList(p12, 'changeit');
    }),
  );
  for (const [i, profile] of PKCS12_PROFILES.entries()) {
    const out = outs[i] as string;
    t.match(out, /Your keystore contains 2 entries/, profile);
    t.match(out, /Alias name: cn=root\s+Creation date: .*\s+Entry type: trustedCertEntry/i);
    t.match(
      out,
      /Alias name: cn=intermediate,o=acme\s+Creation date: .*\s+Entry type: trustedCertEntry/i,
    );
  }
});

t.test('errors name the problem, never the password', async (t) => {
  const [root = ''] = await caBundle();
  const password = 'hunter2-secret';
  const cases: Array<[string, RegExp, Pkcs12Profile?]> = [
    ['', /^cannot create PKCS#12 truststore: no certificates$/],
    [`${root}-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n`, /PEM block 2 is "FOO"/],
    [root, /^unsupported PKCS#12 profile "Modern2026"$/, 'Modern2026' as Pkcs12Profile],
  ];
  for (const [caPem, message, profile] of cases) {
    const err = await encodePkcs12TrustStore(caPem, password, profile ? { profile } : {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(err, PkiError);
    t.match((err as Error).message, message);
    t.notMatch((err as Error).message, password);
  }
});
