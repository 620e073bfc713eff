import {
  childrenOf,
  contentOf,
  contextTag,
  decodeOid,
  encodeBoolean,
  encodeOctetString,
  encodeOid,
  encodeTlv,
  readSingle,
  sequence,
  Tag,
  type Tlv,
} from './der.js';
import { PkiError } from './errors.js';

// X.509 v3 extension values, encoded the way Go's crypto/x509 encodes them
// (so our certificates look like cert-manager's) and decoded leniently enough
// to read what other tools put in CSRs.

/** Extension OIDs used by the pki layer. */
export const ExtensionOid = {
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  crlDistributionPoints: '2.5.29.31',
  extKeyUsage: '2.5.29.37',
  authorityKeyIdentifier: '2.5.29.35',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
} as const;

/** One extension: OID, criticality and the content of its extnValue OCTET STRING. */
export interface RawExtension {
  oid: string;
  critical: boolean;
  value: Uint8Array;
}

/** Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue }; DER omits a false critical. */
export function encodeExtension(ext: RawExtension): Uint8Array {
  return sequence([
    encodeOid(ext.oid),
    ...(ext.critical ? [encodeBoolean(true)] : []),
    encodeOctetString(ext.value),
  ]);
}

/** Decodes an Extensions SEQUENCE into a map by OID; throws PkiError on duplicates, as Go does. */
export function decodeExtensions(buf: Uint8Array, list: Tlv): Map<string, RawExtension> {
  const out = new Map<string, RawExtension>();
  for (const ext of childrenOf(buf, list, Tag.SEQUENCE, 'extensions')) {
    const parts = childrenOf(buf, ext, Tag.SEQUENCE, 'extension');
    const [id, flag] = parts;
    const valueTlv = parts[parts.length - 1];
    const flagOk = parts.length === 2 || (parts.length === 3 && flag?.tag === Tag.BOOLEAN);
    if (id?.tag !== Tag.OID || valueTlv?.tag !== Tag.OCTET_STRING || !flagOk) {
      throw new PkiError('malformed DER: bad extension');
    }
    const critical = parts.length === 3 && flag !== undefined && contentOf(buf, flag)[0] !== 0;
    const oid = decodeOid(contentOf(buf, id));
    if (out.has(oid)) throw new PkiError(`duplicate extension ${oid}`);
    out.set(oid, { oid, critical, value: contentOf(buf, valueTlv) });
  }
  return out;
}

// Bit n of a named BIT STRING is the n-th bit from the most significant bit of
// the first byte, so KeyUsage flag 1<<n sits at 0x8000>>n of the first two bytes.
/** Encodes KeyUsage flags as a BIT STRING with trailing zero bits removed (DER named-bit rule, as Go does). */
export function encodeKeyUsage(flags: number): Uint8Array {
  let value = 0;
  let highest = -1;
  for (let bit = 0; bit < 9; bit++) {
    if (flags & (1 << bit)) {
      value |= 0x8000 >> bit;
      highest = bit;
    }
  }
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  const used = highest < 0 ? 0 : (highest >> 3) + 1;
  const unused = highest < 0 ? 0 : 7 - (highest & 7);
  return encodeTlv(Tag.BIT_STRING, Uint8Array.of(unused, ...bytes.subarray(0, used)));
}

/** Decodes a KeyUsage BIT STRING to flags. */
export function decodeKeyUsage(value: Uint8Array): number {
  const tlv = readSingle(value);
  if (tlv.tag !== Tag.BIT_STRING) {
    throw new PkiError('malformed DER: expected key usage bit string');
  }
  const bits = Buffer.concat([contentOf(value, tlv).subarray(1), Buffer.alloc(2)]).readUInt16BE(0);
  let flags = 0;
  for (let bit = 0; bit < 9; bit++) if (bits & (0x8000 >> bit)) flags |= 1 << bit;
  return flags;
}

/** Encodes BasicConstraints without pathLen: `SEQUENCE { TRUE }` for a CA, an empty SEQUENCE otherwise. */
export function encodeBasicConstraints(isCA: boolean): Uint8Array {
  return sequence(isCA ? [encodeBoolean(true)] : []);
}

/** Decodes BasicConstraints' cA flag. */
export function decodeBasicConstraints(value: Uint8Array): { isCA: boolean } {
  const [first] = childrenOf(value, readSingle(value), Tag.SEQUENCE, 'basic constraints');
  return { isCA: first?.tag === Tag.BOOLEAN && contentOf(value, first)[0] !== 0 };
}

/** Encodes ExtendedKeyUsage from OIDs. */
export function encodeExtKeyUsage(oids: readonly string[]): Uint8Array {
  return sequence(oids.map(encodeOid));
}

/** Decodes ExtendedKeyUsage to OIDs. */
export function decodeExtKeyUsage(value: Uint8Array): string[] {
  return childrenOf(value, readSingle(value), Tag.SEQUENCE, 'extended key usage').map((t) => {
    if (t.tag !== Tag.OID) throw new PkiError('malformed DER: expected key purpose OID');
    return decodeOid(contentOf(value, t));
  });
}

/** Encodes SubjectKeyIdentifier. */
export function encodeSubjectKeyIdentifier(keyId: Uint8Array): Uint8Array {
  return encodeOctetString(keyId);
}

/** Decodes SubjectKeyIdentifier to the key id bytes. */
export function decodeSubjectKeyIdentifier(value: Uint8Array): Uint8Array {
  const tlv = readSingle(value);
  if (tlv.tag !== Tag.OCTET_STRING) throw new PkiError('malformed DER: expected key identifier');
  return contentOf(value, tlv);
}

/** Encodes AuthorityKeyIdentifier with only keyIdentifier [0], as Go does. */
export function encodeAuthorityKeyIdentifier(keyId: Uint8Array): Uint8Array {
  return sequence([contextTag(0, keyId, false)]);
}

const IA5 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Encodes CRLDistributionPoints: one DistributionPoint with a fullName URI per URL, like Go. */
export function encodeCrlDistributionPoints(urls: readonly string[]): Uint8Array {
  return sequence(
    urls.map((url) =>
      sequence([contextTag(0, contextTag(0, contextTag(6, IA5(url), false), true), true)]),
    ),
  );
}

/** Encodes AuthorityInfoAccess: OCSP entries then caIssuers entries, like Go. */
export function encodeAuthorityInfoAccess(
  ocsp: readonly string[],
  caIssuers: readonly string[],
): Uint8Array {
  const entry = (method: string, url: string) =>
    sequence([encodeOid(method), contextTag(6, IA5(url), false)]);
  return sequence([
    ...ocsp.map((u) => entry('1.3.6.1.5.5.7.48.1', u)),
    ...caIssuers.map((u) => entry('1.3.6.1.5.5.7.48.2', u)),
  ]);
}
