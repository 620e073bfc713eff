import { createPublicKey, generateKeyPairSync, type KeyObject, verify } from 'node:crypto';
import t from 'tap';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import {
  contentOf,
  encodeOctetString,
  encodeTime,
  encodeUnsignedInteger,
  rawOf,
  readChildren,
  readSingle,
  Tag,
} from '../../src/pki/der.js';
import type { SigningAlgorithm } from '../../src/pki/keys.js';
import { algorithmIdentifierOf, signBytes, signedStructure } from '../../src/pki/signing.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const ed = generateKeyPairSync('ed25519').privateKey;

// The AlgorithmIdentifier bytes are those the replaced encoder wrote (der-encoder.test.ts
// compares whole structures); this table names each one.
const ALGORITHMS: Array<[SigningAlgorithm, KeyObject, string, string | null]> = [
  [{ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, rsa, '300d06092a864886f70d01010b0500', 'sha256'],
  [{ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' }, rsa, '300d06092a864886f70d01010c0500', 'sha384'],
  [{ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' }, rsa, '300d06092a864886f70d01010d0500', 'sha512'],
  [{ name: 'ECDSA', hash: 'SHA-256' }, p256, '300a06082a8648ce3d040302', 'sha256'],
  [{ name: 'ECDSA', hash: 'SHA-384' }, p256, '300a06082a8648ce3d040303', 'sha384'],
  [{ name: 'ECDSA', hash: 'SHA-512' }, p256, '300a06082a8648ce3d040304', 'sha512'],
  [{ name: 'Ed25519' }, ed, '300506032b6570', null],
];

t.test('each algorithm: its AlgorithmIdentifier, and a signature node verifies', (t) => {
  // Data as the structures hold it: one DER element.
  const data = encodeOctetString(Buffer.from('to be signed'));
  for (const [algorithm, key, identifier, hash] of ALGORITHMS) {
    const name = JSON.stringify(algorithm);
    t.equal(hex(algorithmIdentifierOf(algorithm)), identifier, `${name}: identifier`);
    const signature = signBytes(key, algorithm, data);
    const publicKey = createPublicKey(key);
    const options = key === p256 ? { key: publicKey, dsaEncoding: 'der' as const } : publicKey;
    t.ok(verify(hash, data, options, signature), `${name}: verifies`);
    t.notOk(verify(hash, Buffer.from('other'), options, signature), `${name}: only for its data`);
    // SEQUENCE { the data as is, the identifier, BIT STRING { 0 unused bits, the signature } }.
    const signed = signedStructure(data, key, algorithm);
    const [tbs, id, bits] = readChildren(signed, readSingle(signed));
    t.same(
      [tbs && hex(rawOf(signed, tbs)), id && hex(rawOf(signed, id)), bits?.tag],
      [hex(data), identifier, Tag.BIT_STRING],
      `${name}: the signed structure`,
    );
    const value = bits ? contentOf(signed, bits) : new Uint8Array();
    t.equal(value[0], 0, `${name}: no unused bits`);
    t.ok(verify(hash, data, options, value.subarray(1)), `${name}: its signature verifies`);
  }
  t.end();
});

t.test('X.509 times: UTCTime for 1950-2049, GeneralizedTime otherwise, whole seconds', (t) => {
  const cases: Array<[string, string]> = [
    ['1949-12-31T23:59:59.000Z', '180f31393439313233313233353935395a'],
    ['1950-01-01T00:00:00.000Z', '170d3530303130313030303030305a'],
    ['2049-12-31T23:59:59.999Z', '170d3439313233313233353935395a'],
    ['2050-01-01T00:00:00.000Z', '180f32303530303130313030303030305a'],
    ['9999-12-31T23:59:59.000Z', '180f39393939313233313233353935395a'],
  ];
  for (const [iso, expected] of cases) t.equal(hex(encodeTime(new Date(iso))), expected, iso);
  for (const bad of [new Date(Number.NaN), new Date('+010000-01-01T00:00:00Z')])
    t.throws(() => encodeTime(bad), { name: 'PkiError', message: /as an X\.509 time/ });
  t.end();
});

t.test('unsigned INTEGERs are minimal and positive', (t) => {
  const cases: Array<[string, string]> = [
    ['', '020100'],
    ['00', '020100'],
    ['0000', '020100'],
    ['7f', '02017f'],
    ['80', '02020080'],
    ['000080', '02020080'],
    ['0001ff', '020201ff'],
  ];
  for (const [input, expected] of cases)
    t.equal(hex(encodeUnsignedInteger(Buffer.from(input, 'hex'))), expected, input || 'empty');
  t.end();
});

t.test('a public key signs nothing: refused with a PkiError before any encoding', async (t) => {
  const publicKey = createPublicKey(p256);
  const error = { name: 'PkiError', message: 'a private key is required, got a public key' };
  await t.rejects(createCsr({ key: publicKey, dnsNames: ['a.example'] }), error);
  await t.rejects(
    createSelfSignedCa({ key: publicKey, commonName: 'ca', durationMs: 60_000 }),
    error,
  );
  const csr = await parseCsr(await createCsr({ key: p256, dnsNames: ['a.example'] }));
  await t.rejects(
    signCertificate(
      csr,
      { durationMs: 60_000, isCA: false, usages: [] },
      { selfSigned: publicKey },
    ),
    error,
  );
});

t.test('a notAfter beyond year 9999 is refused, not written as a broken time', async (t) => {
  const csr = await parseCsr(await createCsr({ key: p256, dnsNames: ['a.example'] }));
  await t.rejects(
    signCertificate(
      csr,
      { durationMs: 9000 * 365 * 86_400_000, isCA: false, usages: [] },
      { selfSigned: p256 },
    ),
    { name: 'PkiError', message: /as an X\.509 time/ },
  );
});
