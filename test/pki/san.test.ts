import t from 'tap';
import {
  canonicalIpAddress,
  decodeOtherNames,
  decodeSubjectAltNames,
  encodeSubjectAltNames,
  formatIpAddress,
  hasSubjectAltNames,
  ipAddressBytes,
  sameIpAddresses,
  validateUri,
} from '../../src/pki/san.js';

const hex = (b: Uint8Array | ArrayBuffer): string => Buffer.from(new Uint8Array(b)).toString('hex');

t.test('IP addresses: IPv4, IPv6, IPv4-mapped IPv6', async (t) => {
  t.equal(hex(ipAddressBytes('10.0.0.1')), '0a000001');
  t.equal(hex(ipAddressBytes('::1')), '00000000000000000000000000000001');
  t.equal(hex(ipAddressBytes('fd00::7')), 'fd000000000000000000000000000007');
  t.equal(hex(ipAddressBytes('2001:db8::1:0:0:1')), '20010db8000000000001000000000001');
  t.equal(hex(ipAddressBytes('1::')), '00010000000000000000000000000000');
  t.equal(hex(ipAddressBytes('::')), '00000000000000000000000000000000');
  // Go's To4 turns IPv4-mapped addresses into 4 bytes.
  t.equal(hex(ipAddressBytes('::ffff:1.2.3.4')), '01020304');
  t.equal(hex(ipAddressBytes('::1.2.3.4')), '00000000000000000000000001020304');
  const canon: Array<[string, string]> = [
    ['FD00:0:0:0:0:0:0:7', 'fd00::7'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['192.168.0.1', '192.168.0.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2:3:4:5:6'],
  ];
  for (const [input, out] of canon) t.equal(canonicalIpAddress(input), out, input);
  for (const bad of [
    '',
    'x',
    '1.2.3',
    '01.2.3.4',
    '256.0.0.1',
    '1.2.3.4.5',
    'fe80::1%eth0',
    ':::',
    '1.2.3.4 ',
  ]) {
    t.throws(() => ipAddressBytes(bad), {
      name: 'PkiError',
      message: `invalid IP address "${bad}"`,
    });
  }
  t.throws(() => formatIpAddress(Uint8Array.of(1, 2, 3)), {
    message: 'invalid IP address length 3',
  });
});

t.test('URIs need a scheme and printable ASCII', async (t) => {
  for (const ok of [
    'spiffe://cluster.local/ns/default/sa/app',
    'https://a.example/x?y=1',
    'urn:uuid:1234',
    'mailto:a@b.c',
    'http://a/%20',
  ]) {
    t.doesNotThrow(() => validateUri(ok), ok);
  }
  for (const bad of [
    '',
    'foo',
    '/absolute/path',
    '//host/x',
    '1http://x',
    'http://a b',
    'http:',
    'spiffe://ü',
    'http://a/%zz',
    'http://[::1/',
  ]) {
    t.throws(() => validateUri(bad), { name: 'PkiError', message: `invalid URI "${bad}"` }, bad);
  }
});

t.test('SAN extension encodes in Go order and decodes back', async (t) => {
  const sans = {
    dnsNames: ['a.example', '*.b.example'],
    ipAddresses: ['10.0.0.1', 'fd00::7'],
    uris: ['spiffe://td/x'],
    emailAddresses: ['me@example.com'],
  };
  const der = encodeSubjectAltNames(sans);
  const tags = [];
  const buf = new Uint8Array(der);
  for (let i = 2; i < buf.length; i += 2 + (buf[i + 1] ?? 0)) tags.push(buf[i]);
  t.same(tags, [0x82, 0x82, 0x81, 0x87, 0x87, 0x86], 'DNS, email, IP, URI');
  t.same(decodeSubjectAltNames(der), sans);
  t.equal(hex(encodeSubjectAltNames({})), '3000');
  t.ok(hasSubjectAltNames({ uris: ['x:y'] }));
  t.notOk(hasSubjectAltNames({ dnsNames: [], ipAddresses: [] }));
  t.throws(() => encodeSubjectAltNames({ dnsNames: ['bücher.example'] }), {
    name: 'PkiError',
    message: 'invalid DNS name "bücher.example": not ASCII',
  });
  t.throws(() => encodeSubjectAltNames({ emailAddresses: ['ü@x'] }), {
    message: /invalid email address/,
  });
  t.throws(() => encodeSubjectAltNames({ uris: ['nope'] }), { message: 'invalid URI "nope"' });
  t.throws(() => encodeSubjectAltNames({ ipAddresses: ['nope'] }), {
    message: 'invalid IP address "nope"',
  });
});

t.test('names of other kinds are skipped when decoding', async (t) => {
  // SEQUENCE { [0] otherName {...}, [4] directoryName { SEQUENCE {} }, [2] "a" }
  const der = Uint8Array.from([
    0x30, 0x13, 0xa0, 0x0a, 0x06, 0x03, 0x2a, 0x03, 0x04, 0xa0, 0x03, 0x0c, 0x01, 0x78, 0xa4, 0x02,
    0x30, 0x00, 0x82, 0x01, 0x61,
  ]);
  t.same(decodeSubjectAltNames(der), {
    dnsNames: ['a'],
    ipAddresses: [],
    uris: [],
    emailAddresses: [],
  });
});

t.test(
  'otherNames are encoded after the other SANs and decoded with their UTF-8 values',
  async (t) => {
    const der = encodeSubjectAltNames({
      uris: ['spiffe://a/b'],
      otherNames: [
        { oid: '1.2.3.4', utf8Value: 'x' },
        { oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'ü' },
      ],
    });
    // [6] URI, then [0] { OID 1.2.3.4, [0] { UTF8String "x" } }, then the UPN.
    t.equal(hex(der).slice(4, 32), `860c${Buffer.from('spiffe://a/b').toString('hex')}`);
    t.equal(
      hex(der).slice(32, 56),
      'a00a06032a0304a0030c0178',
      'otherName 1.2.3.4 = UTF8String "x"',
    );
    t.same(decodeOtherNames(der), [
      { oid: '1.2.3.4', utf8Value: 'x' },
      { oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'ü' },
    ]);
    t.same(decodeSubjectAltNames(der).uris, ['spiffe://a/b'], 'the other kinds still decode');
    t.ok(hasSubjectAltNames({ otherNames: [{ oid: '1.2.3', utf8Value: 'v' }] }));
    t.notOk(hasSubjectAltNames({ otherNames: [] }));
    t.throws(() => encodeSubjectAltNames({ otherNames: [{ oid: '1', utf8Value: 'v' }] }), {
      message: 'invalid object identifier "1"',
    });
  },
);

t.test('otherName values of other types, and malformed otherNames', async (t) => {
  // SEQUENCE { [0] { OID 1.2.3.4, [0] { IA5String "x" } }, [0] { ..., [0] { UTF8String c3 28 } } }
  const other = Uint8Array.from([
    0x30, 0x19, 0xa0, 0x0a, 0x06, 0x03, 0x2a, 0x03, 0x04, 0xa0, 0x03, 0x16, 0x01, 0x78, 0xa0, 0x0b,
    0x06, 0x03, 0x2a, 0x03, 0x04, 0xa0, 0x04, 0x0c, 0x02, 0xc3, 0x28,
  ]);
  t.same(decodeOtherNames(other), [
    { oid: '1.2.3.4', utf8Value: undefined },
    { oid: '1.2.3.4', utf8Value: undefined },
  ]);
  const malformed: Array<[string, number[]]> = [
    ['no value', [0x30, 0x07, 0xa0, 0x05, 0x06, 0x03, 0x2a, 0x03, 0x04]],
    ['an empty value', [0x30, 0x09, 0xa0, 0x07, 0x06, 0x03, 0x2a, 0x03, 0x04, 0xa0, 0x00]],
    [
      'two values',
      [0x30, 0x0d, 0xa0, 0x0b, 0x06, 0x03, 0x2a, 0x03, 0x04, 0xa0, 0x04, 0x0c, 0x00, 0x0c, 0x00],
    ],
  ];
  for (const [name, bytes] of malformed)
    t.throws(() => decodeOtherNames(Uint8Array.from(bytes)), { message: /malformed DER/ }, name);
});

t.test('sameIpAddresses: the same addresses in any order, however each is spelled', async (t) => {
  const cases: Array<[string[] | undefined, string[] | undefined, boolean]> = [
    [undefined, [], true],
    [['::'], undefined, false],
    [[], undefined, true],
    [['10.0.0.1', '::1'], ['0:0::1', '10.0.0.1'], true],
    [['fd00::7'], ['FD00:0:0:0:0:0:0:7'], true],
    [['10.0.0.1'], ['10.0.0.2'], false],
    [['10.0.0.1', '10.0.0.1'], ['10.0.0.1'], false],
    [['not-an-ip'], ['not-an-ip'], true],
    [['not-an-ip'], ['10.0.0.1'], false],
  ];
  for (const [a, b, same] of cases) {
    t.equal(sameIpAddresses(a, b), same, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
});
