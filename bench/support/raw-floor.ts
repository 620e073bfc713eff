/**
 * The raw floor of an issuance: what the crypto alone costs, on synchronous `node:crypto` with
 * the DER written by hand (a few fixed shapes, no library): a key, a CSR for it, the CSR's
 * signature checked, a leaf signed by a CA, the leaf as PEM. Deliberately independent of
 * src/pki, so the project's own encoder is measured against it, never against itself.
 */
import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';
import { performance } from 'node:perf_hooks';

/** The key types the benches issue for. */
export type RawKeyType = 'ecdsa-p256' | 'ed25519' | 'rsa-2048';

// --- DER, just the forms used below ------------------------------------------------------

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const seq = (...content: Buffer[]) => tlv(0x30, ...content);
const set = (...content: Buffer[]) => tlv(0x31, ...content);
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const bitString = (bytes: Buffer) => tlv(0x03, Buffer.from([0]), bytes);
const octetString = (bytes: Buffer) => tlv(0x04, bytes);

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const out = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) groups.unshift((v & 0x7f) | 0x80);
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

function positiveInteger(bytes: Buffer): Buffer {
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14);
  return tlv(0x17, Buffer.from(`${text}Z`, 'ascii'));
}

const commonName = (cn: string) => seq(set(seq(oid('2.5.4.3'), utf8(cn))));

/** The signature AlgorithmIdentifier and digest for a key of type. */
function algorithm(type: RawKeyType): { id: Buffer; digest: string | null } {
  if (type === 'ecdsa-p256') return { id: seq(oid('1.2.840.10045.4.3.2')), digest: 'sha256' };
  if (type === 'ed25519') return { id: seq(oid('1.3.101.112')), digest: null };
  return { id: seq(oid('1.2.840.113549.1.1.11'), tlv(0x05)), digest: 'sha256' };
}

function generate(type: RawKeyType): { privateKey: KeyObject; publicKey: KeyObject } {
  if (type === 'ecdsa-p256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  if (type === 'ed25519') return generateKeyPairSync('ed25519');
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

function signed(type: RawKeyType, body: Buffer, key: KeyObject): Buffer {
  const { id, digest } = algorithm(type);
  return seq(body, id, bitString(sign(digest, body, key)));
}

const sanExtension = (dns: string) =>
  seq(oid('2.5.29.17'), octetString(seq(tlv(0x82, Buffer.from(dns, 'ascii')))));

/** A PKCS#10 CSR with a CN and one DNS SAN, signed by the key. */
function csr(type: RawKeyType, key: { privateKey: KeyObject; publicKey: KeyObject }, name: string) {
  const spki = key.publicKey.export({ format: 'der', type: 'spki' });
  const extensionRequest = seq(
    oid('1.2.840.113549.1.9.14'),
    set(seq(sanExtension(`${name}.bench.svc`))),
  );
  const info = seq(
    tlv(0x02, Buffer.from([0])),
    commonName(name),
    spki,
    tlv(0xa0, extensionRequest),
  );
  return signed(type, info, key.privateKey);
}

/** The TLV at offset: where its content starts and where it ends. */
function element(der: Buffer, offset: number): { content: number; end: number } {
  const first = der[offset + 1] ?? 0;
  let size = first;
  let header = 2;
  if (first & 0x80) {
    size = 0;
    for (let i = 0; i < (first & 0x7f); i++) size = size * 256 + (der[offset + 2 + i] ?? 0);
    header += first & 0x7f;
  }
  return { content: offset + header, end: offset + header + size };
}

/** Checks the CSR's signature with the key it carries; returns that key, as SPKI DER. */
function verifyCsr(type: RawKeyType, der: Buffer): Buffer {
  const outer = element(der, 0);
  const info = element(der, outer.content);
  const infoBytes = der.subarray(outer.content, info.end);
  const algorithmId = element(der, info.end);
  const signature = element(der, algorithmId.end);
  const version = element(der, info.content);
  const subject = element(der, version.end);
  const spki = der.subarray(subject.end, element(der, subject.end).end);
  const publicKey = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  const sig = der.subarray(signature.content + 1, signature.end);
  if (!verify(algorithm(type).digest, infoBytes, publicKey, sig)) {
    throw new Error('raw floor: the CSR signature does not verify');
  }
  return spki;
}

/** A CA for the floor: its key, its name and key id. */
export interface RawCA {
  type: RawKeyType;
  key: KeyObject;
  name: Buffer;
  keyId: Buffer;
}

/** A fresh CA with a key of type (ECDSA P-256 unless told). */
export function rawCA(type: RawKeyType = 'ecdsa-p256'): RawCA {
  const { privateKey, publicKey } = generate(type);
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  return { type, key: privateKey, name: commonName('raw floor CA'), keyId: spki.subarray(-20) };
}

/** Signs a 24 h leaf for the key in spki, by ca, as PEM. */
function leaf(ca: RawCA, spki: Buffer, name: string): string {
  const now = Date.now();
  const extensions = tlv(
    0xa3,
    seq(
      sanExtension(`${name}.bench.svc`),
      seq(
        oid('2.5.29.15'),
        tlv(0x01, Buffer.from([0xff])),
        octetString(bitString(Buffer.from([0xa0]))),
      ),
      seq(oid('2.5.29.19'), tlv(0x01, Buffer.from([0xff])), octetString(seq())),
      seq(oid('2.5.29.35'), octetString(seq(tlv(0x80, ca.keyId)))),
    ),
  );
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    positiveInteger(randomBytes(16)),
    algorithm(ca.type).id,
    ca.name,
    seq(utcTime(new Date(now)), utcTime(new Date(now + 86_400_000))),
    commonName(name),
    spki,
    extensions,
  );
  const der = signed(ca.type, tbs, ca.key);
  const base64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
}

/** One whole issuance: key + CSR + verify + leaf + PEM. Returns the PEM (so nothing is elided). */
export function rawIssuance(ca: RawCA, type: RawKeyType, name: string): string {
  const key = generate(type);
  return leaf(ca, verifyCsr(type, csr(type, key, name)), name);
}

/** A signer's share only, for a CSR made beforehand: verify + leaf + PEM. */
export function rawSigning(ca: RawCA, type: RawKeyType, csrDer: Buffer, name: string): string {
  return leaf(ca, verifyCsr(type, csrDer), name);
}

/** A CSR (DER) for a fresh key of type, for rawSigning. */
export function rawCsr(type: RawKeyType, name: string): Buffer {
  return csr(type, generate(type), name);
}

/** Milliseconds per operation: the median of `samples` timed runs of fn, after a warm-up. */
export function timePerOperation(
  fn: (i: number) => unknown,
  samples: number,
): {
  p50: number;
  p95: number;
  perSecond: number;
} {
  for (let i = 0; i < Math.min(20, samples); i++) fn(i);
  const times: number[] = [];
  const start = performance.now();
  for (let i = 0; i < samples; i++) {
    const began = performance.now();
    fn(i);
    times.push(performance.now() - began);
  }
  const elapsed = performance.now() - start;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] ?? 0;
  return { p50: at(0.5), p95: at(0.95), perSecond: (samples / elapsed) * 1000 };
}
