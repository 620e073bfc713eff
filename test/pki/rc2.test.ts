import { randomBytes } from 'node:crypto';
import t from 'tap';
import { rc2CbcEncrypt, rc2EncryptBlock } from '../../src/pki/rc2.js';
import { openssl } from './fixtures/openssl.js';

const hex = (text: string) => Buffer.from(text, 'hex');

// RFC 2268 section 5: key, effective key bits, plaintext, ciphertext. Its vectors with 63 and 129
// effective bits are left out: forge's RC2 is right only for multiples of 8 (see rc2.ts).
const RFC2268: Array<[string, number, string, string]> = [
  ['ffffffffffffffff', 64, 'ffffffffffffffff', '278b27e42e2f0d49'],
  ['3000000000000000', 64, '1000000000000001', '30649edf9be7d2c2'],
  ['88', 64, '0000000000000000', '61a8a244adacccf0'],
  ['88bca90e90875a', 64, '0000000000000000', '6ccf4308974c267f'],
  ['88bca90e90875a7f0f79c384627bafb2', 64, '0000000000000000', '1a807d272bbe5db1'],
  ['88bca90e90875a7f0f79c384627bafb2', 128, '0000000000000000', '2269552ab0f85ca6'],
];

t.test('RFC 2268 test vectors', async (t) => {
  for (const [key, bits, plaintext, ciphertext] of RFC2268) {
    const out = rc2EncryptBlock(hex(key), bits, hex(plaintext));
    t.equal(out.toString('hex'), ciphertext, `${key.length / 2}-byte key, ${bits} bits`);
  }
});

t.test('CBC with a zero IV on one block is the block cipher plus a padding block', async (t) => {
  const key = hex('88bca90e90875a7f0f79c384627bafb2');
  const out = rc2CbcEncrypt(key, 128, Buffer.alloc(8), Buffer.alloc(8));
  t.equal(out.length, 16, 'a whole block of padding follows an aligned plaintext');
  t.equal(out.subarray(0, 8).toString('hex'), '2269552ab0f85ca6', 'RFC 2268 vector 7');
});

t.test('RC2-40-CBC matches OpenSSL (legacy provider), the cipher PKCS#12 uses', async (t) => {
  const probe = await openssl(['list', '-cipher-algorithms', '-provider', 'legacy']).then(
    (out) => /RC2/i.test(out),
    () => false,
  );
  if (!probe) {
    t.pass('matches OpenSSL', { skip: "skipped: OpenSSL's legacy provider is not available" });
    return;
  }
  // Random keys run most of PITABLE through the key schedule; lengths cover 0-2 padding cases.
  for (const length of [0, 1, 7, 8, 9, 31, 100]) {
    const key = randomBytes(5);
    const iv = randomBytes(8);
    const plaintext = randomBytes(length).toString('hex').slice(0, length);
    const expected = await openssl(
      [
        'enc',
        '-rc2-40-cbc',
        '-provider',
        'legacy',
        '-provider',
        'default',
        '-K',
        key.toString('hex'),
        '-iv',
        iv.toString('hex'),
        '-a',
        '-A',
        '-in',
        '{plain}',
      ],
      { plain: plaintext },
    );
    const ours = rc2CbcEncrypt(key, 40, iv, Buffer.from(plaintext)).toString('base64');
    t.equal(ours, expected.trim(), `${length}-byte plaintext`);
  }
});

t.test('bad keys, effective bits, IVs and blocks are refused by name', async (t) => {
  const block = new Uint8Array(8);
  const bits = (n: number) =>
    `RC2 effective key bits must be a multiple of 8 from 8 to 1024, got ${n}`;
  const cases: Array<[() => unknown, string]> = [
    [() => rc2EncryptBlock(new Uint8Array(0), 40, block), 'RC2 key must be 1 to 128 bytes, got 0'],
    [
      () => rc2EncryptBlock(new Uint8Array(129), 40, block),
      'RC2 key must be 1 to 128 bytes, got 129',
    ],
    [() => rc2EncryptBlock(new Uint8Array(5), 0, block), bits(0)],
    [() => rc2EncryptBlock(new Uint8Array(5), 1032, block), bits(1032)],
    // RFC 2268's 63- and 129-bit vectors: refused, not encrypted wrongly.
    [() => rc2EncryptBlock(new Uint8Array(8), 63, block), bits(63)],
    [() => rc2CbcEncrypt(new Uint8Array(33), 129, new Uint8Array(8), block), bits(129)],
    [() => rc2EncryptBlock(new Uint8Array(5), 40.5, block), bits(40.5)],
    [
      () => rc2EncryptBlock(new Uint8Array(5), 40, new Uint8Array(7)),
      'RC2 block must be 8 bytes, got 7',
    ],
    [
      () => rc2CbcEncrypt(new Uint8Array(5), 40, new Uint8Array(16), new Uint8Array(8)),
      'RC2 IV must be 8 bytes, got 16',
    ],
  ];
  for (const [run, message] of cases) t.throws(run, { name: 'PkiError', message });
});
