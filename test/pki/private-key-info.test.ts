import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import t from 'tap';
import { encodePrivateKey } from '../../src/pki/keys.js';
import { encodePrivateKeyInfo } from '../../src/pki/private-key-info.js';

const keys: Array<[string, () => KeyObject]> = [
  ['ECDSA P-256', () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey],
  ['ECDSA P-384', () => generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey],
  ['ECDSA P-521', () => generateKeyPairSync('ec', { namedCurve: 'secp521r1' }).privateKey],
  ['Ed25519', () => generateKeyPairSync('ed25519').privateKey],
  // Not built by hand: OpenSSL's own encoder answers.
  ['RSA-1024', () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey],
  [
    'secp256k1 (other curves)',
    () => generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey,
  ],
  [
    'secp224r1 (no JWK curve)',
    () => generateKeyPairSync('ec', { namedCurve: 'secp224r1' }).privateKey,
  ],
  ['Ed448', () => generateKeyPairSync('ed448').privateKey],
];

const opensslDer = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'der' });

t.test('the PrivateKeyInfo built from the JWK is the one OpenSSL encodes', async (t) => {
  for (const [name, generate] of keys) {
    const all = Array.from({ length: 4 }, generate);
    t.ok(
      all.every((key) => opensslDer(key).equals(encodePrivateKeyInfo(key))),
      `${name}: 4 keys, byte for byte`,
    );
    const key = all[0] as KeyObject;
    t.equal(
      encodePrivateKey(key, 'PKCS8'),
      key.export({ type: 'pkcs8', format: 'pem' }),
      `${name}: the PEM too`,
    );
  }
});

t.test(
  'an EC scalar or coordinate with a leading zero byte keeps it (fixed lengths)',
  async (t) => {
    for (const curve of ['prime256v1', 'secp384r1', 'secp521r1']) {
      // About one key in 128 has one in each part; searched for, so the case is met on every run.
      const found = {
        d: undefined as KeyObject | undefined,
        xy: undefined as KeyObject | undefined,
      };
      for (let i = 0; i < 5000 && !(found.d && found.xy); i++) {
        const { privateKey } = generateKeyPairSync('ec', { namedCurve: curve });
        const { d = '', x = '', y = '' } = privateKey.export({ format: 'jwk' });
        const leadingZero = (part: string) => Buffer.from(part, 'base64url')[0] === 0;
        if (leadingZero(d)) found.d ??= privateKey;
        if (leadingZero(x) || leadingZero(y)) found.xy ??= privateKey;
      }
      for (const [part, key] of Object.entries(found)) {
        if (!key) throw new Error(`no ${curve} key with a leading zero byte in ${part} in 5000`);
        t.ok(opensslDer(key).equals(encodePrivateKeyInfo(key)), `${curve}, ${part}`);
      }
    }
  },
);

t.test('openssl reads the key back, and node imports it as the same key', async (t) => {
  for (const [name, generate] of keys.slice(0, 4)) {
    const key = generate();
    const pem = encodePrivateKey(key, 'PKCS8');
    const text = execFileSync('openssl', ['pkey', '-noout', '-text'], { input: pem }).toString();
    t.match(text, /Private-Key/, `${name}: openssl pkey parses it`);
    const back = createPrivateKey(pem);
    t.same(back.export({ format: 'jwk' }), key.export({ format: 'jwk' }), `${name}: same key`);
  }
});
