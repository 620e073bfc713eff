import { encodeOid, encodeString, isAscii, sequence, Tag } from './der.js';

// Attribute types of distinguished names: the names we print and parse, and
// how their string values are encoded.

/** One known attribute type: OID and its RFC 4514 / OpenSSL short name. */
export interface AttributeType {
  oid: string;
  name: string;
}

/** Known attribute types, in the spelling OpenSSL prints with `-nameopt RFC2253`. */
export const ATTRIBUTE_TYPES: readonly AttributeType[] = [
  { oid: '2.5.4.3', name: 'CN' },
  { oid: '2.5.4.6', name: 'C' },
  { oid: '2.5.4.8', name: 'ST' },
  { oid: '2.5.4.7', name: 'L' },
  { oid: '2.5.4.9', name: 'street' },
  { oid: '2.5.4.10', name: 'O' },
  { oid: '2.5.4.11', name: 'OU' },
  { oid: '2.5.4.17', name: 'postalCode' },
  { oid: '2.5.4.5', name: 'serialNumber' },
  { oid: '0.9.2342.19200300.100.1.25', name: 'DC' },
  { oid: '0.9.2342.19200300.100.1.1', name: 'UID' },
  { oid: '1.2.840.113549.1.9.1', name: 'emailAddress' },
];

/** OIDs of the pkix.Name fields. */
export const OID = {
  commonName: '2.5.4.3',
  country: '2.5.4.6',
  province: '2.5.4.8',
  locality: '2.5.4.7',
  streetAddress: '2.5.4.9',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  postalCode: '2.5.4.17',
  serialNumber: '2.5.4.5',
  domainComponent: '0.9.2342.19200300.100.1.25',
  emailAddress: '1.2.840.113549.1.9.1',
} as const;

const BY_UPPER_NAME = new Map(ATTRIBUTE_TYPES.map((t) => [t.name.toUpperCase(), t]));
const BY_OID = new Map(ATTRIBUTE_TYPES.map((t) => [t.oid, t]));

/** Looks up a type by short name, case-insensitively (RFC 4514 names are case-insensitive). */
export function attributeTypeByName(name: string): AttributeType | undefined {
  return BY_UPPER_NAME.get(name.toUpperCase());
}

/** Looks up a type by OID. */
export function attributeTypeByOid(oid: string): AttributeType | undefined {
  return BY_OID.get(oid);
}

// Go's asn1 isPrintable with rejectAsterisk and rejectAmpersand.
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
// RFC 5280 and RFC 4519 define these two as IA5String.
const IA5_TYPES = new Set<string>([OID.emailAddress, OID.domainComponent]);

/** Encodes an attribute value like Go's encoding/asn1 does for a string: PrintableString when every character allows it, else UTF8String (IA5String for emailAddress and DC). */
export function encodeAttributeValue(oid: string, value: string): Uint8Array {
  if (IA5_TYPES.has(oid) && isAscii(value)) return encodeString(Tag.IA5_STRING, value);
  return encodeString(PRINTABLE.test(value) ? Tag.PRINTABLE_STRING : Tag.UTF8_STRING, value);
}

/** Encodes one AttributeTypeAndValue from its OID and the DER of its value. */
export function encodeAttribute(oid: string, valueDer: Uint8Array): Uint8Array {
  return sequence([encodeOid(oid), valueDer]);
}

/** Decodes a string-typed attribute value, or returns undefined for non-string types. */
export function decodeStringValue(tag: number, content: Uint8Array): string | undefined {
  switch (tag) {
    case Tag.UTF8_STRING:
      return new TextDecoder().decode(content);
    case Tag.PRINTABLE_STRING:
    case Tag.IA5_STRING:
    case Tag.NUMERIC_STRING:
    case Tag.VISIBLE_STRING:
    case Tag.T61_STRING:
      return Buffer.from(content).toString('latin1');
    case Tag.BMP_STRING: {
      const buf = Buffer.from(content);
      let out = '';
      for (let i = 0; i + 1 < buf.length; i += 2) out += String.fromCharCode(buf.readUInt16BE(i));
      return out;
    }
    case Tag.UNIVERSAL_STRING: {
      const buf = Buffer.from(content);
      let out = '';
      for (let i = 0; i + 3 < buf.length; i += 4) {
        const cp = buf.readUInt32BE(i);
        out += cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd';
      }
      return out;
    }
    default:
      return undefined;
  }
}
