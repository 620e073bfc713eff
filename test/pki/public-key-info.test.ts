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

t.test('the SubjectPublicKeyInfo built from the JWK is the one OpenSSL encodes', async (t) => {
  for (const [name, generate] of keys) {
    // Several keys each: x, y, n of every length class (a leading zero byte in some of them).
    for (let i = 0; i < 12; i++) {
      const { privateKey, publicKey } = generate();
      const openssl = publicKey.export({ type: 'spki', format: 'der' });
      const fromPrivate = encodePublicKeyInfo(privateKey);
      const fromPublic = encodePublicKeyInfo(publicKey);
      if (!openssl.equals(fromPrivate) || !openssl.equals(fromPublic)) {
        t.fail(`${name}: differs from OpenSSL's encoding`, {
          found: fromPrivate.toString('hex'),
          wanted: openssl.toString('hex'),
        });
        return;
      }
    }
    t.pass(`${name}: 12 keys, byte for byte`);
  }
});
