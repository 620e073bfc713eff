import { PkiError } from './errors.js';

// RC2 (RFC 2268), encryption only. PKCS#12's pbeWithSHAAnd40BitRC2-CBC, cert-manager's default
// for keystore.p12 certificates, needs it, and Node's OpenSSL 3 keeps RC2 in the legacy
// provider, which Node does not load.

const BLOCK = 8;

// RFC 2268 section 2: PITABLE, a permutation of 0..255 derived from the digits of pi.
const PITABLE = Buffer.from(
  'd978f9c419ddb5ed28e9fd794aa0d89dc67e37832b76538e624c6488448bfba2' +
    '179a59f587b34f1361456d8d09817d32bd8f40eb86b77b0bf09521225c6b4e82' +
    '54d66593ce60b21c7356c014a78cf1dc1275ca1f3bbee4d1423dd430a33cb626' +
    '6fbf0eda4669075727f21d9bbc944303f811c7f690ef3ee706c3d52fc8661ed7' +
    '08e8eade8052eef784aa72ac354d6a2a961ad2715a1549744b9fd05e0418a4ec' +
    'c2e0416e0f51cbcc2491af50a1f47039997c3a8523b8b47afc02365b25559731' +
    '2d5dfa98e38a92ae05df2910676cbac9d300e6cfe19ea82c6316013f58e289a9' +
    '0d38341bab33ffb0bb480c5fb9b1cd2ec5f3db47e5a59c770aa62068fe7fc1ad',
  'hex',
);

const pi = (index: number): number => PITABLE.readUInt8(index & 0xff);

/** Expands an RC2 key (1-128 bytes) with the given effective key bits (1-1024) into its 64 16-bit subkeys. */
export function rc2ExpandKey(key: Uint8Array, effectiveBits: number): Uint16Array {
  if (key.length < 1 || key.length > 128) {
    throw new PkiError(`RC2 key must be 1 to 128 bytes, got ${key.length}`);
  }
  if (!Number.isInteger(effectiveBits) || effectiveBits < 1 || effectiveBits > 1024) {
    throw new PkiError(`RC2 effective key bits must be 1 to 1024, got ${effectiveBits}`);
  }
  const l = Buffer.alloc(128);
  l.set(key);
  const t = key.length;
  for (let i = t; i < 128; i++) l.writeUInt8(pi(l.readUInt8(i - 1) + l.readUInt8(i - t)), i);
  // Reducing the key to its effective bits is what makes RC2-40 a 40-bit cipher.
  const t8 = Math.ceil(effectiveBits / 8);
  const tm = 0xff >> (8 * t8 - effectiveBits);
  l.writeUInt8(pi(l.readUInt8(128 - t8) & tm), 128 - t8);
  for (let i = 127 - t8; i >= 0; i--) l.writeUInt8(pi(l.readUInt8(i + 1) ^ l.readUInt8(i + t8)), i);
  const k = new Uint16Array(64);
  for (let i = 0; i < 64; i++) k.set([l.readUInt16LE(2 * i)], i);
  return k;
}

const rol16 = (x: number, s: number): number => ((x << s) | (x >>> (16 - s))) & 0xffff;

/** Encrypts the 8-byte block at offset of data in place with expanded key k (RFC 2268 section 3). */
function encryptBlockInPlace(k: Uint16Array, data: DataView, offset: number): void {
  const subkey = (i: number): number => k[i] ?? 0;
  let r0 = data.getUint16(offset, true);
  let r1 = data.getUint16(offset + 2, true);
  let r2 = data.getUint16(offset + 4, true);
  let r3 = data.getUint16(offset + 6, true);
  let j = 0;
  const mix = (): void => {
    r0 = rol16((r0 + subkey(j++) + (r3 & r2) + (~r3 & r1)) & 0xffff, 1);
    r1 = rol16((r1 + subkey(j++) + (r0 & r3) + (~r0 & r2)) & 0xffff, 2);
    r2 = rol16((r2 + subkey(j++) + (r1 & r0) + (~r1 & r3)) & 0xffff, 3);
    r3 = rol16((r3 + subkey(j++) + (r2 & r1) + (~r2 & r0)) & 0xffff, 5);
  };
  const mash = (): void => {
    r0 = (r0 + subkey(r3 & 63)) & 0xffff;
    r1 = (r1 + subkey(r0 & 63)) & 0xffff;
    r2 = (r2 + subkey(r1 & 63)) & 0xffff;
    r3 = (r3 + subkey(r2 & 63)) & 0xffff;
  };
  for (let i = 0; i < 5; i++) mix();
  mash();
  for (let i = 0; i < 6; i++) mix();
  mash();
  for (let i = 0; i < 5; i++) mix();
  data.setUint16(offset, r0, true);
  data.setUint16(offset + 2, r1, true);
  data.setUint16(offset + 4, r2, true);
  data.setUint16(offset + 6, r3, true);
}

/** Encrypts one 8-byte block with RC2 (ECB, no padding): what RFC 2268's test vectors check. */
export function rc2EncryptBlock(key: Uint8Array, effectiveBits: number, block: Uint8Array): Buffer {
  if (block.length !== BLOCK) throw new PkiError(`RC2 block must be 8 bytes, got ${block.length}`);
  const out = Buffer.from(block);
  encryptBlockInPlace(
    rc2ExpandKey(key, effectiveBits),
    new DataView(out.buffer, out.byteOffset, BLOCK),
    0,
  );
  return out;
}

/** Encrypts with RC2 in CBC mode with PKCS#5 padding, as PKCS#12's RC2 PBE does. */
export function rc2CbcEncrypt(
  key: Uint8Array,
  effectiveBits: number,
  iv: Uint8Array,
  plaintext: Uint8Array,
): Buffer {
  if (iv.length !== BLOCK) throw new PkiError(`RC2 IV must be 8 bytes, got ${iv.length}`);
  const k = rc2ExpandKey(key, effectiveBits);
  const padding = BLOCK - (plaintext.length % BLOCK);
  const out = Buffer.alloc(plaintext.length + padding, padding);
  out.set(plaintext);
  const data = new DataView(out.buffer, out.byteOffset, out.length);
  let previous = new DataView(iv.buffer, iv.byteOffset, BLOCK);
  let previousOffset = 0;
  for (let offset = 0; offset < out.length; offset += BLOCK) {
    for (let w = 0; w < BLOCK; w += 2) {
      const chained =
        data.getUint16(offset + w, true) ^ previous.getUint16(previousOffset + w, true);
      data.setUint16(offset + w, chained, true);
    }
    encryptBlockInPlace(k, data, offset);
    previous = data;
    previousOffset = offset;
  }
  return out;
}
