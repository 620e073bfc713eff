import t from 'tap';
import { readCertificateFields } from '../../src/pki/certificate-fields.js';
import {
  contextTag,
  decodeOid,
  encodeOid,
  encodeSmallInteger,
  encodeString,
  encodeTlv,
  isAscii,
  readChildren,
  readSingle,
  readTlv,
  sequence,
  setOf,
  Tag,
} from '../../src/pki/der.js';
import {
  decodeBasicConstraints,
  decodeExtensions,
  decodeExtKeyUsage,
  decodeKeyUsage,
  decodeSubjectKeyIdentifier,
  encodeBasicConstraints,
  encodeKeyUsage,
} from '../../src/pki/extensions.js';
import { decodePemBlocks, encodePem } from '../../src/pki/pem.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/ /g, ''), 'hex'));

t.test('TLV lengths: short, long, and the errors DER forbids', async (t) => {
  t.equal(hex(encodeTlv(0x04, new Uint8Array(3))), '0403000000');
  t.equal(hex(encodeTlv(0x04, new Uint8Array(200)).subarray(0, 3)), '0481c8');
  t.equal(hex(encodeTlv(0x04, new Uint8Array(300)).subarray(0, 4)), '0482012c');
  const long = encodeTlv(0x04, new Uint8Array(300));
  t.same(readSingle(long), { tag: 4, start: 0, contentStart: 4, end: 304 });
  const longer = sequence([new Uint8Array(70_000), new Uint8Array(16_777_216 - 70_000)]);
  t.equal(hex(longer.subarray(0, 5)), '3084010000', 'a four-byte length');
  t.same(readSingle(longer), { tag: 0x30, start: 0, contentStart: 6, end: 16_777_222 });
  t.equal(hex(encodeTlv(0x04, new Uint8Array(70_000)).subarray(0, 5)), '0483011170');
  const errors: Array<[string, RegExp]> = [
    ['04', /truncated element/],
    ['0480', /indefinite length/],
    ['0485ffffffffff', /bad length/],
    ['0482', /bad length/],
    [`04817f${'00'.repeat(127)}`, /non-minimal length/],
    ['0482000100', /non-minimal length/],
    ['040500', /length exceeds data/],
    ['1f0100', /multi-byte tags/],
    ['04000000', /trailing data/],
  ];
  for (const [input, message] of errors) {
    t.throws(() => readSingle(bytes(input)), { name: 'PkiError', message }, input);
  }
  const seq = bytes('3006 0401aa 0401bb');
  t.same(
    readChildren(seq, readTlv(seq, 0)).map((c) => c.start),
    [2, 5],
  );
});

t.test('object identifiers', async (t) => {
  const cases: Array<[string, string]> = [
    ['2.5.4.3', '0603550403'],
    ['1.2.840.113549.1.9.14', '06092a864886f70d01090e'],
    ['0.9.2342.19200300.100.1.25', '060a0992268993f22c640119'],
    ['2.999.3', '0603883703'],
    ['1.3.6.1.4.1.311.10.3.3', '060a2b0601040182370a0303'],
    // Arcs of 7 bytes (2^49 - 1) and 8 bytes (2^49, 2^64): read as numbers, then as BigInts.
    ['1.2.562949953421311', '06082affffffffffff7f'],
    ['1.2.562949953421312', '06092a8180808080808000'],
    ['1.2.18446744073709551616', '060b2a82808080808080808000'],
    ['2.18446744073709551696', '060a82808080808080808120'],
  ];
  for (const [dotted, der] of cases) {
    t.equal(hex(encodeOid(dotted)), der, dotted);
    t.equal(decodeOid(bytes(der).subarray(2)), dotted);
  }
  // Remembered encodings are handed out as copies: a caller writing one spoils no other.
  const first = encodeOid('2.5.4.3');
  first.fill(0);
  t.equal(hex(encodeOid('2.5.4.3')), '0603550403', 'a second encoding, intact');
  t.not(encodeOid('2.5.4.3'), encodeOid('2.5.4.3'), 'a new array each time');
  for (const bad of ['', '1', '3.1', '1.40', '1.2.', '1.02', 'a.b']) {
    t.throws(() => encodeOid(bad), {
      name: 'PkiError',
      message: `invalid object identifier "${bad}"`,
    });
  }
  t.throws(() => decodeOid(bytes('8001')), { message: /non-minimal object identifier/ });
  t.throws(() => decodeOid(bytes('2a86')), { message: /truncated object identifier/ });
  t.throws(() => decodeOid(bytes('2a8180808080808080')), {
    message: /truncated object identifier/,
  });
  t.throws(() => decodeOid(bytes('2a81808080808080800080')), { message: /non-minimal/ });
  t.throws(() => decodeOid(new Uint8Array()), { message: /truncated object identifier/ });
});

t.test('small non-negative INTEGERs: minimal, with a 0x00 when the top bit is set', async (t) => {
  const hex = (n: number) => Buffer.from(encodeSmallInteger(n)).toString('hex');
  t.equal(hex(0), '020100');
  t.equal(hex(3), '020103');
  t.equal(hex(127), '02017f');
  t.equal(hex(128), '02020080');
  t.equal(hex(2048), '02020800');
  t.equal(hex(65535), '020300ffff');
  for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
    t.throws(() => encodeSmallInteger(bad), { name: 'PkiError', message: /non-negative INTEGER/ });
  }
});

t.test('SET OF is sorted by encoding; duplicates stay', async (t) => {
  const a = encodeString(Tag.UTF8_STRING, 'a');
  const b = encodeString(Tag.UTF8_STRING, 'bb');
  t.equal(hex(setOf([b, a, a])), `310a${hex(a)}${hex(a)}${hex(b)}`);
  t.equal(hex(sequence([])), '3000');
  t.equal(hex(contextTag(2, bytes('61'), false)), '820161');
  t.equal(hex(contextTag(0, bytes('0500'), true)), 'a0020500');
  t.ok(isAscii('plain ascii ~'));
  t.notOk(isAscii('é'));
});

t.test('PEM encoding uses 64-character lines', async (t) => {
  const der = new Uint8Array(100).fill(7);
  const pem = encodePem('TEST', der);
  const lines = pem.trimEnd().split('\n');
  t.equal(lines[0], '-----BEGIN TEST-----');
  t.equal(lines[1]?.length, 64);
  t.equal(lines.at(-1), '-----END TEST-----');
  t.same(decodePemBlocks(pem), [{ label: 'TEST', der }]);
  t.same(decodePemBlocks(pem.replace(/\n/g, '\r\n')), [{ label: 'TEST', der }], 'CRLF line ends');
  t.equal(encodePem('EMPTY', new Uint8Array()), '-----BEGIN EMPTY-----\n-----END EMPTY-----\n');
  t.throws(() => decodePemBlocks('-----BEGIN X-----\nAAA\n-----END X-----\n'), {
    message: /not valid base64/,
  });
});

t.test('extension values', async (t) => {
  t.equal(hex(encodeKeyUsage(0)), '030100');
  t.equal(hex(encodeKeyUsage(1)), '03020780', 'digitalSignature: 7 unused bits');
  t.equal(hex(encodeKeyUsage(1 | 4)), '030205a0', 'digitalSignature|keyEncipherment, like Go');
  t.equal(hex(encodeKeyUsage(32 | 64)), '03020106');
  t.equal(hex(encodeKeyUsage(256)), '0303070080', 'decipherOnly needs a second byte');
  for (const flags of [1, 5, 97, 255, 256, 511])
    t.equal(decodeKeyUsage(encodeKeyUsage(flags)), flags);
  t.throws(() => decodeKeyUsage(bytes('0400')), { message: /expected key usage bit string/ });
  t.equal(hex(encodeBasicConstraints(false)), '3000');
  t.equal(hex(encodeBasicConstraints(true)), '30030101ff');
  t.same(decodeBasicConstraints(bytes('3000')), { isCA: false });
  t.same(decodeBasicConstraints(bytes('30060101ff020100')), { isCA: true });
  t.same(decodeBasicConstraints(bytes('3003020101')), { isCA: false }, 'pathLen alone is not cA');
  t.throws(() => decodeBasicConstraints(bytes('3100')), { message: /expected basic constraints/ });
  t.throws(() => decodeExtKeyUsage(bytes('30020500')), { message: /expected key purpose OID/ });
  t.throws(() => decodeSubjectKeyIdentifier(bytes('0500')), { message: /expected key identifier/ });
  t.same(Array.from(decodeSubjectKeyIdentifier(bytes('0402abcd'))), [0xab, 0xcd]);

  const list = (...exts: string[]) => {
    const buf = bytes(
      `30${(exts.join('').length / 2).toString(16).padStart(2, '0')}${exts.join('')}`,
    );
    return decodeExtensions(buf, readSingle(buf));
  };
  const ok = list(
    '3008 0603551d0f 04010a'.replace(/ /g, ''),
    '300c 0603551d13 0101ff 04023000'.replace(/ /g, ''),
  );
  t.same([...ok.keys()], ['2.5.29.15', '2.5.29.19']);
  t.equal(ok.get('2.5.29.15')?.critical, false);
  t.equal(ok.get('2.5.29.19')?.critical, true);
  t.equal(list('300c0603551d1301010004023000').get('2.5.29.19')?.critical, false, 'explicit FALSE');
  const bad = [
    '30060500 04023000'.replace(/ /g, ''),
    '3007 0603551d13 0500'.replace(/ /g, ''),
    '300c 0603551d13 020101 04023000'.replace(/ /g, ''),
    '3010 0603551d13 0101ff 04023000 04023000'.replace(/ /g, ''),
  ];
  for (const e of bad) t.throws(() => list(e), { name: 'PkiError', message: /bad extension/ }, e);
  t.throws(
    () =>
      list('30080603550403 0401aa'.replace(/ /g, ''), '30080603550403 0401bb'.replace(/ /g, '')),
    {
      message: 'duplicate extension 2.5.4.3',
    },
  );
});

// A synthetic certificate: fields only, no valid signature (readCertificateFields does not verify).
function cert(tbsFields: Uint8Array[]): Uint8Array {
  const algo = sequence([encodeOid('1.2.840.10045.4.3.2')]);
  return sequence([sequence(tbsFields), algo, encodeTlv(Tag.BIT_STRING, bytes('00'))]);
}
const name = (cn: string) =>
  sequence([setOf([sequence([encodeOid('2.5.4.3'), encodeString(Tag.UTF8_STRING, cn)])])]);
const time = (tag: number, s: string) => encodeTlv(tag, new TextEncoder().encode(s));
const spki = sequence([
  sequence([encodeOid('1.3.101.112')]),
  encodeTlv(Tag.BIT_STRING, bytes('00')),
]);
const serial = encodeTlv(Tag.INTEGER, bytes('01'));
const algo = sequence([encodeOid('1.3.101.112')]);

t.test('certificate fields from synthetic certificates', async (t) => {
  const v1 = cert([
    serial,
    algo,
    name('issuer'),
    sequence([time(Tag.UTC_TIME, '491231235959Z'), time(Tag.UTC_TIME, '500101000000Z')]),
    name('subject'),
    spki,
  ]);
  const f = readCertificateFields(v1);
  t.same(f.notBefore, new Date('2049-12-31T23:59:59Z'), 'UTCTime 49 is 2049');
  t.same(f.notAfter, new Date('1950-01-01T00:00:00Z'), 'UTCTime 50 is 1950');
  t.equal(f.extensions.size, 0, 'v1: no version, no extensions');
  t.equal(hex(f.issuerDer), hex(name('issuer')));
  t.equal(hex(f.subjectDer), hex(name('subject')));

  const v3 = cert([
    contextTag(0, encodeTlv(Tag.INTEGER, bytes('02')), true),
    serial,
    algo,
    name('i'),
    sequence([
      time(Tag.GENERALIZED_TIME, '20500101000000Z'),
      time(Tag.GENERALIZED_TIME, '99991231235959Z'),
    ]),
    name('s'),
    spki,
    contextTag(1, bytes('00'), false),
    contextTag(
      3,
      sequence([sequence([encodeOid('2.5.29.19'), encodeTlv(Tag.OCTET_STRING, bytes('3000'))])]),
      true,
    ),
  ]);
  const g = readCertificateFields(v3);
  t.same(g.notAfter, new Date('9999-12-31T23:59:59Z'));
  t.same([...g.extensions.keys()], ['2.5.29.19']);

  const broken: Array<[Uint8Array, RegExp]> = [
    [sequence([]), /missing TBSCertificate/],
    [cert([serial, algo, name('i')]), /short TBSCertificate/],
    [
      cert([
        serial,
        algo,
        name('i'),
        sequence([time(Tag.UTC_TIME, '500101000000Z')]),
        name('s'),
        spki,
      ]),
      /bad validity$/,
    ],
    [
      cert([
        serial,
        algo,
        name('i'),
        sequence([time(Tag.UTC_TIME, '5001010000Z'), time(Tag.UTC_TIME, '500101000000Z')]),
        name('s'),
        spki,
      ]),
      /bad validity time/,
    ],
    [
      cert([
        serial,
        algo,
        name('i'),
        sequence([time(Tag.UTF8_STRING, '500101000000Z'), time(Tag.UTC_TIME, '500101000000Z')]),
        name('s'),
        spki,
      ]),
      /bad validity time/,
    ],
    [
      cert([
        serial,
        algo,
        name('i'),
        sequence([
          time(Tag.GENERALIZED_TIME, '500101000000Z'),
          time(Tag.UTC_TIME, '500101000000Z'),
        ]),
        name('s'),
        spki,
      ]),
      /bad validity time/,
    ],
  ];
  for (const [der, message] of broken) {
    t.throws(() => readCertificateFields(der), {
      name: 'PkiError',
      message: new RegExp(`^cannot parse certificate: .*${message.source}`),
    });
  }
});
