import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import t from 'tap';
import type { CertificateSpec } from '../../src/api/certificate.js';
import {
  type IssuedNames,
  issuedNamesMismatches,
  issuedNamesOf,
} from '../../src/certificates/secret-names-match.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';

const spec = (extra: Partial<CertificateSpec>): CertificateSpec => ({
  secretName: 's',
  issuerRef: { name: 'ca' },
  ...extra,
});
const names = (extra: Partial<IssuedNames>): IssuedNames => ({
  commonName: '',
  dnsNames: [],
  ipAddresses: [],
  uris: [],
  emailAddresses: [],
  ...extra,
});

t.test(
  'the loose check of an issued certificate’s names (SecretDataAltNamesMatchSpec)',
  async (t) => {
    const cases: Array<[string, IssuedNames, CertificateSpec, string[]]> = [
      [
        'the same',
        names({ commonName: 'a', dnsNames: ['b'] }),
        spec({ commonName: 'a', dnsNames: ['b'] }),
        [],
      ],
      [
        'the CN moved into the SANs',
        names({ dnsNames: ['a', 'b'] }),
        spec({ commonName: 'a', dnsNames: ['b'] }),
        [],
      ],
      [
        'a SAN promoted to CN',
        names({ commonName: 'b', dnsNames: ['a'] }),
        spec({ dnsNames: ['a', 'b'] }),
        [],
      ],
      [
        'another CN',
        names({ commonName: 'x', dnsNames: ['b'] }),
        spec({ commonName: 'a', dnsNames: ['b'] }),
        ['spec.commonName'],
      ],
      [
        'a DNS name more',
        names({ dnsNames: ['b'] }),
        spec({ dnsNames: ['b', 'c'] }),
        ['spec.dnsNames'],
      ],
      [
        'a DNS name less',
        names({ dnsNames: ['b', 'c'] }),
        spec({ dnsNames: ['b'] }),
        ['spec.dnsNames'],
      ],
      [
        'a CN the spec no longer has',
        names({ commonName: 'old', dnsNames: ['b'] }),
        spec({ dnsNames: ['b'] }),
        ['spec.commonName'],
      ],
      [
        'IPs in any spelling, other lists exact',
        names({
          dnsNames: ['b'],
          ipAddresses: ['2001:db8::1'],
          uris: ['spiffe://x'],
          emailAddresses: ['a@b'],
        }),
        spec({
          dnsNames: ['b'],
          ipAddresses: ['2001:0db8::0:1'],
          uris: ['spiffe://y'],
          emailAddresses: [],
        }),
        ['spec.uris', 'spec.emailAddresses'],
      ],
    ];
    for (const [name, issued, wanted, expected] of cases)
      t.same(issuedNamesMismatches(issued, wanted), expected, name);
  },
);

t.test('names of a certificate without SANs', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const csr = await parseCsr(await createCsr({ key, subject: { commonName: 'only-cn' } }));
  const pem = await signCertificate(
    csr,
    { durationMs: 3_600_000, isCA: false, usages: [] },
    { selfSigned: key },
  );
  t.same(issuedNamesOf(new X509Certificate(pem)), names({ commonName: 'only-cn' }));
});
