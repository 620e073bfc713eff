import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { buildChain, certificateTimes, splitPemCertificates } from '../../src/pki/chain.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import { openssl } from './fixtures/openssl.js';

const DAY = 24 * 3600_000;

async function issue(
  commonName: string,
  signer: { certificatePem: string; key: import('node:crypto').KeyObject },
  isCA: boolean,
): Promise<{ pem: string; key: import('node:crypto').KeyObject }> {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csr = await parseCsr(
    await createCsr({ key, subject: { commonName }, dnsNames: [`${commonName}.example`] }),
  );
  const pem = await signCertificate(csr, { durationMs: DAY, isCA, usages: [] }, signer);
  return { pem, key };
}

async function pki() {
  const rootKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const root = await createSelfSignedCa({ key: rootKey, commonName: 'root', durationMs: 10 * DAY });
  const inter = await issue('intermediate', { certificatePem: root, key: rootKey }, true);
  const leaf = await issue('leaf', { certificatePem: inter.pem, key: inter.key }, false);
  const direct = await issue('direct', { certificatePem: root, key: rootKey }, false);
  const otherKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const otherRoot = await createSelfSignedCa({
    key: otherKey,
    commonName: 'root',
    durationMs: DAY,
  });
  return { root, rootKey, inter, leaf: leaf.pem, direct: direct.pem, otherRoot };
}

t.test('root + intermediate + leaf: chain excludes the root, ca is the root', async (t) => {
  const p = await pki();
  const expected = { chainPem: p.leaf + p.inter.pem, caPem: p.root };
  t.same(buildChain(p.leaf, [p.inter.pem, p.root]), expected);
  t.same(
    buildChain(p.leaf, [p.root, p.inter.pem]),
    expected,
    'order of CA certificates does not matter',
  );
  t.same(buildChain(p.leaf, [p.root + p.inter.pem]), expected, 'bundles are split');
  t.same(buildChain(p.leaf + p.inter.pem, [p.root]), expected, 'leaf PEM may carry its chain');
  t.same(
    buildChain(p.leaf, [p.inter.pem, p.root, p.root, p.inter.pem]),
    expected,
    'duplicates are dropped',
  );
  t.same(
    buildChain(p.leaf, [`# comment\n${p.inter.pem}\n\n${p.root}`]),
    expected,
    'text between blocks ignored',
  );
  const out = await openssl(['verify', '-CAfile', '{ca}', '-untrusted', '{chain}', '{leaf}'], {
    ca: expected.caPem,
    chain: expected.chainPem,
    leaf: p.leaf,
  });
  t.match(out, /leaf: OK/);
});

t.test('intermediate only: the intermediate is the CA', async (t) => {
  const p = await pki();
  t.same(buildChain(p.leaf, [p.inter.pem]), { chainPem: p.leaf + p.inter.pem, caPem: p.inter.pem });
});

t.test('leaf signed by the root directly', async (t) => {
  const p = await pki();
  t.same(buildChain(p.direct, [p.root]), { chainPem: p.direct, caPem: p.root });
});

t.test('a self-signed leaf is its own CA; a lone issued leaf has none', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'Ed25519' });
  const csr = await parseCsr(await createCsr({ key, subject: { commonName: 'self' } }));
  const self = await signCertificate(
    csr,
    { durationMs: DAY, isCA: false, usages: [] },
    { selfSigned: key },
  );
  t.same(buildChain(self, []), { chainPem: self, caPem: self });
  const p = await pki();
  t.same(buildChain(p.leaf, []), { chainPem: p.leaf, caPem: '' });
  t.same(buildChain(p.root, [p.root]), { chainPem: p.root, caPem: p.root });
});

t.test('broken chains are errors', async (t) => {
  const p = await pki();
  const broken = { name: 'PkiError', message: 'certificate chain is malformed or broken' };
  t.throws(() => buildChain(p.leaf, [p.root]), broken, 'missing intermediate');
  t.throws(() => buildChain(p.leaf, [p.otherRoot]), broken, 'unrelated root with the same name');
  t.throws(
    () => buildChain(p.leaf, [p.inter.pem, p.otherRoot]),
    broken,
    'intermediate not signed by that root',
  );
  t.throws(
    () => buildChain(p.leaf, [p.direct]),
    broken,
    'a non-CA certificate cannot be an issuer',
  );
  t.throws(
    () => buildChain(p.leaf, [p.inter.pem, p.root, p.direct]),
    broken,
    'an extra certificate',
  );
  t.throws(() => buildChain('', []), { name: 'PkiError', message: 'certificate chain is empty' });
});

t.test('splitPemCertificates', async (t) => {
  const p = await pki();
  t.same(splitPemCertificates(''), []);
  t.same(splitPemCertificates('just text'), []);
  const certs = splitPemCertificates(p.leaf + p.inter.pem + p.root);
  t.equal(certs.length, 3);
  t.ok(certs.every((c) => c instanceof X509Certificate));
  t.equal(certs[0]?.subject, 'CN=leaf');
  t.equal(certs[2]?.toString(), p.root);
  t.throws(
    () =>
      splitPemCertificates(
        `${p.leaf}-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n`,
      ),
    {
      name: 'PkiError',
      message: 'PEM block 2 is "PRIVATE KEY", not a certificate',
    },
  );
  t.throws(
    () => splitPemCertificates('-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n'),
    {
      name: 'PkiError',
      message: /^cannot parse certificate 1: /,
    },
  );
});

t.test('certificateTimes reads the first certificate', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const now = new Date('2031-05-06T07:08:09.500Z');
  const pem = await createSelfSignedCa({ key, commonName: 'times', durationMs: 2 * DAY, now });
  const late = await createSelfSignedCa({
    key,
    commonName: 'late',
    durationMs: 100 * 365 * DAY,
    now,
  });
  t.same(certificateTimes(pem + late), {
    notBefore: new Date('2031-05-06T07:08:09Z'),
    notAfter: new Date('2031-05-08T07:08:09Z'),
  });
  // Years from 2050 on are GeneralizedTime.
  t.same(certificateTimes(late).notAfter, new Date(now.getTime() - 500 + 100 * 365 * DAY));
  const x = new X509Certificate(late);
  t.same(new Date(x.validTo), certificateTimes(late).notAfter);
  t.throws(() => certificateTimes('none'), {
    name: 'PkiError',
    message: 'no certificate PEM block found',
  });
});
