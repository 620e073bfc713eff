import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import t from 'tap';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { PkiError } from '../../src/pki/errors.js';
import {
  decodePrivateKey,
  encodeCertificatePrivateKey,
  encodePrivateKey,
  generatePrivateKey,
  type KeySpec,
  keyMatchesCertificate,
  keySpecOf,
  normalizeKeySpec,
  publicKeysEqual,
  signingAlgorithmFor,
  spkiOf,
} from '../../src/pki/keys.js';
import { toCryptoKeyPair } from '../support/x509-provider.js';
import { openssl } from './fixtures/openssl.js';

const HOUR = 3600_000;

t.test('generates each supported key type with the requested size', async (t) => {
  const cases: Array<[KeySpec, string, Record<string, unknown>]> = [
    [{ algorithm: 'RSA' }, 'rsa', { modulusLength: 2048 }],
    [{ algorithm: 'ECDSA' }, 'ec', { namedCurve: 'prime256v1' }],
    [{ algorithm: 'ECDSA', size: 384 }, 'ec', { namedCurve: 'secp384r1' }],
    [{ algorithm: 'ECDSA', size: 521 }, 'ec', { namedCurve: 'secp521r1' }],
    [{ algorithm: 'Ed25519' }, 'ed25519', {}],
  ];
  for (const [spec, type, details] of cases) {
    const key = await generatePrivateKey(spec);
    t.equal(key.type, 'private');
    t.equal(key.asymmetricKeyType, type, `${spec.algorithm} ${spec.size ?? ''}`);
    t.match(key.asymmetricKeyDetails, details);
    t.same(keySpecOf(key), normalizeKeySpec(spec));
  }
});

t.test('RSA keys use public exponent 65537, like Go', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
  t.equal(key.asymmetricKeyDetails?.publicExponent, 65537n);
});

t.test('rejects bad key specs with messages that name the problem', async (t) => {
  const bad: Array<[KeySpec, RegExp]> = [
    [{ algorithm: 'RSA', size: 1024 }, /^RSA key size must be between 2048 and 8192, got 1024$/],
    [{ algorithm: 'RSA', size: 8193 }, /got 8193/],
    [{ algorithm: 'RSA', size: 16384 }, /got 16384/],
    [{ algorithm: 'RSA', size: 2048.5 }, /got 2048.5/],
    [{ algorithm: 'ECDSA', size: 128 }, /^ECDSA key size must be 256, 384 or 521, got 128$/],
    [{ algorithm: 'Ed25519', size: 256 }, /^Ed25519 keys have no size, got 256$/],
    [{ algorithm: 'DSA' as never }, /^unsupported key algorithm "DSA"$/],
  ];
  for (const [spec, message] of bad) {
    await t.rejects(generatePrivateKey(spec), { name: 'PkiError', message }, JSON.stringify(spec));
  }
  // The largest allowed RSA size is valid; it is only checked, not generated (8192 takes seconds).
  t.same(normalizeKeySpec({ algorithm: 'RSA', size: 8192 }), { algorithm: 'RSA', size: 8192 });
});

t.test('encodes PKCS1 and PKCS8 and decodes PKCS1, SEC1 and PKCS8 back', async (t) => {
  const rsa = await generatePrivateKey({ algorithm: 'RSA' });
  const ec = await generatePrivateKey({ algorithm: 'ECDSA', size: 384 });
  const ed = await generatePrivateKey({ algorithm: 'Ed25519' });

  const pkcs1 = encodePrivateKey(rsa, 'PKCS1');
  t.match(pkcs1, /^-----BEGIN RSA PRIVATE KEY-----\n/);
  t.ok(publicKeysEqual(decodePrivateKey(pkcs1), rsa), 'PKCS1 round trip');
  t.ok(publicKeysEqual(decodePrivateKey(Buffer.from(pkcs1)), rsa), 'Buffer input');
  t.match(await openssl(['rsa', '-check', '-noout', '-in', '{k}'], { k: pkcs1 }), /RSA key ok/);

  for (const key of [rsa, ec, ed]) {
    const pkcs8 = encodePrivateKey(key, 'PKCS8');
    t.match(pkcs8, /^-----BEGIN PRIVATE KEY-----\n/);
    const back = decodePrivateKey(pkcs8);
    t.ok(publicKeysEqual(back, key), `PKCS8 round trip ${key.asymmetricKeyType}`);
    t.same(keySpecOf(back), keySpecOf(key));
  }

  const sec1 = String(ec.export({ type: 'sec1', format: 'pem' }));
  t.match(sec1, /BEGIN EC PRIVATE KEY/);
  t.ok(publicKeysEqual(decodePrivateKey(sec1), ec), 'SEC1 decodes');
  // openssl ecparam -genkey writes an EC PARAMETERS block first; it is skipped.
  const withParams = `-----BEGIN EC PARAMETERS-----\nBgUrgQQAIg==\n-----END EC PARAMETERS-----\n${sec1}`;
  t.ok(publicKeysEqual(decodePrivateKey(withParams), ec), 'EC PARAMETERS block skipped');

  // A key written by openssl itself decodes too.
  const fromOpenssl = await openssl(['genpkey', '-algorithm', 'ED25519']);
  t.equal(keySpecOf(decodePrivateKey(fromOpenssl)).algorithm, 'Ed25519');
});

t.test('PKCS1 encoding is refused for non-RSA keys and for public keys', async (t) => {
  const ec = await generatePrivateKey({ algorithm: 'ECDSA' });
  const ed = await generatePrivateKey({ algorithm: 'Ed25519' });
  t.throws(() => encodePrivateKey(ec, 'PKCS1'), {
    name: 'PkiError',
    message: 'PKCS1 encoding requires an RSA key, got ec',
  });
  t.throws(() => encodePrivateKey(ed, 'PKCS1'), { message: /got ed25519/ });
  const pub = spkiOf(ec);
  const { createPublicKey } = await import('node:crypto');
  const pubKey = createPublicKey({ key: pub, format: 'der', type: 'spki' });
  t.throws(() => encodePrivateKey(pubKey, 'PKCS8'), {
    message: 'a private key is required, got a public key',
  });
  t.throws(() => encodePrivateKey(ec, 'PEM' as never), {
    message: /unsupported private key encoding "PEM"/,
  });
});

t.test(
  'encodeCertificatePrivateKey writes what cert-manager writes for each encoding',
  async (t) => {
    const cases: Array<[KeySpec, string, string]> = [
      [{ algorithm: 'RSA' }, 'RSA PRIVATE KEY', 'rsa'],
      [{ algorithm: 'ECDSA', size: 256 }, 'EC PRIVATE KEY', 'ec'],
      [{ algorithm: 'ECDSA', size: 384 }, 'EC PRIVATE KEY', 'ec'],
      [{ algorithm: 'ECDSA', size: 521 }, 'EC PRIVATE KEY', 'ec'],
      // Ed25519 has no PKCS#1 or SEC1 form: cert-manager writes PKCS#8 for PKCS1 too.
      [{ algorithm: 'Ed25519' }, 'PRIVATE KEY', 'ed25519'],
    ];
    for (const [spec, label, opensslType] of cases) {
      const name = `${spec.algorithm} ${spec.size ?? ''}`;
      const key = await generatePrivateKey(spec);
      const pem = encodeCertificatePrivateKey(key, 'PKCS1');
      t.match(pem, new RegExp(`^-----BEGIN ${label}-----\n`), `${name}: ${label}`);
      t.equal(pem.match(/-----BEGIN /g)?.length, 1, `${name}: one PEM block`);
      t.ok(decodePrivateKey(pem).equals(key), `${name}: decodes to the same key`);
      const text = await openssl(['pkey', '-in', '{k}', '-noout', '-text'], { k: pem });
      t.match(
        text,
        opensslType === 'ec' ? /ASN1 OID: (prime256v1|secp384r1|secp521r1)/ : /Private-Key/,
      );
      const pkcs8 = encodeCertificatePrivateKey(key, 'PKCS8');
      t.equal(pkcs8, encodePrivateKey(key, 'PKCS8'), `${name}: PKCS8 is PKCS#8 for every key`);
    }
    // SEC1 as Go's MarshalECPrivateKey writes it: the curve and the public key are inside.
    const ec = await generatePrivateKey({ algorithm: 'ECDSA' });
    const sec1 = await openssl(['asn1parse', '-in', '{k}'], {
      k: encodeCertificatePrivateKey(ec, 'PKCS1'),
    });
    t.match(sec1, /cont \[ 0 \][\s\S]*prime256v1[\s\S]*cont \[ 1 \]/);
    // encodePrivateKey keeps refusing PKCS1 for non-RSA keys (the key-encoding attribute relies on it).
    t.throws(() => encodePrivateKey(ec, 'PKCS1'), { message: /requires an RSA key/ });
    const { createPublicKey } = await import('node:crypto');
    t.throws(() => encodeCertificatePrivateKey(createPublicKey(ec), 'PKCS1'), {
      name: 'PkiError',
      message: 'a private key is required, got a public key',
    });
    t.throws(() => encodeCertificatePrivateKey(ec, 'PEM' as never), {
      message: /unsupported private key encoding "PEM"/,
    });
  },
);

t.test('garbage private keys are rejected without echoing the input', async (t) => {
  const secret = 'c2VjcmV0LWtleS1tYXRlcmlhbA';
  const cases: Array<[string, RegExp]> = [
    ['', /no private key PEM block found/],
    ['not a key at all', /no private key PEM block found/],
    [
      `-----BEGIN PRIVATE KEY-----\n${secret}==\n-----END PRIVATE KEY-----\n`,
      /^cannot decode private key: /,
    ],
    [
      `-----BEGIN RSA PRIVATE KEY-----\n${secret}!!\n-----END RSA PRIVATE KEY-----\n`,
      /not valid base64/,
    ],
    [
      `-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\n${secret}\n-----END RSA PRIVATE KEY-----\n`,
      /has headers/,
    ],
    [`-----BEGIN PRIVATE KEY-----\n${secret}\n-----END RSA PRIVATE KEY-----\n`, /ends with/],
    [
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      /no private key PEM block found/,
    ],
    [
      '-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n',
      /encrypted private keys are not supported/,
    ],
  ];
  for (const [input, message] of cases) {
    const err = t.throws(() => decodePrivateKey(input), { name: 'PkiError', message });
    t.ok(err instanceof PkiError);
    t.notMatch((err as Error).message, secret, 'input not echoed');
  }
});

t.test('keySpecOf works on public keys and refuses unsupported keys', async (t) => {
  const ec = await generatePrivateKey({ algorithm: 'ECDSA', size: 521 });
  const { createPublicKey } = await import('node:crypto');
  t.same(keySpecOf(createPublicKey(ec)), { algorithm: 'ECDSA', size: 521 });
  const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
  t.throws(() => keySpecOf(k1), {
    name: 'PkiError',
    message: 'unsupported elliptic curve secp256k1',
  });
  const x25519 = generateKeyPairSync('x25519').privateKey;
  t.throws(() => keySpecOf(x25519), { message: 'unsupported key type x25519' });
});

t.test('publicKeysEqual and keyMatchesCertificate compare public halves', async (t) => {
  const a = await generatePrivateKey({ algorithm: 'ECDSA' });
  const b = await generatePrivateKey({ algorithm: 'ECDSA' });
  const { createPublicKey } = await import('node:crypto');
  t.ok(publicKeysEqual(a, createPublicKey(a)), 'private vs its public half');
  t.notOk(publicKeysEqual(a, b));
  t.ok(publicKeysEqual(a, a), 'a key and itself');
  t.ok(publicKeysEqual(createPublicKey(a), a), 'either order');
  // Keys of other types or curves never equal, whatever their bytes.
  const p384 = await generatePrivateKey({ algorithm: 'ECDSA', size: 384 });
  const ed = await generatePrivateKey({ algorithm: 'Ed25519' });
  const rsa = await generatePrivateKey({ algorithm: 'RSA' });
  t.notOk(publicKeysEqual(a, p384));
  t.notOk(publicKeysEqual(a, ed));
  t.notOk(publicKeysEqual(rsa, a));
  // Comparing keys of two types leaves no OpenSSL error behind to fail the next decoding.
  t.ok(publicKeysEqual(rsa, decodePrivateKey(encodePrivateKey(rsa, 'PKCS1'))), 'RSA round trip');
  t.notOk(publicKeysEqual(ed, generateKeyPairSync('ed448').publicKey));
  t.ok(decodePrivateKey(encodePrivateKey(ed, 'PKCS8')), 'decodes after another type');
  t.ok(publicKeysEqual(ed, createPublicKey(ed)), 'Ed25519');
  const cert = await createSelfSignedCa({ key: a, commonName: 'x', durationMs: HOUR });
  const other = await createSelfSignedCa({ key: b, commonName: 'y', durationMs: HOUR });
  t.ok(keyMatchesCertificate(a, cert));
  t.notOk(keyMatchesCertificate(b, cert));
  t.ok(keyMatchesCertificate(a, cert + other), 'only the first certificate counts');
  t.notOk(keyMatchesCertificate(a, other + cert));
  t.throws(() => keyMatchesCertificate(a, 'nothing'), {
    message: 'no certificate PEM block found',
  });
  t.throws(
    () =>
      keyMatchesCertificate(a, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
    { name: 'PkiError', message: /^cannot parse certificate: / },
  );
  t.ok(new X509Certificate(cert).publicKey.equals(createPublicKey(a)));
});

t.test(
  'signing algorithms follow Go: CSRs use SHA-256 for RSA, CA signatures scale with the key',
  async (t) => {
    const rsa2048 = await generatePrivateKey({ algorithm: 'RSA' });
    const p256 = await generatePrivateKey({ algorithm: 'ECDSA' });
    const p384 = await generatePrivateKey({ algorithm: 'ECDSA', size: 384 });
    const p521 = await generatePrivateKey({ algorithm: 'ECDSA', size: 521 });
    const ed = await generatePrivateKey({ algorithm: 'Ed25519' });
    t.same(signingAlgorithmFor(rsa2048, 'certificate'), {
      name: 'RSASSA-PKCS1-v1_5',
      hash: 'SHA-256',
    });
    t.same(signingAlgorithmFor(rsa2048, 'csr'), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' });
    // RSA-3072 (SHA-384) is covered in certificate.test.ts, RSA-4096 (SHA-512) below.
    t.same(signingAlgorithmFor(p256, 'csr'), { name: 'ECDSA', hash: 'SHA-256' });
    t.same(signingAlgorithmFor(p384, 'certificate'), { name: 'ECDSA', hash: 'SHA-384' });
    t.same(signingAlgorithmFor(p521, 'certificate'), { name: 'ECDSA', hash: 'SHA-512' });
    t.same(signingAlgorithmFor(ed, 'certificate'), { name: 'Ed25519' });
  },
);

t.test('RSA-4096 keys: generated asynchronously, signed with SHA-512 as a CA', async (t) => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const key = await generatePrivateKey({ algorithm: 'RSA', size: 4096 });
  clearInterval(timer);
  t.equal(key.asymmetricKeyDetails?.modulusLength, 4096);
  t.ok(ticks > 0, 'the event loop kept running while the key was generated');
  t.same(signingAlgorithmFor(key, 'certificate'), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' });
  t.same(signingAlgorithmFor(key, 'csr'), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' });
});

t.test('toCryptoKeyPair imports keys into WebCrypto with the requested hash', async (t) => {
  const data = new TextEncoder().encode('hello');
  for (const spec of [
    { algorithm: 'RSA' },
    { algorithm: 'ECDSA', size: 384 },
    { algorithm: 'Ed25519' },
  ] as KeySpec[]) {
    const key = await generatePrivateKey(spec);
    const alg = signingAlgorithmFor(key, 'certificate');
    const pair = await toCryptoKeyPair(key, alg);
    t.equal(pair.privateKey.type, 'private');
    t.equal(pair.publicKey.type, 'public');
    const { subtle } = globalThis.crypto;
    const sig = await subtle.sign(alg, pair.privateKey, data);
    t.ok(await subtle.verify(alg, pair.publicKey, sig, data), `${spec.algorithm} sign/verify`);
  }
  const rsa = await generatePrivateKey({ algorithm: 'RSA' });
  const pair = await toCryptoKeyPair(rsa, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' });
  t.match(pair.privateKey.algorithm, { hash: { name: 'SHA-512' } });
  const defaultPair = await toCryptoKeyPair(rsa);
  t.match(defaultPair.privateKey.algorithm, { hash: { name: 'SHA-256' } });
  const edPair = await toCryptoKeyPair(await generatePrivateKey({ algorithm: 'Ed25519' }), {
    name: 'Ed25519',
  });
  t.equal(edPair.privateKey.algorithm.name, 'Ed25519');
  const { createPublicKey } = await import('node:crypto');
  await t.rejects(toCryptoKeyPair(createPublicKey(rsa)), { name: 'PkiError' });
  // An RSA key with an algorithm that has no hash falls back to SHA-256.
  const noHash = await toCryptoKeyPair(rsa, { name: 'Ed25519' });
  t.match(noHash.privateKey.algorithm, { hash: { name: 'SHA-256' } });
});

t.test('spkiOf gives the SPKI OpenSSL encodes, for every key type and curve', async (t) => {
  const { createPublicKey } = await import('node:crypto');
  const specs: KeySpec[] = [
    { algorithm: 'ECDSA', size: 256 },
    { algorithm: 'ECDSA', size: 384 },
    { algorithm: 'ECDSA', size: 521 },
  ];
  // The encoder itself (leading zero bytes, every key kind) is tested in public-key-info.test.ts.
  for (const spec of specs) {
    const key = await generatePrivateKey(spec);
    const expected = createPublicKey(key).export({ type: 'spki', format: 'der' });
    t.ok(spkiOf(key).equals(expected), `ECDSA ${spec.size}`);
  }
  for (const spec of [{ algorithm: 'RSA' }, { algorithm: 'Ed25519' }] as KeySpec[]) {
    const key = await generatePrivateKey(spec);
    const expected = createPublicKey(key).export({ type: 'spki', format: 'der' });
    t.ok(spkiOf(key).equals(expected), spec.algorithm);
    t.ok(spkiOf(createPublicKey(key)).equals(expected), `${spec.algorithm}, its public key`);
  }
  const ec = await generatePrivateKey({ algorithm: 'ECDSA' });
  const first = spkiOf(ec);
  first.fill(0);
  t.not(spkiOf(ec)[0], 0, 'a copy each time: writing one leaves the next intact');
});
