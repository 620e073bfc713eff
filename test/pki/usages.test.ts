import t from 'tap';
import {
  DEFAULT_USAGES,
  isKnownUsage,
  KEY_USAGE_NAMES,
  KeyUsageFlag,
  usagesToExtensions,
} from '../../src/pki/usages.js';
import { x509 } from '../support/x509-provider.js';

t.test('lists exactly cert-manager usage names', async (t) => {
  t.same(
    [...KEY_USAGE_NAMES].sort(),
    [
      'signing',
      'digital signature',
      'content commitment',
      'key encipherment',
      'key agreement',
      'data encipherment',
      'cert sign',
      'crl sign',
      'encipher only',
      'decipher only',
      'any',
      'server auth',
      'client auth',
      'code signing',
      'email protection',
      's/mime',
      'ipsec end system',
      'ipsec tunnel',
      'ipsec user',
      'timestamping',
      'ocsp signing',
      'microsoft sgc',
      'netscape sgc',
    ].sort(),
  );
  for (const name of KEY_USAGE_NAMES) t.ok(isKnownUsage(name), name);
  for (const name of ['Server Auth', 'serverAuth', '', 'toString', '__proto__']) {
    t.notOk(isKnownUsage(name), JSON.stringify(name));
  }
  t.same(DEFAULT_USAGES, ['digital signature', 'key encipherment']);
});

t.test('flags match @peculiar/x509 KeyUsageFlags', async (t) => {
  t.equal(KeyUsageFlag.digitalSignature, x509.KeyUsageFlags.digitalSignature);
  t.equal(KeyUsageFlag.contentCommitment, x509.KeyUsageFlags.nonRepudiation);
  t.equal(KeyUsageFlag.keyEncipherment, x509.KeyUsageFlags.keyEncipherment);
  t.equal(KeyUsageFlag.dataEncipherment, x509.KeyUsageFlags.dataEncipherment);
  t.equal(KeyUsageFlag.keyAgreement, x509.KeyUsageFlags.keyAgreement);
  t.equal(KeyUsageFlag.certSign, x509.KeyUsageFlags.keyCertSign);
  t.equal(KeyUsageFlag.crlSign, x509.KeyUsageFlags.cRLSign);
  t.equal(KeyUsageFlag.encipherOnly, x509.KeyUsageFlags.encipherOnly);
  t.equal(KeyUsageFlag.decipherOnly, x509.KeyUsageFlags.decipherOnly);
});

t.test('maps usages like BuildKeyUsages', async (t) => {
  const F = KeyUsageFlag;
  t.same(usagesToExtensions([], false), {
    keyUsage: F.digitalSignature | F.keyEncipherment,
    extKeyUsages: [],
  });
  t.same(usagesToExtensions([], true), {
    keyUsage: F.digitalSignature | F.keyEncipherment | F.certSign,
    extKeyUsages: [],
  });
  t.same(usagesToExtensions(['server auth'], true), {
    keyUsage: F.certSign,
    extKeyUsages: ['1.3.6.1.5.5.7.3.1'],
  });
  t.same(usagesToExtensions(['signing', 'content commitment', 'key agreement'], false), {
    keyUsage: F.digitalSignature | F.contentCommitment | F.keyAgreement,
    extKeyUsages: [],
  });
  t.same(
    usagesToExtensions(
      ['data encipherment', 'crl sign', 'encipher only', 'decipher only', 'cert sign'],
      false,
    ).keyUsage,
    F.dataEncipherment | F.crlSign | F.encipherOnly | F.decipherOnly | F.certSign,
  );
  t.same(
    usagesToExtensions(
      [
        'client auth',
        'any',
        'code signing',
        's/mime',
        'email protection',
        'ipsec end system',
        'ipsec tunnel',
        'ipsec user',
        'timestamping',
        'ocsp signing',
        'microsoft sgc',
        'netscape sgc',
      ],
      false,
    ),
    {
      keyUsage: 0,
      extKeyUsages: [
        '1.3.6.1.5.5.7.3.2',
        '2.5.29.37.0',
        '1.3.6.1.5.5.7.3.3',
        '1.3.6.1.5.5.7.3.4',
        '1.3.6.1.5.5.7.3.5',
        '1.3.6.1.5.5.7.3.6',
        '1.3.6.1.5.5.7.3.7',
        '1.3.6.1.5.5.7.3.8',
        '1.3.6.1.5.5.7.3.9',
        '1.3.6.1.4.1.311.10.3.3',
        '2.16.840.1.113730.4.1',
      ],
    },
    'EKUs keep their order; s/mime and email protection are one OID',
  );
});

t.test('unknown usages are errors naming them', async (t) => {
  t.throws(() => usagesToExtensions(['digital signature', 'x'], false), {
    name: 'PkiError',
    message: 'unknown key usage "x"',
  });
  t.throws(() => usagesToExtensions(['x', 'Server Auth'], false), {
    message: 'unknown key usages "x", "Server Auth"',
  });
  t.throws(() => usagesToExtensions(['constructor'], false), { message: /"constructor"/ });
});
