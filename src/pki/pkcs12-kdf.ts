import { createHash } from 'node:crypto';
import { PkiError } from './errors.js';

// PKCS#12's own key derivation (RFC 7292 Appendix B.2). The legacy PBEs (3DES, RC2) derive
// their key and IV with it, and every PKCS#12 MAC derives its HMAC key with it, including
// the SHA-256 MAC of the modern profile.
//
// Ours, not node-forge's forge.pkcs12.generateKey (which gives the same bytes): forge hashes
// in JavaScript, we hash with node:crypto. One 2048-iteration derivation costs 4.2 ms of CPU
// with forge against 2.2 ms with this (SHA-256: 6.1 ms against 2.1 ms), and a LegacyRC2
// keystore runs five of them.

/** What the derived bytes are for (RFC 7292 B.3): the ID byte mixed into the derivation. */
export const Pkcs12KeyPurpose = { KEY: 1, IV: 2, MAC: 3 } as const;

/** Hashes the derivation runs on; both have a 64-byte block. */
export type Pkcs12KdfHash = 'sha1' | 'sha256';

const BLOCK_BYTES = 64;

/** A password as the PKCS#12 KDF takes it: UTF-16BE code units then a 0x0000 terminator (a BMPString, as OpenSSL and Java write it). */
export function pkcs12Password(password: string): Buffer {
  const bytes = Buffer.alloc(password.length * 2 + 2);
  for (let i = 0; i < password.length; i++) bytes.writeUInt16BE(password.charCodeAt(i), i * 2);
  return bytes;
}

// S and P of B.2 step 2-3: the input repeated to a whole number of blocks, empty stays empty.
function repeatToBlocks(input: Uint8Array): Buffer {
  if (input.length === 0) return Buffer.alloc(0);
  return Buffer.alloc(BLOCK_BYTES * Math.ceil(input.length / BLOCK_BYTES), input);
}

/** Derives length bytes from password (see pkcs12Password) and salt for purpose id (RFC 7292 B.2). */
export function pkcs12Kdf(
  hash: Pkcs12KdfHash,
  password: Uint8Array,
  salt: Uint8Array,
  iterations: number,
  id: number,
  length: number,
): Buffer {
  if (!Number.isSafeInteger(iterations) || iterations < 1) {
    throw new PkiError(`PKCS#12 KDF iterations must be a positive integer, got ${iterations}`);
  }
  if (!Number.isInteger(id) || id < 1 || id > 255) {
    throw new PkiError(`PKCS#12 KDF purpose must be a byte, got ${id}`);
  }
  const diversifier = Buffer.alloc(BLOCK_BYTES, id);
  const input = Buffer.concat([repeatToBlocks(salt), repeatToBlocks(password)]);
  const blocks: Buffer[] = [];
  for (let produced = 0; produced < length; ) {
    let a = createHash(hash).update(diversifier).update(input).digest();
    for (let r = 1; r < iterations; r++) a = createHash(hash).update(a).digest();
    blocks.push(a);
    produced += a.length;
    if (produced >= length) break;
    // Step 6B-C: each block of I becomes (I_j + B + 1) mod 2^512, B being A repeated.
    const b = Buffer.alloc(BLOCK_BYTES, a);
    for (let j = 0; j < input.length; j += BLOCK_BYTES) {
      let carry = 1;
      for (let k = BLOCK_BYTES - 1; k >= 0; k--) {
        const sum = input.readUInt8(j + k) + b.readUInt8(k) + carry;
        input.writeUInt8(sum & 0xff, j + k);
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(blocks).subarray(0, length);
}
