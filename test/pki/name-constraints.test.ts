import t from 'tap';
import { cidrBytes, encodeNameConstraints } from '../../src/pki/name-constraints.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

t.test('cidrBytes: masked address then mask, as Go parses a CIDR', async (t) => {
  const cases: Array<[string, string]> = [
    ['10.0.0.0/8', '0a000000ff000000'],
    ['10.1.2.3/8', '0a000000ff000000'],
    ['192.168.7.255/23', 'c0a80600fffffe00'],
    ['0.0.0.0/0', '0000000000000000'],
    ['10.0.0.1/32', '0a000001ffffffff'],
    ['fd00::1/8', `fd${'00'.repeat(15)}ff${'00'.repeat(15)}`],
    ['2001:db8::/32', `20010db8${'00'.repeat(12)}ffffffff${'00'.repeat(12)}`],
    // IPv4-mapped IPv6 stays 16 bytes, mask included.
    ['::ffff:10.0.0.0/104', `${'00'.repeat(10)}ffff0a000000${'ff'.repeat(13)}000000`],
  ];
  for (const [cidr, expected] of cases) t.equal(hex(cidrBytes(cidr)), expected, cidr);
  for (const bad of [
    '10.0.0.0',
    '10.0.0.0/33',
    '::/129',
    'x/8',
    '10.0.0.0/-1',
    '/8',
    'fe80::1%eth0/64',
    '10.0.0.0/8/8',
  ])
    t.throws(() => cidrBytes(bad), { message: `invalid CIDR address "${bad}"` }, bad);
});

t.test(
  'encodeNameConstraints: none without entries; each kind of entry in its place',
  async (t) => {
    t.equal(encodeNameConstraints({}), undefined);
    t.equal(
      encodeNameConstraints({ critical: true, permitted: {}, excluded: { dnsDomains: [] } }),
      undefined,
    );
    const only = encodeNameConstraints({ excluded: { dnsDomains: ['a'] } });
    // SEQUENCE { [1] { SEQUENCE { [2] "a" } } }: no empty permitted subtree.
    t.equal(hex(only ?? new Uint8Array()), '3007a1053003820161');
    const both = encodeNameConstraints({
      critical: true,
      permitted: { dnsDomains: ['a'], ipRanges: ['10.0.0.0/8'] },
      excluded: { emailAddresses: ['b'], uriDomains: ['c'] },
    });
    // Each base in a GeneralSubtree of its own, DNS, IP, email, URI (cert-manager's order).
    t.equal(
      hex(both ?? new Uint8Array()),
      '301fa0113003820161300a87080a000000ff000000a10a30038101623003860163',
    );
    t.throws(() => encodeNameConstraints({ permitted: { uriDomains: ['ü'] } }), {
      message: 'invalid URI domain "ü": not ASCII',
    });
    t.throws(() => encodeNameConstraints({ excluded: { ipRanges: ['nope'] } }), {
      message: 'invalid CIDR address "nope"',
    });
  },
);
