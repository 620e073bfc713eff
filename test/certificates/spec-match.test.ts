import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { CertificateSpec } from '../../src/api/certificate.js';
import type { CertificateRequestSpec } from '../../src/api/certificate-request.js';
import { privateKeyMismatches } from '../../src/certificates/private-key-match.js';
import { requestMismatches } from '../../src/certificates/request-match.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import {
  concat,
  contextTag,
  encodeOid,
  encodeTlv,
  sequence,
  Tag,
  toArrayBuffer,
} from '../../src/pki/der.js';

const ecdsa = (curve: string) => generateKeyPairSync('ec', { namedCurve: curve }).privateKey;
const rsa = (bits: number) => generateKeyPairSync('rsa', { modulusLength: bits }).privateKey;
const ed25519 = generateKeyPairSync('ed25519').privateKey;

t.test('private key against spec.privateKey: algorithm first, then size', async (t) => {
  const p256 = ecdsa('prime256v1');
  const p384 = ecdsa('secp384r1');
  const rsa2048 = rsa(2048);
  const cases: Array<[string, Parameters<typeof privateKeyMismatches>, string[]]> = [
    ['unset means RSA 2048', [rsa2048, undefined], []],
    ['unset is not ECDSA', [p256, undefined], ['spec.privateKey.algorithm']],
    [
      'RSA 2048 asked as 4096',
      [rsa2048, { algorithm: 'RSA', size: 4096 }],
      ['spec.privateKey.size'],
    ],
    ['RSA size 0 is the default', [rsa2048, { algorithm: 'RSA', size: 0 }], []],
    ['ECDSA defaults to P-256', [p256, { algorithm: 'ECDSA' }], []],
    [
      'ECDSA P-384 asked as 256',
      [p384, { algorithm: 'ECDSA', size: 256 }],
      ['spec.privateKey.size'],
    ],
    ['ECDSA P-384 asked as 384', [p384, { algorithm: 'ECDSA', size: 384 }], []],
    ['Ed25519 has no size', [ed25519, { algorithm: 'Ed25519', size: 4096 }], []],
    ['Ed25519 is not ECDSA', [ed25519, { algorithm: 'ECDSA' }], ['spec.privateKey.algorithm']],
  ];
  for (const [name, args, expected] of cases) t.same(privateKeyMismatches(...args), expected, name);
});

t.test('a request against the Certificate spec, field by field', async (t) => {
  const key = ecdsa('prime256v1');
  const spec: CertificateSpec = {
    secretName: 'web-tls',
    issuerRef: { name: 'ca', kind: 'Issuer' },
    commonName: 'web',
    subject: { organizations: ['Example', 'Other'], postalCodes: ['1000'], serialNumber: '42' },
    dnsNames: ['b.example.com', 'a.example.com'],
    ipAddresses: ['10.0.0.1', '2001:db8::1'],
    uris: ['spiffe://cluster.local/ns/a/sa/b'],
    emailAddresses: ['ops@example.com'],
    duration: '2160h',
    isCA: false,
    usages: ['digital signature', 'key encipherment'],
  };
  const csr = await parseCsr(
    await createCsr({
      key,
      subject: { ...spec.subject, commonName: 'web' },
      dnsNames: ['a.example.com', 'b.example.com'],
      ipAddresses: ['2001:0db8:0:0::1', '10.0.0.1'],
      uris: spec.uris ?? [],
      emailAddresses: spec.emailAddresses ?? [],
    }),
  );
  const request: CertificateRequestSpec = {
    request: '',
    issuerRef: { name: 'ca', group: 'cert-manager.io' },
    duration: '2160h0m0s',
    usages: ['key encipherment', 'digital signature'],
  };
  t.same(
    requestMismatches(request, csr, spec),
    [],
    'order, IPv6 spelling and defaults do not matter',
  );

  const without = (key: keyof CertificateSpec): CertificateSpec => {
    const copy = { ...spec };
    delete copy[key];
    return copy;
  };
  const changed: Array<[string, CertificateSpec, string[]]> = [
    ['a new DNS name', { ...spec, dnsNames: ['a.example.com'] }, ['spec.dnsNames']],
    ['another IP', { ...spec, ipAddresses: ['10.0.0.2', '2001:db8::1'] }, ['spec.ipAddresses']],
    ['no URIs', { ...spec, uris: [] }, ['spec.uris']],
    ['another email', { ...spec, emailAddresses: ['dev@example.com'] }, ['spec.emailAddresses']],
    ['another CN', { ...spec, commonName: 'api' }, ['spec.commonName']],
    [
      'subject lists and serial',
      { ...spec, subject: { organizations: ['Example'], postalCodes: ['2000'] } },
      ['spec.subject.serialNumber', 'spec.subject.organizations', 'spec.subject.postCodes'],
    ],
    ['isCA', { ...spec, isCA: true }, ['spec.isCA']],
    ['usages are not defaulted', without('usages'), ['spec.usages']],
    ['another duration', { ...spec, duration: '24h' }, ['spec.duration']],
    ['duration unset on one side', without('duration'), []],
    [
      'another issuer kind',
      { ...spec, issuerRef: { name: 'ca', kind: 'ClusterIssuer' } },
      ['spec.issuerRef'],
    ],
    ['another issuer name', { ...spec, issuerRef: { name: 'other' } }, ['spec.issuerRef']],
    [
      'a literal subject replaces the subject fields',
      { ...spec, literalSubject: 'CN=web,O=Example' },
      ['spec.literalSubject'],
    ],
  ];
  for (const [name, changedSpec, expected] of changed) {
    t.same(requestMismatches(request, csr, changedSpec), expected, name);
  }
});

t.test(
  'otherNames: the same OID/value pairs in any order, an unset list an empty one',
  async (t) => {
    const key = ecdsa('prime256v1');
    const upn = { oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'upn@example.com' };
    const other = { oid: '1.2.3.4', utf8Value: 'ünï' };
    const csrWith = async (otherNames: Array<{ oid: string; utf8Value: string }>) =>
      parseCsr(await createCsr({ key, subject: { commonName: 'web' }, otherNames }));
    const request: CertificateRequestSpec = { request: '', issuerRef: { name: 'ca' } };
    const spec = (otherNames?: Array<{ oid: string; utf8Value: string }>): CertificateSpec => ({
      secretName: 's',
      issuerRef: { name: 'ca' },
      commonName: 'web',
      ...(otherNames ? { otherNames } : {}),
    });
    const both = await csrWith([upn, other]);
    const none = await parseCsr(await createCsr({ key, subject: { commonName: 'web' } }));
    const cases: Array<[string, Awaited<ReturnType<typeof parseCsr>>, CertificateSpec, string[]]> =
      [
        ['the same two in another order', both, spec([other, upn]), []],
        ['one fewer in the spec', both, spec([upn]), ['spec.otherNames']],
        ['another value', both, spec([upn, { ...other, utf8Value: 'uni' }]), ['spec.otherNames']],
        [
          'the value under another OID',
          both,
          spec([upn, { ...other, oid: '1.2.3.5' }]),
          ['spec.otherNames'],
        ],
        [
          'all removed from the spec (cert-manager would not notice)',
          both,
          spec(),
          ['spec.otherNames'],
        ],
        ['an empty list and a CSR without SANs', none, spec([]), []],
        ['added to the spec', none, spec([upn]), ['spec.otherNames']],
      ];
    for (const [name, csr, certificateSpec, expected] of cases)
      t.same(requestMismatches(request, csr, certificateSpec), expected, name);

    // A value of another string type, and an otherName with no value: neither matches anything.
    const upnOid = encodeOid(upn.oid);
    const ia5Value = contextTag(0, encodeTlv(Tag.IA5_STRING, Buffer.from(upn.utf8Value)), true);
    const badUtf8 = contextTag(0, encodeTlv(Tag.UTF8_STRING, Uint8Array.of(0xc3, 0x28)), true);
    const sanWith = (...names: Uint8Array[]) => ({
      ...none,
      sanExtension: { critical: false, der: toArrayBuffer(sequence(names)) },
    });
    t.same(
      requestMismatches(
        request,
        sanWith(contextTag(0, concat([upnOid, ia5Value]), true)),
        spec([upn]),
      ),
      ['spec.otherNames'],
      'an IA5String value',
    );
    t.same(
      requestMismatches(
        request,
        sanWith(contextTag(0, concat([upnOid, badUtf8]), true)),
        spec([upn]),
      ),
      ['spec.otherNames'],
      'a UTF8String that is no UTF-8',
    );
    t.same(
      requestMismatches(request, sanWith(contextTag(0, upnOid, true)), spec([])),
      ['spec.otherNames'],
      'an otherName without its value',
    );
  },
);

t.test('a literal subject matches the same DER', async (t) => {
  const key = ecdsa('prime256v1');
  const literalSubject = 'CN=web,O=Example+OU=Ops';
  const csr = await parseCsr(await createCsr({ key, literalSubject, dnsNames: ['web'] }));
  const spec: CertificateSpec = {
    secretName: 's',
    issuerRef: { name: 'ca' },
    literalSubject,
    dnsNames: ['web'],
  };
  t.same(requestMismatches({ request: '', issuerRef: { name: 'ca' } }, csr, spec), []);
});

t.test('unreadable values never match', async (t) => {
  const key = ecdsa('prime256v1');
  const csr = await parseCsr(
    await createCsr({ key, dnsNames: ['web'], ipAddresses: ['10.0.0.1'] }),
  );
  const spec: CertificateSpec = {
    secretName: 's',
    issuerRef: { name: 'ca' },
    dnsNames: ['web'],
    ipAddresses: ['10.0.0.1'],
  };
  const request: CertificateRequestSpec = {
    request: '',
    issuerRef: { name: 'ca' },
    duration: 'soon',
  };
  t.same(
    requestMismatches(request, csr, { ...spec, duration: '1h' }),
    ['spec.duration'],
    'an unreadable requested duration',
  );
  t.same(
    requestMismatches({ ...request, duration: '1h' }, csr, { ...spec, ipAddresses: ['10.0.0.x'] }),
    ['spec.ipAddresses'],
    'an unreadable IP',
  );
  t.same(
    requestMismatches({ ...request, duration: '1h' }, csr, {
      ...spec,
      literalSubject: 'no equals sign',
    }),
    ['spec.literalSubject'],
    'an unreadable literal subject',
  );
  const x25519 = generateKeyPairSync('x25519').privateKey;
  t.same(
    privateKeyMismatches(x25519, { algorithm: 'Ed25519' }),
    ['spec.privateKey.algorithm'],
    'a key type cert-manager cannot use',
  );
});
