import { asBytes, childrenOf, contentOf, rawOf, readSingle, Tag } from './der.js';
import { PkiError } from './errors.js';
import { decodeExtensions, type RawExtension } from './extensions.js';

// node:crypto's X509Certificate gives names only as display strings; issuing
// and chain building need the exact DER of issuer and subject, and the
// extension values, so these are read from the TBSCertificate directly.

/** The fields of a certificate the pki layer needs, as exact DER where it matters. */
export interface CertificateFields {
  /** The serialNumber INTEGER's content octets (big-endian, with any leading 0x00 pad). */
  serialNumber: Uint8Array;
  issuerDer: Uint8Array;
  subjectDer: Uint8Array;
  spkiDer: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  extensions: Map<string, RawExtension>;
}

function decodeTime(tag: number, text: string): Date {
  const m =
    tag === Tag.UTC_TIME
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!m || (tag !== Tag.UTC_TIME && tag !== Tag.GENERALIZED_TIME)) {
    throw new PkiError('malformed DER: bad validity time');
  }
  const [, y = '', mo = '', d = '', h = '', mi = '', s = ''] = m;
  let year = Number(y);
  // RFC 5280 4.1.2.5.1: two-digit years 50-99 are 19xx, 00-49 are 20xx.
  if (tag === Tag.UTC_TIME) year += year >= 50 ? 1900 : 2000;
  return new Date(Date.UTC(year, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
}

/** Reads issuer, subject, public key, validity and extensions from certificate DER; throws PkiError if malformed. */
export function readCertificateFields(der: Uint8Array | ArrayBuffer): CertificateFields {
  const buf = asBytes(der);
  try {
    const [tbs] = childrenOf(buf, readSingle(buf), Tag.SEQUENCE, 'certificate');
    if (!tbs) throw new PkiError('malformed DER: missing TBSCertificate');
    const fields = childrenOf(buf, tbs, Tag.SEQUENCE, 'TBSCertificate');
    // Skip the optional [0] version so the remaining fields have fixed positions.
    const rest = fields[0]?.tag === 0xa0 ? fields.slice(1) : fields;
    const [serial, , issuer, validity, subject, spki, ...optional] = rest;
    if (!serial || serial.tag !== Tag.INTEGER || !issuer || !validity || !subject || !spki)
      throw new PkiError('malformed DER: short TBSCertificate');
    const [nb, na] = childrenOf(buf, validity, Tag.SEQUENCE, 'validity');
    if (!nb || !na) throw new PkiError('malformed DER: bad validity');
    const latin1 = (t: typeof nb): string => Buffer.from(contentOf(buf, t)).toString('latin1');
    const extWrapper = optional.find((t) => t.tag === 0xa3);
    const [extList] = extWrapper ? childrenOf(buf, extWrapper, 0xa3, 'extensions') : [];
    return {
      serialNumber: contentOf(buf, serial),
      issuerDer: rawOf(buf, issuer),
      subjectDer: rawOf(buf, subject),
      spkiDer: rawOf(buf, spki),
      notBefore: decodeTime(nb.tag, latin1(nb)),
      notAfter: decodeTime(na.tag, latin1(na)),
      extensions: extList ? decodeExtensions(buf, extList) : new Map(),
    };
  } catch (err) {
    throw new PkiError(`cannot parse certificate: ${(err as Error).message}`);
  }
}

/**
 * A serial number as `openssl x509 -serial` and node's X509Certificate print it: upper-case hex,
 * two digits per byte, leading zero bytes dropped (one 0 for zero).
 */
export function serialHex(serialNumber: Uint8Array): string {
  let first = 0;
  while (first < serialNumber.length - 1 && serialNumber[first] === 0) first++;
  const hex = Buffer.from(serialNumber.subarray(first)).toString('hex').toUpperCase();
  return hex === '00' ? '0' : hex;
}
