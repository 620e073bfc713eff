import { quoted } from '../api/echoed-value.js';
import { PkiError } from './errors.js';

// A deliberately small DER codec. The pki layer needs byte-exact control over a
// few structures (names, SANs, extension values) that must be copied verbatim
// or encoded exactly like Go does; a schema library would re-encode them.

/** Universal and common tags used by the pki layer (single-byte identifiers). */
export const Tag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  NUMERIC_STRING: 0x12,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  VISIBLE_STRING: 0x1a,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** One decoded TLV: offsets into the buffer it was read from. */
export interface Tlv {
  tag: number;
  start: number;
  contentStart: number;
  end: number;
}

/** Concatenates byte arrays. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

// Encoders write each TLV into one allocation (header and content together): a certificate is
// a few dozen nested TLVs, and building each from three small arrays and a copy showed in
// profiles of the signer as allocation and GC.

/** The leading 0x00 of a positive INTEGER or of a whole-byte BIT STRING. */
const ZERO_BYTE = Uint8Array.of(0);

/** How many bytes the DER length field of a content of `length` bytes takes. */
function lengthSize(length: number): number {
  if (length < 0x80) return 1;
  let size = 1;
  for (let n = length; n > 0; n = Math.floor(n / 256)) size++;
  return size;
}

/** Writes tag and length at the start of out; returns the offset where the content goes. */
function writeHeader(out: Uint8Array, tag: number, length: number): number {
  out[0] = tag;
  const size = lengthSize(length);
  if (size === 1) {
    out[1] = length;
    return 2;
  }
  out[1] = 0x80 | (size - 1);
  for (let i = size, n = length; i > 1; i--, n = Math.floor(n / 256)) out[i] = n % 256;
  return size + 1;
}

/** Encodes one TLV whose content is the parts, in order, in a single allocation. */
function encodeParts(tag: number, parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(1 + lengthSize(length) + length);
  let offset = writeHeader(out, tag, length);
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Encodes one TLV with a single-byte identifier. */
export function encodeTlv(tag: number, content: Uint8Array): Uint8Array {
  return encodeParts(tag, [content]);
}

/** Encodes a SEQUENCE of already encoded elements. */
export function sequence(elements: readonly Uint8Array[]): Uint8Array {
  return encodeParts(Tag.SEQUENCE, elements);
}

/** Encodes a SET OF with its elements sorted as DER (X.690 11.6) and Go's encoding/asn1 require. */
export function setOf(elements: readonly Uint8Array[]): Uint8Array {
  return encodeParts(Tag.SET, [...elements].sort(Buffer.compare));
}

/** Encodes a context-specific tag [n], constructed or primitive. */
export function contextTag(n: number, content: Uint8Array, constructed: boolean): Uint8Array {
  return encodeTlv((constructed ? 0xa0 : 0x80) | n, content);
}

/** Encodes a BOOLEAN. */
export function encodeBoolean(value: boolean): Uint8Array {
  return encodeTlv(Tag.BOOLEAN, Uint8Array.of(value ? 0xff : 0x00));
}

/** Encodes an OCTET STRING. */
export function encodeOctetString(content: Uint8Array): Uint8Array {
  return encodeTlv(Tag.OCTET_STRING, content);
}

const utf8 = new TextEncoder();

/** Encodes a string type whose content is the UTF-8 (or ASCII) bytes of value. */
export function encodeString(tag: number, value: string): Uint8Array {
  return encodeTlv(tag, utf8.encode(value));
}

/** Encodes a non-negative INTEGER small enough for a JS number (versions, iteration counts). */
export function encodeSmallInteger(value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new PkiError(`cannot encode ${value} as a non-negative INTEGER`);
  }
  const bytes: number[] = [];
  for (let n = value; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  // Zero is one 0x00 byte; a leading byte with the top bit set needs a 0x00 to stay positive.
  if ((bytes[0] ?? 0x80) >= 0x80) bytes.unshift(0);
  return encodeTlv(Tag.INTEGER, Uint8Array.from(bytes));
}

/** Encodes a non-negative INTEGER from its big-endian magnitude (a serial number): minimal, and positive. */
export function encodeUnsignedInteger(magnitude: Uint8Array): Uint8Array {
  let first = 0;
  while (first < magnitude.length - 1 && magnitude[first] === 0) first++;
  const bytes = magnitude.subarray(first);
  if (bytes.length === 0) return encodeTlv(Tag.INTEGER, Uint8Array.of(0));
  // A leading byte with the top bit set needs a 0x00 to stay positive.
  return encodeParts(Tag.INTEGER, (bytes[0] as number) >= 0x80 ? [ZERO_BYTE, bytes] : [bytes]);
}

/** Encodes a BIT STRING whose content is whole bytes (no unused bits): signatures, keys. */
export function encodeBitString(bytes: Uint8Array): Uint8Array {
  return encodeParts(Tag.BIT_STRING, [ZERO_BYTE, bytes]);
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * Encodes an X.509 Time as RFC 5280 4.1.2.5 requires: UTCTime (YYMMDDHHMMSSZ) for the years
 * 1950 through 2049, GeneralizedTime (YYYYMMDDHHMMSSZ) otherwise; fractions of a second are
 * dropped. Throws PkiError for a date with no four-digit year.
 */
export function encodeTime(date: Date): Uint8Array {
  const year = date.getUTCFullYear();
  if (!Number.isFinite(date.getTime()) || year < 0 || year > 9999) {
    throw new PkiError(`cannot encode ${String(date.getTime())} ms as an X.509 time`);
  }
  const rest = [
    date.getUTCMonth() + 1,
    date.getUTCDate(),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
  ]
    .map((n) => pad(n, 2))
    .join('');
  if (year >= 1950 && year < 2050) {
    return encodeString(Tag.UTC_TIME, `${pad(year % 100, 2)}${rest}Z`);
  }
  return encodeString(Tag.GENERALIZED_TIME, `${pad(year, 4)}${rest}Z`);
}

// Encoded OIDs by their text: a certificate or CSR names the same few dozen (algorithms,
// extensions, name attributes) every time, and the BigInt arithmetic below showed as ~1 % of a
// publish. Bounded, as OIDs can also come from input (a literal subject's attribute types).
const encodedOids = new Map<string, Uint8Array>();
const ENCODED_OIDS_KEPT = 256;

/** Encodes an OBJECT IDENTIFIER from dotted-decimal text; throws PkiError if it is not one. */
export function encodeOid(dotted: string): Uint8Array {
  const known = encodedOids.get(dotted);
  // A copy: the caller owns what it gets.
  if (known) return known.slice();
  const encoded = encodeOidText(dotted);
  if (encodedOids.size < ENCODED_OIDS_KEPT) encodedOids.set(dotted, encoded.slice());
  return encoded;
}

function encodeOidText(dotted: string): Uint8Array {
  if (!/^[0-2](\.(0|[1-9][0-9]*))+$/.test(dotted)) {
    throw new PkiError(`invalid object identifier ${quoted(dotted)}`);
  }
  const arcs = dotted.split('.').map((a) => BigInt(a));
  const [first = 0n, second = 0n, ...rest] = arcs;
  if (first < 2n && second >= 40n) {
    throw new PkiError(`invalid object identifier ${quoted(dotted)}`);
  }
  const out: number[] = [];
  for (const arc of [first * 40n + second, ...rest]) {
    const chunk: number[] = [Number(arc & 0x7fn)];
    for (let v = arc >> 7n; v > 0n; v >>= 7n) chunk.unshift(Number(v & 0x7fn) | 0x80);
    out.push(...chunk);
  }
  return encodeTlv(Tag.OID, Uint8Array.from(out));
}

/** Decodes the content octets of an OBJECT IDENTIFIER to dotted-decimal text. */
export function decodeOid(content: Uint8Array): string {
  return decodeOidAsNumbers(content) ?? decodeOidAsBigInts(content);
}

// An arc of at most 7 bytes (49 bits) is exact as a number; the arithmetic with BigInt for
// every arc was most of the time spent reading a CSR's extensions and names.
const MAX_NUMBER_ARC_BYTES = 7;

/** decodeOid for OIDs whose arcs all fit in numbers; undefined when one does not. */
function decodeOidAsNumbers(content: Uint8Array): string | undefined {
  const arcs: number[] = [];
  let v = 0;
  let bytes = 0;
  for (const b of content) {
    if (bytes === 0 && b === 0x80)
      throw new PkiError('malformed DER: non-minimal object identifier');
    if (++bytes > MAX_NUMBER_ARC_BYTES) return undefined;
    v = v * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      arcs.push(v);
      v = 0;
      bytes = 0;
    }
  }
  const [head, ...rest] = arcs;
  if (head === undefined || bytes !== 0)
    throw new PkiError('malformed DER: truncated object identifier');
  const first = head < 80 ? Math.floor(head / 40) : 2;
  return [first, head - first * 40, ...rest].join('.');
}

function decodeOidAsBigInts(content: Uint8Array): string {
  const arcs: bigint[] = [];
  let v = 0n;
  let pending = false;
  for (const b of content) {
    if (!pending && b === 0x80) throw new PkiError('malformed DER: non-minimal object identifier');
    v = (v << 7n) | BigInt(b & 0x7f);
    pending = (b & 0x80) !== 0;
    if (!pending) {
      arcs.push(v);
      v = 0n;
    }
  }
  const [head, ...rest] = arcs;
  if (head === undefined || pending)
    throw new PkiError('malformed DER: truncated object identifier');
  const first = head < 80n ? head / 40n : 2n;
  return [first, head - first * 40n, ...rest].join('.');
}

/** Reads one TLV starting at offset, bounded by limit; throws PkiError on malformed or non-DER lengths. */
export function readTlv(buf: Uint8Array, offset: number, limit = buf.length): Tlv {
  if (offset + 2 > limit) throw new PkiError('malformed DER: truncated element');
  // Read by index: a Buffer view per element was an allocation for every TLV parsed.
  const tag = buf[offset] as number;
  if ((tag & 0x1f) === 0x1f) throw new PkiError('malformed DER: multi-byte tags are not supported');
  const first = buf[offset + 1] as number;
  let length = first;
  let contentStart = offset + 2;
  if (first & 0x80) {
    const n = first & 0x7f;
    if (n === 0) throw new PkiError('malformed DER: indefinite length');
    if (n > 4 || contentStart + n > limit) throw new PkiError('malformed DER: bad length');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + (buf[contentStart + i] as number);
    if (length < 0x80 || buf[contentStart] === 0) {
      throw new PkiError('malformed DER: non-minimal length');
    }
    contentStart += n;
  }
  const end = contentStart + length;
  if (end > limit) throw new PkiError('malformed DER: length exceeds data');
  return { tag, start: offset, contentStart, end };
}

/** Reads a buffer that must hold exactly one TLV. */
export function readSingle(buf: Uint8Array): Tlv {
  const tlv = readTlv(buf, 0);
  if (tlv.end !== buf.length) throw new PkiError('malformed DER: trailing data');
  return tlv;
}

/** Reads the TLVs inside a constructed element. */
export function readChildren(buf: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = parent.contentStart; offset < parent.end; ) {
    const child = readTlv(buf, offset, parent.end);
    out.push(child);
    offset = child.end;
  }
  return out;
}

/** Reads the children of a constructed element after checking its tag; throws PkiError naming what was expected. */
export function childrenOf(buf: Uint8Array, parent: Tlv, tag: number, what: string): Tlv[] {
  if (parent.tag !== tag) throw new PkiError(`malformed DER: expected ${what}`);
  return readChildren(buf, parent);
}

/** Returns the content octets of a TLV. */
export function contentOf(buf: Uint8Array, tlv: Tlv): Uint8Array {
  return buf.subarray(tlv.contentStart, tlv.end);
}

/** Returns the whole encoding (tag, length and content) of a TLV. */
export function rawOf(buf: Uint8Array, tlv: Tlv): Uint8Array {
  return buf.subarray(tlv.start, tlv.end);
}

/** Copies bytes into a fresh ArrayBuffer (public API returns ArrayBuffer, not a view into a larger buffer). */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(bytes.length);
  new Uint8Array(out).set(bytes);
  return out;
}

/** Views an ArrayBuffer or Node Buffer as Uint8Array without copying. */
export function asBytes(data: ArrayBuffer | Uint8Array): Uint8Array {
  return data instanceof Uint8Array ? data : new Uint8Array(data);
}

/** True when every character is ASCII (what IA5String can hold). */
export function isAscii(text: string): boolean {
  return /^\p{ASCII}*$/u.test(text);
}
