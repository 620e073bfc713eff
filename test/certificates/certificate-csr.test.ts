import t from 'tap';
import { csrRequestFor } from '../../src/certificates/certificate-csr.js';
import { generatePrivateKey } from '../../src/pki/keys.js';

t.test('csrRequestFor: what a Certificate spec puts into its CSR', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const issuerRef = { name: 'ca' };
  t.same(
    csrRequestFor(
      {
        secretName: 's',
        issuerRef,
        commonName: 'cn',
        subject: { organizations: ['o'] },
        dnsNames: ['a'],
      },
      key,
    ),
    {
      key,
      subject: { organizations: ['o'], commonName: 'cn' },
      dnsNames: ['a'],
      ipAddresses: [],
      uris: [],
      emailAddresses: [],
      usages: { names: [], isCA: false },
    },
    'usages (defaulted by the encoder) unless encodeUsagesInRequest is false',
  );
  const literal = csrRequestFor(
    {
      secretName: 's',
      issuerRef,
      literalSubject: 'CN=x,O=y',
      isCA: true,
      usages: ['cert sign'],
      encodeUsagesInRequest: false,
    },
    key,
  );
  t.equal(literal.literalSubject, 'CN=x,O=y', 'the literal subject');
  t.equal(literal.usages, undefined, 'encodeUsagesInRequest: false leaves the extensions out');
  const ca = csrRequestFor(
    { secretName: 's', issuerRef, isCA: true, usages: ['server auth'] },
    key,
  );
  t.same(ca.usages, { names: ['server auth'], isCA: true });
  const fields = csrRequestFor(
    {
      secretName: 's',
      issuerRef,
      isCA: true,
      commonName: 'ca',
      otherNames: [{ oid: '1.2.3.4', utf8Value: 'v' }],
      nameConstraints: { critical: true, permitted: { dnsDomains: ['.example.com'] } },
      signatureAlgorithm: 'ECDSAWithSHA384',
    },
    key,
  );
  t.same(fields.otherNames, [{ oid: '1.2.3.4', utf8Value: 'v' }], 'the otherNames');
  t.same(fields.nameConstraints, { critical: true, permitted: { dnsDomains: ['.example.com'] } });
  t.equal(fields.signatureAlgorithm, 'ECDSAWithSHA384', 'the signature algorithm');
  t.notOk(
    'otherNames' in ca || 'nameConstraints' in ca || 'signatureAlgorithm' in ca,
    'none unset',
  );
});
