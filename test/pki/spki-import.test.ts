import { createPublicKey, ECDH, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { publicKeyFromSpki } from '../../src/pki/spki-import.js';

const spkiOf = (key: ReturnType<typeof createPublicKey>) =>
  key.export({ type: 'spki', format: 'der' });

t.test('every key type reads back as the key that was exported', async (t) => {
  const keys = [
    generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey,
    generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey,
    generateKeyPairSync('ec', { namedCurve: 'secp521r1' }).publicKey,
    generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey,
    generateKeyPairSync('ed25519').publicKey,
    generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey,
  ];
  for (const key of keys) {
    const spki = spkiOf(key);
    const read = publicKeyFromSpki(new Uint8Array(spki));
    const what = `${key.asymmetricKeyType} ${key.asymmetricKeyDetails?.namedCurve ?? ''}`;
    t.ok(read.equals(key), what);
    t.same(read.asymmetricKeyDetails, key.asymmetricKeyDetails, what);
    t.ok(spkiOf(read).equals(spki), `${what}: the same SPKI again`);
  }
});

t.test('a compressed point and an offset view take the DER path and still read', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
  const spki = spkiOf(key);
  const compressed = ECDH.convertKey(
    spki.subarray(-65),
    'prime256v1',
    undefined,
    undefined,
    'compressed',
  ) as Buffer;
  const body = Buffer.concat([
    spki.subarray(2, spki.length - 65 - 3),
    Buffer.from([0x03, 0x22, 0x00]),
    compressed,
  ]);
  const der = Buffer.concat([Buffer.from([0x30, body.length]), body]);
  t.ok(publicKeyFromSpki(der).equals(key), 'compressed');
  const padded = Buffer.concat([Buffer.from([1, 2, 3]), spki]);
  t.ok(publicKeyFromSpki(padded.subarray(3)).equals(key), 'a view into a larger buffer');
});

t.test('a point off the curve fails as the DER import fails', async (t) => {
  const spki = spkiOf(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey);
  const bad = Buffer.from(spki);
  bad[bad.length - 1] = (bad[bad.length - 1] ?? 0) ^ 1;
  let expected = '';
  try {
    createPublicKey({ key: bad, format: 'der', type: 'spki' });
  } catch (err) {
    expected = (err as Error).message;
  }
  t.not(expected, '', 'node refuses it');
  t.throws(() => publicKeyFromSpki(bad), { message: expected }, 'with the same message');
});
