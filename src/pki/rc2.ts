import { createRequire } from 'node:module';
import type * as Forge from 'node-forge';
import { PkiError } from './errors.js';

// RC2 (RFC 2268), encryption only. PKCS#12's pbeWithSHAAnd40BitRC2-CBC, cert-manager's default
// for keystore.p12 certificates, needs it, and Node's OpenSSL 3 keeps RC2 in the legacy
// provider, which Node does not load; node-forge's forge.rc2 does the cipher.
//
// forge's key schedule masks the last key byte with 0xff >> (bits & 7) where RFC 2268 has
// 0xff >> (8 * ceil(bits / 8) - bits): the two agree only for effective key sizes that are a
// multiple of 8 (the RFC's 63- and 129-bit test vectors come out wrong). PKCS#12 uses 40 bits;
// other sizes are refused here rather than encrypted wrongly.

const BLOCK = 8;

// node-forge is ~0.9 MB of JavaScript that every process importing the pki modules would load at
// start (~70 ms of CPU) for a cipher only a PKCS#12 keystore with the legacy profile uses: it is
// required at the first such encryption instead. A CommonJS package, so require() is synchronous
// and gives the module an ES import would.
let loadedForge: typeof Forge | undefined;

function forge(): typeof Forge {
  loadedForge ??= createRequire(import.meta.url)('node-forge') as typeof Forge;
  return loadedForge;
}

function bytes(data: Uint8Array): Forge.util.ByteStringBuffer {
  return forge().util.createBuffer(Buffer.from(data).toString('binary'));
}

/** forge's RC2 encryption with key and effectiveBits, checked first; CBC from iv, or ECB without one. */
function encryptor(key: Uint8Array, effectiveBits: number, iv?: Uint8Array): Forge.rc2.cipher {
  if (key.length < 1 || key.length > 128) {
    throw new PkiError(`RC2 key must be 1 to 128 bytes, got ${key.length}`);
  }
  const bits = effectiveBits;
  if (!Number.isInteger(bits) || bits % 8 !== 0 || bits < 8 || bits > 1024) {
    throw new PkiError(
      `RC2 effective key bits must be a multiple of 8 from 8 to 1024, got ${bits}`,
    );
  }
  if (iv !== undefined && iv.length !== BLOCK) {
    throw new PkiError(`RC2 IV must be 8 bytes, got ${iv.length}`);
  }
  const cipher = forge().rc2.createEncryptionCipher(bytes(key), effectiveBits);
  cipher.start(iv === undefined ? null : bytes(iv));
  return cipher;
}

/** Encrypts one 8-byte block with RC2 (ECB, no padding): what RFC 2268's test vectors check. */
export function rc2EncryptBlock(key: Uint8Array, effectiveBits: number, block: Uint8Array): Buffer {
  if (block.length !== BLOCK) throw new PkiError(`RC2 block must be 8 bytes, got ${block.length}`);
  const cipher = encryptor(key, effectiveBits);
  cipher.update(bytes(block));
  return Buffer.from(cipher.output.getBytes(), 'binary');
}

/** Encrypts with RC2 in CBC mode with PKCS#5 padding, as PKCS#12's RC2 PBE does. */
export function rc2CbcEncrypt(
  key: Uint8Array,
  effectiveBits: number,
  iv: Uint8Array,
  plaintext: Uint8Array,
): Buffer {
  const cipher = encryptor(key, effectiveBits, iv);
  cipher.update(bytes(plaintext));
  // Encryption with the default padding cannot fail: finish only pads the last block.
  cipher.finish();
  return Buffer.from(cipher.output.getBytes(), 'binary');
}
