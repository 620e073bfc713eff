import { Tag } from './der.js';

// Which attribute values of a distinguished name every reader of the certificate accepts.
// A certificate is read by Node (OpenSSL's d2i_X509) and by Go's crypto/x509 (cert-manager,
// most Kubernetes clients); a value one of them refuses makes a certificate nobody can use.
// The rule is the intersection of the two, measured with OpenSSL 3.0 and read from Go's x509
// parser (parseASN1String):
// - Go reads only UTF8String, PrintableString, IA5String, NumericString, T61String and
//   BMPString, each with its content rule; every other type (BOOLEAN, INTEGER, NULL, OID,
//   SEQUENCE, UniversalString, VisibleString, a constructed string ...) fails the parse.
// - OpenSSL refuses a BMPString of odd length or holding a UTF-16 surrogate.
// The same rule is applied to a literal subject at publish, to every subject before it is
// signed, and to the subject of every certificate the node receives.

/** The value types a name attribute may have, as messages name them. */
const ALLOWED = 'UTF8String, PrintableString, IA5String, NumericString, T61String, BMPString';

/** Other tags, as messages name them. */
const OTHER_TYPES = new Map<number, string>([
  [Tag.BOOLEAN, 'a BOOLEAN'],
  [Tag.INTEGER, 'an INTEGER'],
  [Tag.BIT_STRING, 'a BIT STRING'],
  [Tag.OCTET_STRING, 'an OCTET STRING'],
  [Tag.NULL, 'a NULL'],
  [Tag.OID, 'an OBJECT IDENTIFIER'],
  [Tag.UTC_TIME, 'a UTCTime'],
  [Tag.GENERALIZED_TIME, 'a GeneralizedTime'],
  [Tag.VISIBLE_STRING, 'a VisibleString'],
  [Tag.UNIVERSAL_STRING, 'a UniversalString'],
  [Tag.SEQUENCE, 'a SEQUENCE'],
  [Tag.SET, 'a SET'],
]);

// Go's x509 reader: the PrintableString set plus '*' and '&', which it tolerates.
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?*&]$/;
const NUMERIC = /^[0-9 ]$/;

/** How a tag other than the string types reads in a message. */
function otherTypeName(tag: number): string {
  const constructed = tag & 0x20 ? ' (constructed)' : '';
  return (
    OTHER_TYPES.get(tag) ?? `a value of tag 0x${tag.toString(16).padStart(2, '0')}${constructed}`
  );
}

function bmpProblem(content: Uint8Array): string | undefined {
  if (content.length % 2 !== 0) return `a BMPString of odd length (${content.length})`;
  const units = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  for (let i = 0; i < units.length; i += 2) {
    const unit = units.readUInt16BE(i);
    if (unit >= 0xd800 && unit <= 0xdfff) {
      return `a BMPString holding the UTF-16 surrogate U+${unit.toString(16).toUpperCase()}`;
    }
  }
  return undefined;
}

/** The first byte of content outside allowed, as a message shows it; undefined when none is. */
function firstOutside(content: Uint8Array, allowed: RegExp): string | undefined {
  for (const byte of content) {
    const ch = String.fromCharCode(byte);
    if (allowed.test(ch)) continue;
    return byte < 0x20 || byte > 0x7e ? `the byte 0x${byte.toString(16)}` : `"${ch}"`;
  }
  return undefined;
}

/**
 * Why a name attribute value (its tag and content octets) is one that some reader of the
 * certificate refuses, or undefined when every reader accepts it.
 */
export function nameValueProblem(tag: number, content: Uint8Array): string | undefined {
  switch (tag) {
    case Tag.UTF8_STRING:
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(content);
        return undefined;
      } catch {
        return 'a UTF8String that is not valid UTF-8';
      }
    case Tag.PRINTABLE_STRING: {
      const bad = firstOutside(content, PRINTABLE);
      return bad === undefined ? undefined : `a PrintableString with ${bad}, which it cannot hold`;
    }
    case Tag.NUMERIC_STRING: {
      const bad = firstOutside(content, NUMERIC);
      return bad === undefined ? undefined : `a NumericString with ${bad} (digits and spaces only)`;
    }
    case Tag.IA5_STRING: {
      const high = content.find((b) => b > 0x7f);
      return high === undefined
        ? undefined
        : `an IA5String with the non-ASCII byte 0x${high.toString(16)}`;
    }
    case Tag.T61_STRING:
      return undefined;
    case Tag.BMP_STRING:
      return bmpProblem(content);
    default:
      return `${otherTypeName(tag)}, not a string type every certificate reader accepts (${ALLOWED})`;
  }
}
