import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import { nameValueProblem } from '../../src/pki/readable-name.js';
import { nameProblem, parseLiteralSubject } from '../../src/pki/subject.js';
import { certificateWithSubject, oneAttributeName } from '../support/raw-name-fixtures.js';
import { openssl } from './fixtures/openssl.js';

const STRING_TYPES = 'UTF8String, PrintableString, IA5String, NumericString, T61String, BMPString';
const notAString = (what: string) =>
  `${what}, not a string type every certificate reader accepts (${STRING_TYPES})`;
const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));

// The rule, value by value: [tag, content hex, problem or undefined].
const VALUES: Array<[number, string, string | undefined]> = [
  [0x0c, '616263', undefined],
  [0x0c, 'c3a9f09f9880', undefined],
  [0x0c, '', undefined],
  [0x0c, 'c328', 'a UTF8String that is not valid UTF-8'],
  [0x0c, 'eda080', 'a UTF8String that is not valid UTF-8'],
  [0x0c, 'c080', 'a UTF8String that is not valid UTF-8'],
  [0x13, '41207a2027282b2c2d2e2f3a3d3f', undefined],
  [0x13, '2a26', undefined],
  [0x13, '40', 'a PrintableString with "@", which it cannot hold'],
  [0x13, '615f', 'a PrintableString with "_", which it cannot hold'],
  [0x13, 'ff', 'a PrintableString with the byte 0xff, which it cannot hold'],
  [0x13, '0a', 'a PrintableString with the byte 0xa, which it cannot hold'],
  [0x16, '6140622e63', undefined],
  [0x16, 'c3a9', 'an IA5String with the non-ASCII byte 0xc3'],
  [0x12, '303132332039', undefined],
  [0x12, '3161', 'a NumericString with "a" (digits and spaces only)'],
  [0x14, '80ff00', undefined],
  [0x1e, '00610062', undefined],
  [0x1e, '0061', undefined],
  [0x1e, '61', 'a BMPString of odd length (1)'],
  [0x1e, 'd800', 'a BMPString holding the UTF-16 surrogate U+D800'],
  [0x1e, '0061dfff', 'a BMPString holding the UTF-16 surrogate U+DFFF'],
  [0x01, 'ff', notAString('a BOOLEAN')],
  [0x02, '01', notAString('an INTEGER')],
  [0x03, '00', notAString('a BIT STRING')],
  [0x04, '61', notAString('an OCTET STRING')],
  [0x05, '', notAString('a NULL')],
  [0x06, '550403', notAString('an OBJECT IDENTIFIER')],
  [0x17, '', notAString('a UTCTime')],
  [0x18, '', notAString('a GeneralizedTime')],
  [0x1a, '61', notAString('a VisibleString')],
  [0x1c, '00000061', notAString('a UniversalString')],
  [0x30, '', notAString('a SEQUENCE')],
  [0x31, '', notAString('a SET')],
  [0x2c, '0c0161', notAString('a value of tag 0x2c (constructed)')],
  [0x07, '61', notAString('a value of tag 0x07')],
  [0x80, '61', notAString('a value of tag 0x80')],
];

t.test('the value rule, type by type', async (t) => {
  for (const [tag, content, problem] of VALUES) {
    t.equal(nameValueProblem(tag, bytes(content)), problem, `0x${tag.toString(16)} ${content}`);
  }
});

t.test('every value the rule accepts makes a certificate Node and openssl read', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  for (const [tag, content, problem] of VALUES) {
    if (problem !== undefined) continue;
    const length = content.length / 2;
    const value = `${tag.toString(16).padStart(2, '0')}${length.toString(16).padStart(2, '0')}${content}`;
    const subjectDer = oneAttributeName(value);
    const pem = await signCertificate(
      { subjectDer, publicKey: key },
      { durationMs: 3_600_000, isCA: false, usages: [] },
      { selfSigned: key },
    );
    t.ok(new X509Certificate(pem), `${value}: Node reads it`);
    t.match(await openssl(['x509', '-in', '{c}', '-noout', '-subject'], { c: pem }), /^subject=/);
  }
});

// The class of issue 23: values that went through publish, were signed, and then made
// `unreadable certificate` on every retry.
t.test('the values of the report are refused by the literal subject parser', async (t) => {
  const cases: Array<[string, string]> = [
    ['1.2.3=#0101ff', `the hex value for "1.2.3" is ${notAString('a BOOLEAN')}`],
    ['CN=#0101ff', `the hex value for "CN" is ${notAString('a BOOLEAN')}`],
    ['UID=#0101ff', `the hex value for "UID" is ${notAString('a BOOLEAN')}`],
    ['1.2.3=#0500', `the hex value for "1.2.3" is ${notAString('a NULL')}`],
    ['CN=#020101', `the hex value for "CN" is ${notAString('an INTEGER')}`],
    ['O=#0603550403', `the hex value for "O" is ${notAString('an OBJECT IDENTIFIER')}`],
    ['CN=#3003020101', `the hex value for "CN" is ${notAString('a SEQUENCE')}`],
    ['CN=ok,O=#1a0161', `the hex value for "O" is ${notAString('a VisibleString')}`],
    ['CN=#130140', 'the hex value for "CN" is a PrintableString with "@", which it cannot hold'],
    ['CN=#0c02c328', 'the hex value for "CN" is a UTF8String that is not valid UTF-8'],
    ['DC=#1602c3a9', 'the hex value for "DC" is an IA5String with the non-ASCII byte 0xc3'],
    ['CN=#1e0161', 'the hex value for "CN" is a BMPString of odd length (1)'],
    ['CN=#1e02d800', 'the hex value for "CN" is a BMPString holding the UTF-16 surrogate U+D800'],
    ['CN=#0c03616263+UID=#0500', `the hex value for "UID" is ${notAString('a NULL')}`],
    // Truncated, odd, overlong and trailing hex stay refused as before.
    ['CN=#0c', 'hex value for "CN" is not a single BER element'],
    ['CN=#0c0561', 'hex value for "CN" is not a single BER element'],
    ['CN=#0c8103616263', 'hex value for "CN" is not a single BER element'],
    ['CN=#0c84ffffffff61', 'hex value for "CN" is not a single BER element'],
    ['CN=#0c016161', 'hex value for "CN" is not a single BER element'],
    ['CN=#0c016', 'invalid hex value for "CN"'],
    ['CN=#', 'invalid hex value for "CN"'],
  ];
  for (const [input, message] of cases) {
    t.throws(
      () => parseLiteralSubject(input),
      { name: 'PkiError', message: `literal subject: ${message}` },
      input,
    );
  }
  for (const ok of ['CN=#0c03616263', 'CN=#13012a', 'UID=#1401ff', '1.2.3=#1e020061']) {
    t.doesNotThrow(() => parseLiteralSubject(ok), `${ok}: a string every reader takes`);
  }
});

t.test('the certificate readers refuse what the rule refuses', async (t) => {
  // Made without our checks: Node (OpenSSL) cannot read these; Go's x509 refuses every
  // non-string type as well ("unsupported string type").
  for (const value of ['0101ff', '0500', '020101', '0603550403', '1a0161', '1e02d800']) {
    const { pem } = await certificateWithSubject(oneAttributeName(value));
    t.throws(() => new X509Certificate(pem), `${value}: Node cannot read the certificate`);
  }
});

t.test('nameProblem names the first bad attribute; signing refuses it', async (t) => {
  t.equal(nameProblem(parseLiteralSubject('CN=a,O=b')), undefined);
  t.equal(nameProblem(oneAttributeName('0101ff')), `the value of CN is ${notAString('a BOOLEAN')}`);
  t.equal(
    nameProblem(oneAttributeName('130140', '06032a0304')),
    'the value of 1.2.3.4 is a PrintableString with "@", which it cannot hold',
    'an unknown type by its OID',
  );
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  await t.rejects(
    signCertificate(
      { subjectDer: oneAttributeName('0500'), publicKey: key },
      { durationMs: 3_600_000, isCA: false, usages: [] },
      { selfSigned: key },
    ),
    {
      name: 'PkiError',
      message: `the subject cannot be put in a certificate: the value of CN is ${notAString('a NULL')}`,
    },
  );
  t.ok(await createSelfSignedCa({ key, commonName: 'ca', durationMs: 60_000 }), 'a CA still signs');
});
