import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Pkcs12KeyPurpose, pkcs12Kdf, pkcs12Password } from '../../src/pki/pkcs12-kdf.js';
import { openssl } from './fixtures/openssl.js';

const hex = (text: string) => Buffer.from(text, 'hex');

t.test('pkcs12Password is a NUL-terminated BMPString of UTF-16 code units', async (t) => {
  t.equal(pkcs12Password('').toString('hex'), '0000');
  t.equal(pkcs12Password('ab').toString('hex'), '006100620000');
  t.equal(pkcs12Password('€').toString('hex'), '20ac0000');
  // Outside the BMP: a surrogate pair, as OpenSSL and Java encode it.
  t.equal(pkcs12Password('😀').toString('hex'), 'd83dde000000');
});

t.test(
  'known answers (go-pkcs12 pbkdf_test.go, also what openssl kdf PKCS12KDF gives)',
  async (t) => {
    const sesame = pkcs12Kdf(
      'sha1',
      pkcs12Password('sesame'),
      hex('ffffffffffffffff'),
      2048,
      1,
      24,
    );
    t.equal(sesame.toString('hex'), '7cd9fd3e2b3be7691a44e3bef0f9ea0fb9b897d4e325d9d1');
    // I_j + B + 1 can leave a leading zero byte; the sum must stay a full block.
    const zeros = pkcs12Kdf('sha1', hex('0000'), hex('f37e05b518324b4b'), 2048, 1, 24);
    t.equal(zeros.toString('hex'), '00f759ff47d14dd03665d5943cb3c4a39a2555c02aed66e1');
  },
);

t.test('matches openssl kdf PKCS12KDF for SHA-1 and SHA-256, every purpose', async (t) => {
  const cases: Array<['sha1' | 'sha256', string, number, number, number, number]> = [
    // hash, password, salt bytes, iterations, purpose, length
    ['sha1', 'changeit', 8, 2048, Pkcs12KeyPurpose.IV, 8],
    ['sha1', 'changeit', 8, 1, Pkcs12KeyPurpose.MAC, 20],
    ['sha1', '', 8, 3, Pkcs12KeyPurpose.KEY, 5],
    ['sha256', 'pässwörd €', 16, 2048, Pkcs12KeyPurpose.MAC, 32],
    // Password and salt longer than one 64-byte block, output longer than one hash.
    ['sha256', 'x'.repeat(40), 70, 2, Pkcs12KeyPurpose.KEY, 80],
  ];
  for (const [hash, password, saltLength, iterations, id, length] of cases) {
    const secret = pkcs12Password(password);
    const salt = randomBytes(saltLength);
    const expected = await openssl([
      'kdf',
      '-keylen',
      String(length),
      '-kdfopt',
      `digest:${hash.toUpperCase()}`,
      '-kdfopt',
      `hexpass:${secret.toString('hex')}`,
      '-kdfopt',
      `hexsalt:${salt.toString('hex')}`,
      '-kdfopt',
      `iter:${iterations}`,
      '-kdfopt',
      `id:${id}`,
      'PKCS12KDF',
    ]);
    const ours = pkcs12Kdf(hash, secret, salt, iterations, id, length);
    t.equal(
      ours.toString('hex'),
      expected.trim().replaceAll(':', '').toLowerCase(),
      `${hash} id ${id}, ${length} bytes`,
    );
  }
});

t.test('bad iteration counts and purposes are refused', async (t) => {
  const secret = pkcs12Password('p');
  t.throws(() => pkcs12Kdf('sha1', secret, hex('00'), 0, 1, 8), {
    name: 'PkiError',
    message: 'PKCS#12 KDF iterations must be a positive integer, got 0',
  });
  t.throws(() => pkcs12Kdf('sha1', secret, hex('00'), 1, 256, 8), {
    message: 'PKCS#12 KDF purpose must be a byte, got 256',
  });
});
