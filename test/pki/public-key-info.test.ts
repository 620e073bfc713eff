import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import t from 'tap';
import { encodePublicKeyInfo } from '../../src/pki/public-key-info.js';

const keys: Array<[string, () => { privateKey: KeyObject; publicKey: KeyObject }]> = [
  ['ECDSA P-256', () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' })],
  ['ECDSA P-384', () => generateKeyPairSync('ec', { namedCurve: 'secp384r1' })],
  ['ECDSA P-521', () => generateKeyPairSync('ec', { namedCurve: 'secp521r1' })],
  ['Ed25519', () => generateKeyPairSync('ed25519')],
  ['RSA-2048', () => generateKeyPairSync('rsa', { modulusLength: 2048 })],
  [
    'RSA-1024, exponent 3',
    () => generateKeyPairSync('rsa', { modulusLength: 1024, publicExponent: 3 }),
  ],
  // Not built by hand: OpenSSL's own encoder answers.
  ['X25519 (other kinds)', () => generateKeyPairSync('x25519')],
  ['secp256k1 (other curves)', () => generateKeyPairSync('ec', { namedCurve: 'secp256k1' })],
  // No JWK form at all.
  ['secp224r1 (no JWK curve)', () => generateKeyPairSync('ec', { namedCurve: 'secp224r1' })],
  ['Ed448', () => generateKeyPairSync('ed448')],
];

const equalsOpenssl = (privateKey: KeyObject, publicKey: KeyObject) => {
  const openssl = publicKey.export({ type: 'spki', format: 'der' });
  return (
    openssl.equals(encodePublicKeyInfo(privateKey)) &&
    openssl.equals(encodePublicKeyInfo(publicKey))
  );
};

t.test('the SubjectPublicKeyInfo built from the JWK is the one OpenSSL encodes', async (t) => {
  for (const [name, generate] of keys) {
    const pairs = Array.from({ length: 4 }, generate);
    t.ok(
      pairs.every(({ privateKey, publicKey }) => equalsOpenssl(privateKey, publicKey)),
      `${name}: 4 keys, byte for byte, from the private and the public key`,
    );
  }
});

t.test('an EC coordinate with a leading zero byte keeps it (fixed-length points)', async (t) => {
  for (const curve of ['prime256v1', 'secp384r1', 'secp521r1']) {
    // About one key in 128 has one; searched for, so the case is met on every run.
    let found: { privateKey: KeyObject; publicKey: KeyObject } | undefined;
    for (let i = 0; i < 5000 && !found; i++) {
      const pair = generateKeyPairSync('ec', { namedCurve: curve });
      const { x = '', y = '' } = pair.publicKey.export({ format: 'jwk' });
      if (Buffer.from(x, 'base64url')[0] === 0 || Buffer.from(y, 'base64url')[0] === 0)
        found = pair;
    }
    if (!found) throw new Error(`no ${curve} key with a leading zero byte in 5000`);
    t.ok(equalsOpenssl(found.privateKey, found.publicKey), curve);
  }
});
