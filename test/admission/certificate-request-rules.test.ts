import type { KeyObject } from 'node:crypto';
import t, { type Test } from 'tap';
import {
  validateCertificateRequestCreate,
  validateCertificateRequestUpdate,
} from '../../src/admission/certificate-request-rules.js';
import {
  type CertificateRequest,
  type CertificateRequestSpec,
  encodeBytes,
} from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import { type CsrRequest, createCsr } from '../../src/pki/csr.js';
import {
  encodeOid,
  encodeTlv,
  rawOf,
  readChildren,
  readSingle,
  sequence,
  Tag,
} from '../../src/pki/der.js';
import { encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import { decodePemBlocks, encodePem } from '../../src/pki/pem.js';
import { KeyUsageFlag } from '../../src/pki/usages.js';
import { openssl } from '../pki/fixtures/openssl.js';
import {
  certificateRequest,
  certificateRequestFrom,
  withConditions,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { toCryptoKeyPair, x509 } from '../support/x509-provider.js';

const ec = await generatePrivateKey({ algorithm: 'ECDSA' });
const rsa = await generatePrivateKey({ algorithm: 'RSA' });
const ed = await generatePrivateKey({ algorithm: 'Ed25519' });

const csr = (request: Omit<CsrRequest, 'key'> = {}, key: KeyObject = ec) =>
  createCsr({ key, subject: { commonName: 'web' }, dnsNames: ['web.example'], ...request });

/** A CSR carrying exactly these extensions (createCsr cannot write BasicConstraints). */
async function csrWithExtensions(extensions: x509.Extension[]): Promise<string> {
  const made = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'CN=web',
    extensions,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    keys: await toCryptoKeyPair(ec),
  });
  return encodePem('CERTIFICATE REQUEST', new Uint8Array(made.rawData));
}

function derOf(pem: string): Uint8Array {
  return decodePemBlocks(pem)[0]?.der ?? new Uint8Array();
}

/** The CSR with its signature algorithm identifier replaced (the signature left as it is). */
function relabelled(pem: string, algorithm: Uint8Array): string {
  const der = derOf(pem);
  const [info, , signature] = readChildren(der, readSingle(der)).map((c) => rawOf(der, c));
  return encodePem(
    'CERTIFICATE REQUEST',
    sequence([info ?? new Uint8Array(), algorithm, signature ?? new Uint8Array()]),
  );
}

/** The CSR with the last byte of its signature flipped. */
function tampered(pem: string): string {
  const der = Buffer.from(derOf(pem));
  der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 1;
  return encodePem('CERTIFICATE REQUEST', der);
}

/** The request the cases vary: in apps, for the Issuer ca (give it a CSR with withCsr). */
const web1 = certificateRequest(
  'web-1',
  withNamespace('apps'),
  withIssuerRef({ name: 'ca', kind: 'Issuer' }),
);

const condition = (type: string, status: Condition['status'] = 'True'): Condition => ({
  type,
  status,
  reason: 'cert-manager.io',
  message: `${type} by a test`,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

// apimachinery prints a bytes value as Go's %#v, cut after 100 characters: a PEM starts with dashes.
const PEM_BYTES = String.raw`\[\]byte\{0x2d, 0x2d, 0x2d, 0x2d, 0x2d, 0x42, 0x45, 0x47, 0x49, 0x4e, [^…]*…\(\d+ characters\)`;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const requestError = (detail: string) =>
  new RegExp(`^spec\\.request: Invalid value: ${PEM_BYTES}: ${escaped(detail)}$`);

const plain = await csr();
/** web1 over a valid CSR: the base of the cases about other fields. */
const plainRequest = certificateRequestFrom(web1, withCsr(plain));

/** Exactly one error, matching pattern. */
function oneError(t: Test, errors: string[], pattern: RegExp, name = ''): void {
  t.equal(errors.length, 1, name);
  t.match(errors[0], pattern, name);
}

t.test('a sound request is admitted, whatever its key type and signature algorithm', async (t) => {
  const pss = await openssl(
    ['req', '-new', '-key', '{key}', '-subj', '/CN=pss', '-sigopt', 'rsa_padding_mode:pss'],
    { key: encodePrivateKey(rsa, 'PKCS1') },
  );
  const rsa384 = await openssl(['req', '-new', '-key', '{key}', '-subj', '/CN=x', '-sha384'], {
    key: encodePrivateKey(rsa, 'PKCS1'),
  });
  const cases: Array<[string, string]> = [
    ['ECDSA P-256', plain],
    ['ECDSA P-384', await csr({}, await generatePrivateKey({ algorithm: 'ECDSA', size: 384 }))],
    ['RSA PKCS#1 v1.5 SHA-256', await csr({}, rsa)],
    ['RSA PKCS#1 v1.5 SHA-384', rsa384],
    ['RSA-PSS (OpenSSL: the longest salt)', pss],
    ['Ed25519', await csr({}, ed)],
  ];
  for (const [name, pem] of cases)
    t.same(validateCertificateRequestCreate(certificateRequestFrom(web1, withCsr(pem))), [], name);
});

t.test('issuerRef: a name, and a kind of cert-manager.io', async (t) => {
  const cases: Array<[CertificateRequestSpec['issuerRef'], string[]]> = [
    [{ name: '' }, ['spec.issuerRef.name: Required value: must be specified']],
    [
      { name: 'ca', kind: 'Signer' },
      [
        'spec.issuerRef.kind: Invalid value: "Signer": must be one of Issuer or ClusterIssuer (did you forget to set spec.issuerRef.kind.group?)',
      ],
    ],
    [
      { name: 'ca', kind: 'Signer', group: 'cert-manager.io' },
      ['spec.issuerRef.kind: Invalid value: "Signer": must be one of Issuer or ClusterIssuer'],
    ],
    [{ name: 'ca', kind: 'Signer', group: 'example.com' }, []],
    [{ name: 'ca', kind: 'ClusterIssuer' }, []],
    [{ name: 'ca' }, []],
  ];
  for (const [issuerRef, errors] of cases)
    t.same(
      validateCertificateRequestCreate(
        certificateRequestFrom(plainRequest, withSpec({ issuerRef })),
      ),
      errors,
      JSON.stringify(issuerRef),
    );
  const { issuerRef: _ref, ...noRef } = certificateRequestFrom(plainRequest).spec;
  t.same(
    validateCertificateRequestCreate({
      ...certificateRequestFrom(plainRequest),
      spec: noRef as CertificateRequestSpec,
    }),
    ['spec.issuerRef.name: Required value: must be specified'],
    'no issuerRef at all',
  );
});

t.test('request: required, known usages, base64, a CSR that parses', async (t) => {
  t.same(
    validateCertificateRequestCreate({
      ...certificateRequestFrom(plainRequest),
      spec: { request: '' } as never,
    }),
    [
      'spec.issuerRef.name: Required value: must be specified',
      'spec.request: Required value: must be specified',
    ],
  );
  t.same(
    validateCertificateRequestCreate(
      certificateRequestFrom(plainRequest, withSpec({ usages: ['server auth', 'bogus', 'x'] })),
    ),
    [
      'spec.usages: Invalid value: []certmanager.KeyUsage{"server auth", "bogus", "x"}: unknown key usages: [bogus x]',
    ],
    'unknown usages are reported before the CSR is read',
  );
  t.same(
    validateCertificateRequestCreate({
      ...certificateRequestFrom(plainRequest),
      spec: { ...certificateRequestFrom(plainRequest).spec, request: plain },
    }),
    [
      `spec.request: Invalid value: "-----BEGIN CERTIFICATE REQUEST-----\\n${plain.slice(36, 100).replaceAll('\n', '\\n')}"…(${plain.length} characters): must be base64-encoded bytes`,
    ],
    'a PEM put in the field without base64',
  );
  const [notPem] = validateCertificateRequestCreate(certificateRequestFrom(web1, withCsr('hello')));
  t.equal(
    notPem,
    'spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: cannot parse certificate request: no PEM block found',
  );
  oneError(
    t,
    validateCertificateRequestCreate(
      certificateRequestFrom(
        web1,
        withCsr(encodePem('CERTIFICATE REQUEST', derOf(plain).subarray(0, 40))),
      ),
    ),
    new RegExp(
      `^spec\\.request: Invalid value: ${PEM_BYTES}: cannot parse certificate request: malformed DER: `,
    ),
  );
});

t.test('a signature that does not verify is refused in Go’s words', async (t) => {
  const rsaPem = await csr({}, rsa);
  const sha256WithRsa = sequence([
    encodeOid('1.2.840.113549.1.1.11'),
    encodeTlv(Tag.NULL, new Uint8Array()),
  ]);
  const sha1WithRsa = sequence([
    encodeOid('1.2.840.113549.1.1.5'),
    encodeTlv(Tag.NULL, new Uint8Array()),
  ]);
  const cases: Array<[string, string, string]> = [
    ['ECDSA, one bit flipped', tampered(plain), 'x509: ECDSA verification failure'],
    ['RSA, one bit flipped', tampered(rsaPem), 'crypto/rsa: verification error'],
    ['Ed25519, one bit flipped', tampered(await csr({}, ed)), 'x509: Ed25519 verification failure'],
    [
      'an ECDSA key under an RSA algorithm',
      relabelled(plain, sha256WithRsa),
      'x509: signature algorithm specifies an RSA public key, but have public key of type *ecdsa.PublicKey',
    ],
    [
      'SHA-1',
      relabelled(rsaPem, sha1WithRsa),
      'x509: cannot verify signature: algorithm unimplemented',
    ],
    [
      'Ed25519 with parameters',
      relabelled(
        await csr({}, ed),
        sequence([encodeOid('1.3.101.112'), encodeTlv(Tag.NULL, new Uint8Array())]),
      ),
      'x509: cannot verify signature: algorithm unimplemented',
    ],
    [
      'RSA-PSS without parameters (SHA-1 by default)',
      relabelled(rsaPem, sequence([encodeOid('1.2.840.113549.1.1.10')])),
      'x509: cannot verify signature: algorithm unimplemented',
    ],
  ];
  for (const [name, pem, detail] of cases) {
    oneError(
      t,
      validateCertificateRequestCreate(certificateRequestFrom(web1, withCsr(pem))),
      requestError(detail),
      name,
    );
  }
});

t.test('BasicConstraints in the CSR must agree with spec.isCA', async (t) => {
  const ca = await csrWithExtensions([new x509.BasicConstraintsExtension(true, undefined, true)]);
  const leaf = await csrWithExtensions([new x509.BasicConstraintsExtension(false)]);
  t.same(
    validateCertificateRequestCreate(
      certificateRequestFrom(web1, withCsr(ca), withSpec({ isCA: true })),
    ),
    [],
  );
  t.same(
    validateCertificateRequestCreate(certificateRequestFrom(web1, withCsr(leaf))),
    [],
    'isCA absent is false',
  );
  oneError(
    t,
    validateCertificateRequestCreate(certificateRequestFrom(web1, withCsr(ca))),
    requestError('encoded CSR error: IsCA true does not match expected value false'),
  );
  oneError(
    t,
    validateCertificateRequestCreate(
      certificateRequestFrom(web1, withCsr(leaf), withSpec({ isCA: true })),
    ),
    requestError('encoded CSR error: IsCA false does not match expected value true'),
  );
  t.same(
    validateCertificateRequestCreate(
      certificateRequestFrom(plainRequest, withSpec({ isCA: true })),
    ),
    [],
    'a CSR without the extension leaves isCA to the spec',
  );
});

t.test('KeyUsage and ExtKeyUsage in the CSR must be those of spec.usages', async (t) => {
  const admitted: Array<[string, string, Partial<CertificateRequestSpec>]> = [
    ['the defaults', await csr({ usages: { names: [], isCA: false } }), {}],
    [
      'usages as a Certificate encodes them',
      await csr({ usages: { names: ['signing', 'server auth', 'client auth'], isCA: false } }),
      { usages: ['digital signature', 'server auth', 'client auth'] },
    ],
    [
      'isCA adds cert sign on both sides',
      await csr({ usages: { names: [], isCA: true } }),
      { isCA: true },
    ],
    [
      's/mime and email protection are one purpose',
      await csr({ usages: { names: ['digital signature', 's/mime'], isCA: false } }),
      { usages: ['digital signature', 's/mime', 'email protection'] },
    ],
    [
      'only an ExtKeyUsage, for usages that are only purposes',
      await csrWithExtensions([new x509.ExtendedKeyUsageExtension(['1.3.6.1.5.5.7.3.1'])]),
      { usages: ['server auth'] },
    ],
    [
      'purposes Go does not know are not compared',
      await csrWithExtensions([
        new x509.KeyUsagesExtension(
          KeyUsageFlag.digitalSignature | KeyUsageFlag.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension(['1.2.3.4']),
      ]),
      {},
    ],
  ];
  for (const [name, pem, spec] of admitted)
    t.same(
      validateCertificateRequestCreate(certificateRequestFrom(web1, withCsr(pem), withSpec(spec))),
      [],
      name,
    );

  const refused: Array<[string, string, Partial<CertificateRequestSpec>, string]> = [
    [
      'fewer key usages',
      await csr({ usages: { names: ['digital signature'], isCA: false } }),
      {},
      "encoded CSR error: the KeyUsages [ 'digital signature' ] do not match the expected KeyUsages [ 'digital signature', 'key encipherment' ]",
    ],
    [
      'cert sign without isCA',
      await csr({ usages: { names: [], isCA: true } }),
      {},
      "encoded CSR error: the KeyUsages [ 'digital signature', 'key encipherment', 'cert sign' ] do not match the expected KeyUsages [ 'digital signature', 'key encipherment' ]",
    ],
    [
      'another purpose',
      await csr({ usages: { names: ['digital signature', 'server auth'], isCA: false } }),
      { usages: ['digital signature', 'client auth'] },
      "encoded CSR error: the ExtKeyUsages [ 'server auth' ] do not match the expected ExtKeyUsages [ 'client auth' ]",
    ],
    [
      'the same purposes in another order',
      await csr({
        usages: { names: ['digital signature', 'client auth', 'server auth'], isCA: false },
      }),
      { usages: ['digital signature', 'server auth', 'client auth'] },
      "encoded CSR error: the ExtKeyUsages [ 'client auth', 'server auth' ] do not match the expected ExtKeyUsages [ 'server auth', 'client auth' ]",
    ],
    [
      'an ExtKeyUsage without KeyUsage: no key usages at all',
      await csrWithExtensions([new x509.ExtendedKeyUsageExtension(['1.3.6.1.5.5.7.3.1'])]),
      {},
      "encoded CSR error: the KeyUsages [] do not match the expected KeyUsages [ 'digital signature', 'key encipherment' ]",
    ],
    [
      "a purpose Go knows and cert-manager cannot name: 'unknown'",
      await csrWithExtensions([
        new x509.KeyUsagesExtension(
          KeyUsageFlag.digitalSignature | KeyUsageFlag.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension(['1.3.6.1.4.1.311.61.1.1']),
      ]),
      {},
      "encoded CSR error: the ExtKeyUsages [ 'unknown' ] do not match the expected ExtKeyUsages []",
    ],
  ];
  for (const [name, pem, spec, detail] of refused)
    oneError(
      t,
      validateCertificateRequestCreate(certificateRequestFrom(web1, withCsr(pem), withSpec(spec))),
      requestError(detail),
      name,
    );
});

t.test('approval conditions at create: one of each at most, only True, never both', async (t) => {
  const cases: Array<[string, Condition[], string[]]> = [
    ['Approved', [condition('Approved')], []],
    ['Denied', [condition('Denied')], []],
    ['other conditions', [condition('Ready', 'False'), condition('InvalidRequest')], []],
    [
      'two Approved',
      [condition('Approved'), condition('Approved')],
      ['status.conditions: Forbidden: multiple "Approved" conditions present'],
    ],
    [
      'Approved False',
      [condition('Approved', 'False')],
      [
        'status.conditions.Approved: Invalid value: "False": "Approved" condition may only be set to True',
      ],
    ],
    [
      'Denied Unknown',
      [condition('Denied', 'Unknown')],
      [
        'status.conditions.Denied: Invalid value: "Unknown": "Denied" condition may only be set to True',
      ],
    ],
    [
      'both',
      [condition('Approved'), condition('Denied')],
      ["status.conditions: Forbidden: both 'Denied' and 'Approved' conditions cannot coexist"],
    ],
    [
      'two Denied and an Approved',
      [condition('Denied'), condition('Approved'), condition('Denied')],
      [
        'status.conditions: Forbidden: multiple "Denied" conditions present',
        "status.conditions: Forbidden: both 'Denied' and 'Approved' conditions cannot coexist",
      ],
    ],
  ];
  for (const [name, conditions, errors] of cases)
    t.same(
      validateCertificateRequestCreate(
        certificateRequestFrom(plainRequest, withConditions(conditions)),
      ),
      errors,
      name,
    );
});

t.test('update: the spec never changes', async (t) => {
  const old = certificateRequestFrom(
    plainRequest,
    withSpec({ usages: ['digital signature'], duration: '1h' }),
  );
  t.same(validateCertificateRequestUpdate(structuredClone(old), old), []);
  const changes: Array<[string, Partial<CertificateRequestSpec>]> = [
    ['request', { request: encodeBytes(await csr()) }],
    ['duration', { duration: '2h' }],
    ['isCA', { isCA: true }],
    ['usages', { usages: ['digital signature', 'server auth'] }],
    ['usages emptied', { usages: [] }],
    ['issuerRef', { issuerRef: { name: 'ca', kind: 'ClusterIssuer' } }],
    ['username', { username: 'mallory' }],
    ['groups', { groups: ['system:masters'] }],
    ['extra', { extra: { scopes: ['all'] } }],
  ];
  for (const [name, change] of changes)
    t.same(
      validateCertificateRequestUpdate({ ...old, spec: { ...old.spec, ...change } }, old),
      ['spec: Forbidden: cannot change spec after creation'],
      name,
    );
  t.same(
    validateCertificateRequestUpdate(
      { ...old, spec: { ...old.spec, isCA: false, uid: '', username: '' } },
      old,
    ),
    [],
    'fields written as their zero value are unchanged, as the decoded Go struct sees it',
  );
});

t.test('objects without spec or status fields are judged as Go decodes them', async (t) => {
  const bare = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'web-1', namespace: 'apps' },
  } as CertificateRequest;
  t.same(validateCertificateRequestCreate(bare), [
    'spec.issuerRef.name: Required value: must be specified',
    'spec.request: Required value: must be specified',
  ]);
  t.same(validateCertificateRequestUpdate(structuredClone(bare), bare), []);
  t.same(
    validateCertificateRequestUpdate({ ...bare, spec: { request: '' } as never }, bare),
    [],
    'an empty spec is the zero spec',
  );
  t.same(validateCertificateRequestUpdate(certificateRequestFrom(plainRequest), bare), [
    'spec: Forbidden: cannot change spec after creation',
  ]);
  const statusless = { type: 'Approved' } as Condition;
  t.same(
    validateCertificateRequestCreate(
      certificateRequestFrom(plainRequest, withConditions([statusless])),
    ),
    ['status.conditions.Approved: Invalid value: "": "Approved" condition may only be set to True'],
  );
  t.same(
    validateCertificateRequestUpdate(
      certificateRequestFrom(
        plainRequest,
        withConditions([{ ...statusless, status: '' as never }]),
      ),
      certificateRequestFrom(plainRequest, withConditions([statusless])),
    ),
    ['status.conditions.Approved: Invalid value: "": "Approved" condition may only be set to True'],
    'an absent status is the empty one: not a modification',
  );
});

t.test('update: cert-manager annotations never change', async (t) => {
  const old: CertificateRequest = {
    ...certificateRequestFrom(plainRequest),
    metadata: {
      name: 'web-1',
      namespace: 'apps',
      annotations: {
        'cert-manager.io/certificate-revision': '1',
        'acme.cert-manager.io/order-name': 'o',
        'example.com/note': 'a',
      },
    },
  };
  const withAnnotations = (annotations: Record<string, string>): CertificateRequest => ({
    ...old,
    metadata: { ...old.metadata, annotations },
  });
  t.same(
    validateCertificateRequestUpdate(
      withAnnotations({
        'cert-manager.io/certificate-revision': '1',
        'acme.cert-manager.io/order-name': 'o',
        'example.com/note': 'b',
        'example.com/other': 'c',
      }),
      old,
    ),
    [],
    'other annotations may change',
  );
  t.same(
    validateCertificateRequestUpdate(
      withAnnotations({
        'cert-manager.io/certificate-revision': '2',
        'cert-manager.io/private-key-secret-name': 'k',
      }),
      old,
    ),
    [
      'metadata.annotations.acme.cert-manager.io/order-name: Forbidden: cannot change cert-manager annotation after creation',
      'metadata.annotations.cert-manager.io/certificate-revision: Forbidden: cannot change cert-manager annotation after creation',
      'metadata.annotations.cert-manager.io/certificate-revision: Forbidden: cannot change cert-manager annotation after creation',
      'metadata.annotations.cert-manager.io/private-key-secret-name: Forbidden: cannot change cert-manager annotation after creation',
    ],
    'removed, changed (seen from both sides, as upstream reports it) and added',
  );
});

t.test('update: Approved and Denied stay as they were set', async (t) => {
  const approved = certificateRequestFrom(
    plainRequest,
    withConditions([condition('Approved'), condition('Ready', 'False')]),
  );
  const denied = certificateRequestFrom(plainRequest, withConditions([condition('Denied')]));
  const fresh = certificateRequestFrom(plainRequest);
  const cases: Array<[string, CertificateRequest, CertificateRequest, string[]]> = [
    [
      'approving',
      certificateRequestFrom(fresh, withConditions([condition('Approved')])),
      fresh,
      [],
    ],
    ['denying', certificateRequestFrom(fresh, withConditions([condition('Denied')])), fresh, []],
    [
      'other conditions change beside Approved',
      certificateRequestFrom(approved, withConditions([condition('Approved'), condition('Ready')])),
      approved,
      [],
    ],
    [
      'Approved re-written with another message',
      certificateRequestFrom(
        approved,
        withConditions([{ ...condition('Approved'), message: 'again' }]),
      ),
      approved,
      ["status.conditions: Forbidden: 'Approved' condition may not be modified once set"],
    ],
    [
      'Approved removed',
      certificateRequestFrom(approved, withConditions([condition('Ready', 'False')])),
      approved,
      ["status.conditions: Forbidden: 'Approved' condition may not be modified once set"],
    ],
    [
      'Denied turned into Approved',
      certificateRequestFrom(denied, withConditions([condition('Approved')])),
      denied,
      ["status.conditions: Forbidden: 'Denied' condition may not be modified once set"],
    ],
    [
      'Denied added to an approved request',
      certificateRequestFrom(
        approved,
        withConditions([condition('Approved'), condition('Denied')]),
      ),
      approved,
      ["status.conditions: Forbidden: both 'Denied' and 'Approved' conditions cannot coexist"],
    ],
    [
      'Approved set to False',
      certificateRequestFrom(fresh, withConditions([condition('Approved', 'False')])),
      fresh,
      [
        'status.conditions.Approved: Invalid value: "False": "Approved" condition may only be set to True',
      ],
    ],
    [
      'an absent reason is the empty one',
      certificateRequestFrom(fresh, withConditions([{ type: 'Approved', status: 'True' }])),
      certificateRequestFrom(
        fresh,
        withConditions([{ type: 'Approved', status: 'True', reason: '', message: '' }]),
      ),
      [],
    ],
  ];
  for (const [name, next, old, errors] of cases)
    t.same(validateCertificateRequestUpdate(next, old), errors, name);
});

t.test('a flood of bad usages or annotations makes one bounded refusal', async (t) => {
  const usages = Array.from({ length: 200_000 }, (_, i) => `u${i}`);
  const [error, ...others] = validateCertificateRequestCreate(
    certificateRequestFrom(plainRequest, withSpec({ usages })),
  );
  t.same(others, [], 'one error');
  t.equal(
    error,
    'spec.usages: Invalid value: []certmanager.KeyUsage{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u10", "u11", "u1…(200000 items): unknown key usages: [u0 u1 u2 u3 u4 u5 u6 u7 u8 u9] and 199990 more',
  );
  const long = 'z'.repeat(500);
  t.match(
    validateCertificateRequestCreate(
      certificateRequestFrom(plainRequest, withSpec({ usages: [long] })),
    ),
    [`unknown key usages: [${'z'.repeat(100)}…(500 characters)]`],
    'each unknown usage shortened',
  );

  const annotations = Object.fromEntries(
    Array.from({ length: 30 }, (_, i) => [`cert-manager.io/a${String(i).padStart(2, '0')}`, 'x']),
  );
  const old: CertificateRequest = {
    ...certificateRequestFrom(plainRequest),
    metadata: { name: 'web-1', annotations },
  };
  const errors = validateCertificateRequestUpdate({ ...old, metadata: { name: 'web-1' } }, old);
  t.equal(errors.length, 11);
  t.equal(
    errors[0],
    'metadata.annotations.cert-manager.io/a00: Forbidden: cannot change cert-manager annotation after creation',
  );
  t.equal(errors.at(-1), 'metadata.annotations: and 20 more errors (only the first 10 are listed)');
});
