import t from 'tap';
import { createCsr } from '../../src/pki/csr.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import {
  describeSubject,
  isEmptyName,
  parseLiteralSubject,
  parseName,
  subjectToDer,
} from '../../src/pki/subject.js';
import { openssl } from './fixtures/openssl.js';

const hex = (b: ArrayBuffer): string => Buffer.from(b).toString('hex');

t.test('subjectToDer follows Go ToRDNSequence order and string types', async (t) => {
  const der = subjectToDer({
    commonName: 'leaf',
    organizations: ['org-b', 'org-a'],
    organizationalUnits: ['unit'],
    countries: ['DE'],
    provinces: ['Bavaria'],
    localities: ['Munich'],
    streetAddresses: ['1 Main St'],
    postalCodes: ['80331'],
    serialNumber: '1234',
  });
  const rdns = parseName(der);
  t.same(
    rdns.map((rdn) => rdn.map((a) => a.oid)),
    [
      ['2.5.4.6'],
      ['2.5.4.8'],
      ['2.5.4.7'],
      ['2.5.4.9'],
      ['2.5.4.17'],
      ['2.5.4.10', '2.5.4.10'],
      ['2.5.4.11'],
      ['2.5.4.3'],
      ['2.5.4.5'],
    ],
    'C, ST, L, STREET, postalCode, O (one multi-valued RDN), OU, CN, serialNumber',
  );
  // Go's encoding/asn1 sorts SET OF members by their encoding, so org-a comes first.
  t.same(
    rdns[5]?.map((a) => Buffer.from(a.value).toString()),
    ['org-a', 'org-b'],
  );
  t.ok(
    rdns.flat().every((a) => a.tag === 0x13),
    'printable values are PrintableString',
  );
  t.equal(
    describeSubject(der),
    'serialNumber=1234,CN=leaf,OU=unit,O=org-a+O=org-b,postalCode=80331,street=1 Main St,L=Munich,ST=Bavaria,C=DE',
  );
});

t.test('values Go cannot put in a PrintableString become UTF8String', async (t) => {
  const der = subjectToDer({ commonName: 'a*b', organizations: ['x&y', 'Müller', 'semi;colon'] });
  const tags = parseName(der)
    .flat()
    .map((a) => [Buffer.from(a.value).toString(), a.tag]);
  t.same(tags, [
    ['x&y', 0x0c],
    ['Müller', 0x0c],
    ['semi;colon', 0x0c],
    ['a*b', 0x0c],
  ]);
});

t.test('empty fields are omitted; nothing at all is an empty sequence', async (t) => {
  t.equal(hex(subjectToDer({})), '3000');
  t.equal(hex(subjectToDer({ commonName: '', organizations: [], serialNumber: '' })), '3000');
  t.ok(isEmptyName(subjectToDer({})));
  t.notOk(isEmptyName(subjectToDer({ commonName: 'x' })));
  // Like Go, an empty string inside a non-empty list is kept.
  t.equal(parseName(subjectToDer({ organizations: [''] })).length, 1);
  t.equal(describeSubject(subjectToDer({})), '');
});

t.test('parseLiteralSubject reverses the RFC 4514 order', async (t) => {
  const der = parseLiteralSubject('CN=foo,OU=0:a\\;1:b,O=foo.bar.com');
  t.same(
    parseName(der).map((rdn) => rdn.map((a) => [a.oid, Buffer.from(a.value).toString()])),
    [[['2.5.4.10', 'foo.bar.com']], [['2.5.4.11', '0:a;1:b']], [['2.5.4.3', 'foo']]],
  );
  t.equal(describeSubject(der), 'CN=foo,OU=0:a\\;1:b,O=foo.bar.com');
});

t.test('parseLiteralSubject: escapes, spaces, multi-valued RDNs, hex and OIDs', async (t) => {
  const cases: Array<[string, string]> = [
    ['CN=a\\,b,O=x\\+y', 'CN=a\\,b,O=x\\+y'],
    ['CN=a\\2Cb', 'CN=a\\,b'],
    ['CN=\\"q\\"', 'CN=\\"q\\"'],
    ['CN=back\\\\slash', 'CN=back\\\\slash'],
    ['CN=\\<tag\\>', 'CN=\\<tag\\>'],
    ['CN=\\#hash', 'CN=\\#hash'],
    ['CN=a\\=b', 'CN=a=b'],
    ['CN=\\ a\\ ', 'CN=\\ a\\ '],
    ['CN=a\\\\ ', 'CN=a\\\\'],
    [' CN = x , O=y ', 'CN=x,O=y'],
    ['cn=lower,o=case', 'CN=lower,O=case'],
    ['CN=caf\\C3\\A9', 'CN=café'],
    ['CN=café', 'CN=café'],
    ['CN=😀', 'CN=😀'],
    ['CN=', 'CN='],
    ['CN=a;O=b', 'CN=a,O=b'],
    ['CN=#0C03616263', 'CN=abc'],
    ['1.2.3.4=#0C0378797A', '1.2.3.4=#0C0378797A'],
    ['2.5.4.3=viaoid', 'CN=viaoid'],
    ['UID=u1,DC=example,DC=com', 'UID=u1,DC=example,DC=com'],
    ['emailAddress=a@b.c', 'emailAddress=a@b.c'],
    ['serialNumber=42,SERIALNUMBER=43', 'serialNumber=42,serialNumber=43'],
    ['STREET=s,POSTALCODE=p,ST=st,L=l,C=DE', 'street=s,postalCode=p,ST=st,L=l,C=DE'],
  ];
  for (const [input, described] of cases) {
    t.equal(describeSubject(parseLiteralSubject(input)), described, input);
  }
  const multi = parseName(parseLiteralSubject('CN=a+UID=b,O=x'));
  t.equal(multi.length, 2);
  t.same(
    multi[1]?.map((a) => a.oid),
    ['2.5.4.3', '0.9.2342.19200300.100.1.1'],
    'CN and UID share the last RDN',
  );
  t.equal(
    describeSubject(parseLiteralSubject('UID=b+CN=a')),
    'CN=a+UID=b',
    'SET members are sorted',
  );
  const email = parseName(parseLiteralSubject('emailAddress=a@b.c,DC=example'));
  t.same(
    email.flat().map((a) => a.tag),
    [0x16, 0x16],
    'emailAddress and DC are IA5String',
  );
  t.equal(hex(parseLiteralSubject('')), '3000');
  t.equal(hex(parseLiteralSubject('   ')), '3000');
});

t.test('parseLiteralSubject rejects bad input, naming the problem', async (t) => {
  const cases: Array<[string, string]> = [
    ['XX=1', 'literal subject: unknown attribute type "XX"'],
    ['CN', `literal subject: missing '=' in "CN"`],
    ['CN=a,O', `literal subject: missing '=' in "O"`],
    ['=a', 'literal subject: missing attribute type in "=a"'],
    ['CN=a,,O=b', 'literal subject: empty attribute in "CN=a,,O=b"'],
    ['CN=a,', 'literal subject: empty attribute in "CN=a,"'],
    ['CN=a+', 'literal subject: empty attribute in "CN=a+"'],
    ['CN=a\\', 'literal subject: dangling escape at the end of the value of "CN"'],
    ['CN=\\zz', 'literal subject: invalid escape "\\z" in the value of "CN"'],
    ['CN=\\C3', 'literal subject: the value of "CN" is not valid UTF-8'],
    ['CN=#123', 'literal subject: invalid hex value for "CN"'],
    ['CN=#zz', 'literal subject: invalid hex value for "CN"'],
    ['CN=#0C0561', 'literal subject: hex value for "CN" is not a single BER element'],
    ['1.2.x=a', 'literal subject: invalid attribute type "1.2.x"'],
    ['1.40.1=a', 'literal subject: invalid attribute type "1.40.1"'],
  ];
  for (const [input, message] of cases) {
    t.throws(() => parseLiteralSubject(input), { name: 'PkiError', message }, input);
  }
});

t.test('literal subjects round trip through openssl -nameopt RFC2253', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const subjects = [
    'CN=foo,OU=0:a\\;1:b,O=foo.bar.com',
    'CN=my-service,OU=team,O=Example Inc.,L=Berlin,ST=Berlin,C=DE',
    'CN=a\\,b,O=x\\+y,OU=\\"quoted\\",L=\\<angle\\>,street=back\\\\slash',
    'CN=\\#leading hash,O=\\ padded\\ ',
    'serialNumber=42,postalCode=10115,street=1 Main St,UID=user1,DC=example,DC=com',
    'emailAddress=me@example.com,CN=me',
    '1.2.3.4=#0C0378797A,CN=x',
  ];
  for (const literalSubject of subjects) {
    const csr = await createCsr({ key, literalSubject });
    const out = await openssl(
      ['req', '-in', '{csr}', '-noout', '-subject', '-nameopt', 'RFC2253'],
      { csr },
    );
    t.equal(out.replace(/\n$/, ''), `subject=${literalSubject}`, literalSubject);
  }
});

t.test('describeSubject prints non-string values and unusual string types', async (t) => {
  // SEQUENCE { SET { CN T61String "x" }, SET { CN BMPString "y" }, SET { CN UniversalString "z" },
  //            SET { CN OCTET STRING "abc" }, SET { O NumericString "1" }, SET { CN "\x01" } }
  const atv = (oid: string, tag: number, content: number[]): number[] => {
    const value = [tag, content.length, ...content];
    const body = [...oid.split(' ').map((h) => Number.parseInt(h, 16)), ...value];
    return [0x31, body.length + 2, 0x30, body.length, ...body];
  };
  const cn = '06 03 55 04 03';
  const o = '06 03 55 04 0a';
  const rdns = [
    ...atv(cn, 0x14, [0x78]),
    ...atv(cn, 0x1e, [0x00, 0x79]),
    ...atv(cn, 0x1c, [0x00, 0x00, 0x00, 0x7a]),
    ...atv(cn, 0x04, [0x61, 0x62, 0x63]),
    ...atv(o, 0x12, [0x31]),
    ...atv(cn, 0x0c, [0x01, 0x7f]),
    ...atv(cn, 0x1c, [0x7f, 0xff, 0xff, 0xff]),
  ];
  const der = Uint8Array.from([0x30, rdns.length, ...rdns]);
  t.equal(describeSubject(der), 'CN=\ufffd,CN=\\01\\7F,O=1,CN=#0403616263,CN=z,CN=y,CN=x');
});

t.test('malformed names are PkiErrors', async (t) => {
  const bad = [
    Uint8Array.from([0x31, 0x00]),
    Uint8Array.from([0x30, 0x02, 0x30, 0x00]),
    Uint8Array.from([0x30, 0x04, 0x31, 0x02, 0x30, 0x00]),
    Uint8Array.from([0x30, 0x05]),
  ];
  for (const der of bad) {
    t.throws(() => describeSubject(der), { name: 'PkiError', message: /^cannot parse name: / });
  }
});
