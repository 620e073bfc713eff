import { constants, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import t from 'tap';
import {
  csrSignatureProblem,
  type SignedRequest,
  UNSUPPORTED_SIGNATURE_ALGORITHM,
} from '../../src/pki/csr-signature.js';
import {
  contextTag,
  encodeOid,
  encodeSmallInteger,
  encodeTlv,
  sequence,
  Tag,
} from '../../src/pki/der.js';

// RSASSA-PSS parameters and key types, checked directly on the signed bytes: OpenSSL and
// @peculiar/x509 write only a few of the encodings a request may carry.

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signed = Buffer.from('a CertificationRequestInfo stands here');
const PSS = '1.2.840.113549.1.1.10';
const SHA256 = '2.16.840.1.101.3.4.2.1';
const SHA384 = '2.16.840.1.101.3.4.2.2';
const NULL = encodeTlv(Tag.NULL, new Uint8Array());

const pssSignature = (saltLength: number) =>
  sign('sha256', signed, {
    key: rsa.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength,
  });

const hashId = (oid: string, ...rest: Uint8Array[]) => sequence([encodeOid(oid), ...rest]);
const mgf1 = (hash: Uint8Array) => sequence([encodeOid('1.2.840.113549.1.1.8'), hash]);
const explicit = (n: number, ...content: Uint8Array[]) =>
  contextTag(n, Buffer.concat(content), true);

/** RSASSA-PSS-params from its explicitly tagged fields. */
const pssParams = (...fields: Uint8Array[]) => sequence(fields);
const standard = (salt = 32) => [
  explicit(0, hashId(SHA256, NULL)),
  explicit(1, mgf1(hashId(SHA256, NULL))),
  explicit(2, encodeSmallInteger(salt)),
];

const request = (
  signatureParams: Uint8Array | undefined,
  signature: Uint8Array = pssSignature(32),
  oid = PSS,
  publicKey: KeyObject = rsa.publicKey,
): SignedRequest => ({
  signed,
  signatureOid: oid,
  ...(signatureParams && { signatureParams }),
  signature,
  publicKey,
});

t.test(
  'RSA-PSS: the salt length of the parameters, SHA-2 and MGF1 with the same hash',
  async (t) => {
    t.equal(
      csrSignatureProblem(request(pssParams(...standard()))),
      undefined,
      'salt = hash length',
    );
    t.equal(
      csrSignatureProblem(
        request(
          pssParams(
            explicit(0, hashId(SHA256)),
            explicit(1, mgf1(hashId(SHA256))),
            explicit(2, encodeSmallInteger(222)),
            explicit(3, encodeSmallInteger(1)),
          ),
          pssSignature(222),
        ),
      ),
      undefined,
      'the longest salt (OpenSSL), hashes without NULL, the trailer written out',
    );
    t.equal(
      csrSignatureProblem(request(pssParams(...standard()), pssSignature(20))),
      'crypto/rsa: verification error',
      'signed with another salt length than the parameters say',
    );
  },
);

t.test('RSA-PSS parameters Go calls an unknown algorithm', async (t) => {
  const [hash, mask, salt] = standard();
  const cases: Array<[string, Uint8Array | undefined]> = [
    ['none: SHA-1 by default', undefined],
    ['an empty sequence: SHA-1 by default', pssParams()],
    ['not a sequence', NULL],
    [
      'SHA-1',
      pssParams(explicit(0, hashId('1.3.14.3.2.26')), explicit(1, mgf1(hashId('1.3.14.3.2.26')))),
    ],
    [
      'hash parameters other than NULL',
      pssParams(explicit(0, hashId(SHA256, encodeSmallInteger(1))), mask as Uint8Array),
    ],
    [
      'a hash identifier with more parts',
      pssParams(explicit(0, hashId(SHA256, NULL, NULL)), mask as Uint8Array),
    ],
    ['a hash identifier without an OID', pssParams(explicit(0, sequence([])), mask as Uint8Array)],
    ['MGF1 with another hash', pssParams(hash as Uint8Array, explicit(1, mgf1(hashId(SHA384))))],
    [
      'MGF1 without a hash',
      pssParams(hash as Uint8Array, explicit(1, sequence([encodeOid('1.2.840.113549.1.1.8')]))),
    ],
    [
      'a mask function other than MGF1',
      pssParams(hash as Uint8Array, explicit(1, sequence([encodeOid('1.2.3.4'), hashId(SHA256)]))),
    ],
    ['no mask function: MGF1 with SHA-1', pssParams(hash as Uint8Array, salt as Uint8Array)],
    ['trailer 2', pssParams(...standard(), explicit(3, encodeSmallInteger(2)))],
    [
      'an empty trailer integer',
      pssParams(...standard(), explicit(3, encodeTlv(Tag.INTEGER, new Uint8Array()))),
    ],
    [
      'a salt beyond 31 bits',
      pssParams(
        hash as Uint8Array,
        mask as Uint8Array,
        explicit(2, encodeTlv(Tag.INTEGER, Uint8Array.of(1, 0, 0, 0, 0))),
      ),
    ],
    [
      'a negative salt',
      pssParams(
        hash as Uint8Array,
        mask as Uint8Array,
        explicit(2, encodeTlv(Tag.INTEGER, Uint8Array.of(0xff))),
      ),
    ],
    [
      'a salt that is no integer',
      pssParams(hash as Uint8Array, mask as Uint8Array, explicit(2, NULL)),
    ],
    ['a field tagged [4]', pssParams(...standard(), explicit(4, encodeSmallInteger(1)))],
    [
      'a field holding two values',
      pssParams(explicit(0, hashId(SHA256), hashId(SHA256)), mask as Uint8Array),
    ],
    ['an empty field', pssParams(explicit(0), mask as Uint8Array)],
  ];
  for (const [name, params] of cases)
    t.equal(csrSignatureProblem(request(params)), UNSUPPORTED_SIGNATURE_ALGORITHM, name);
});

t.test('the key must be of the algorithm’s type, and one Go can use', async (t) => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ed = generateKeyPairSync('ed25519');
  const ed448 = generateKeyPairSync('ed448');
  const ecSignature = sign('sha256', signed, ec.privateKey);
  t.equal(
    csrSignatureProblem(request(undefined, ecSignature, '1.2.840.10045.4.3.2', ec.publicKey)),
    undefined,
    'ECDSA with SHA-256',
  );
  t.equal(
    csrSignatureProblem(request(undefined, ecSignature, '1.2.840.10045.4.3.2', rsa.publicKey)),
    'x509: signature algorithm specifies an ECDSA public key, but have public key of type *rsa.PublicKey',
  );
  t.equal(
    csrSignatureProblem(request(pssParams(...standard()), pssSignature(32), PSS, ed.publicKey)),
    'x509: signature algorithm specifies an RSA public key, but have public key of type ed25519.PublicKey',
  );
  t.equal(
    csrSignatureProblem(
      request(undefined, sign(null, signed, ed448.privateKey), '1.3.101.112', ed448.publicKey),
    ),
    UNSUPPORTED_SIGNATURE_ALGORITHM,
    'an Ed448 key',
  );
});
