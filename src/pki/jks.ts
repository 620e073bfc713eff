import { createHash, type KeyObject, randomBytes, type X509Certificate } from 'node:crypto';
import { encodeOctetString, encodeOid, encodeTlv, sequence, Tag } from './der.js';
import { PkiError } from './errors.js';
import { publicKeysEqual } from './keys.js';

// Java's proprietary JKS keystore (version 2), as `keytool` and KeyStore.getInstance("JKS")
// read it. cert-manager writes keystore.jks and truststore.jks in this format.

const MAGIC = 0xfeedfeed;
const VERSION = 2;
const PRIVATE_KEY_ENTRY = 1;
const TRUSTED_CERT_ENTRY = 2;
// Sun's KeyProtector algorithm, the one JKS uses for private keys.
const KEY_PROTECTOR_OID = '1.3.6.1.4.1.42.2.17.1.1';
// The keystore's integrity check mixes in this phrase (sun.security.provider.JavaKeyStore).
const WHITENER = 'Mighty Aphrodite';
const SHA1_LENGTH = 20;

/** One entry of a JKS keystore: a private key with its chain (leaf first), or a trusted certificate. */
export type JksEntry =
  | { alias: string; key: KeyObject; chain: readonly X509Certificate[] }
  | { alias: string; trusted: X509Certificate };

/** A password as Java hashes it: each UTF-16 code unit, big-endian. */
function passwordBytes(password: string): Buffer {
  const bytes = Buffer.alloc(password.length * 2);
  for (let i = 0; i < password.length; i++) bytes.writeUInt16BE(password.charCodeAt(i), i * 2);
  return bytes;
}

function sha1(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha1');
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** Java's DataOutput.writeUTF: a 2-byte length, then modified UTF-8 (NUL as two bytes). */
function javaUtf(text: string): Buffer {
  const parts: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x01 && c <= 0x7f) parts.push(c);
    else if (c <= 0x7ff) parts.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else parts.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  if (parts.length > 0xffff) throw new PkiError('JKS alias too long');
  const out = Buffer.alloc(2 + parts.length);
  out.writeUInt16BE(parts.length, 0);
  Buffer.from(parts).copy(out, 2);
  return out;
}

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value, 0);
  return out;
}

function u64(value: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(value), 0);
  return out;
}

/**
 * Protects a PKCS#8 key as Sun's KeyProtector does: a SHA-1 keystream seeded by the password
 * and a random salt, XORed with the key, followed by SHA-1(password, key) as the check.
 */
function protectKey(pkcs8: Buffer, password: Buffer, salt: Buffer): Uint8Array {
  const stream = Buffer.alloc(Math.ceil(pkcs8.length / SHA1_LENGTH) * SHA1_LENGTH);
  let digest: Buffer = salt;
  for (let offset = 0; offset < stream.length; offset += SHA1_LENGTH) {
    digest = sha1(password, digest);
    digest.copy(stream, offset);
  }
  const masked = Buffer.alloc(pkcs8.length);
  for (let i = 0; i < pkcs8.length; i++) masked[i] = (pkcs8[i] ?? 0) ^ (stream[i] ?? 0);
  const protectedKey = Buffer.concat([salt, masked, sha1(password, pkcs8)]);
  // EncryptedPrivateKeyInfo { AlgorithmIdentifier { KeyProtector, NULL }, OCTET STRING }.
  return sequence([
    sequence([encodeOid(KEY_PROTECTOR_OID), encodeTlv(Tag.NULL, new Uint8Array(0))]),
    encodeOctetString(protectedKey),
  ]);
}

function certificateBytes(certificate: X509Certificate): Buffer {
  return Buffer.concat([javaUtf('X.509'), u32(certificate.raw.length), certificate.raw]);
}

/**
 * Encodes a JKS keystore protected by password (the same password protects each key, as
 * cert-manager does). Entries keep their order; created is their creation date.
 */
export function encodeJks(
  entries: readonly JksEntry[],
  password: string,
  created: Date = new Date(),
  random: (size: number) => Buffer = randomBytes,
): Buffer {
  const secret = passwordBytes(password);
  const parts: Buffer[] = [u32(MAGIC), u32(VERSION), u32(entries.length)];
  for (const entry of entries) {
    if ('trusted' in entry) {
      parts.push(u32(TRUSTED_CERT_ENTRY), javaUtf(entry.alias), u64(created.getTime()));
      parts.push(certificateBytes(entry.trusted));
      continue;
    }
    const [leaf] = entry.chain;
    if (!leaf) throw new PkiError(`JKS entry "${entry.alias}": no certificate chain`);
    if (!publicKeysEqual(entry.key, leaf.publicKey))
      throw new PkiError(
        `JKS entry "${entry.alias}": the private key does not match the leaf certificate`,
      );
    const pkcs8 = entry.key.export({ type: 'pkcs8', format: 'der' });
    const protectedKey = protectKey(pkcs8, secret, random(SHA1_LENGTH));
    parts.push(u32(PRIVATE_KEY_ENTRY), javaUtf(entry.alias), u64(created.getTime()));
    parts.push(u32(protectedKey.length), Buffer.from(protectedKey), u32(entry.chain.length));
    for (const certificate of entry.chain) parts.push(certificateBytes(certificate));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, sha1(secret, Buffer.from(WHITENER, 'utf8'), body)]);
}
