import type { SubjectSpec } from '../api/volume-spec.js';
import {
  asBytes,
  childrenOf,
  contentOf,
  decodeOid,
  rawOf,
  readSingle,
  sequence,
  setOf,
  Tag,
  toArrayBuffer,
} from './der.js';
import { PkiError } from './errors.js';
import {
  attributeTypeByOid,
  decodeStringValue,
  encodeAttribute,
  encodeAttributeValue,
  OID,
} from './name-attributes.js';
import { nameValueProblem } from './readable-name.js';

export { parseLiteralSubject } from './literal-subject.js';

/** Subject fields as cert-manager's `spec.subject` and the csi-driver attributes name them. */
export type SubjectFields = SubjectSpec;

/** Encodes subject fields as an RDNSequence in Go's pkix.Name.ToRDNSequence order: C, ST, L, STREET, postalCode, O, OU, CN, serialNumber; each field's values form one multi-valued RDN. */
export function subjectToDer(fields: SubjectFields): ArrayBuffer {
  const rdns: Uint8Array[] = [];
  const add = (oid: string, values: readonly string[] | undefined): void => {
    // Like Go: a field is skipped only when it has no values; empty strings inside a list are kept.
    if (!values || values.length === 0) return;
    rdns.push(setOf(values.map((v) => encodeAttribute(oid, encodeAttributeValue(oid, v)))));
  };
  add(OID.country, fields.countries);
  add(OID.province, fields.provinces);
  add(OID.locality, fields.localities);
  add(OID.streetAddress, fields.streetAddresses);
  add(OID.postalCode, fields.postalCodes);
  add(OID.organization, fields.organizations);
  add(OID.organizationalUnit, fields.organizationalUnits);
  if (fields.commonName) add(OID.commonName, [fields.commonName]);
  if (fields.serialNumber) add(OID.serialNumber, [fields.serialNumber]);
  return toArrayBuffer(sequence(rdns));
}

/** One attribute of a parsed name: its OID and the full DER of its value. */
export interface NameAttribute {
  oid: string;
  tag: number;
  value: Uint8Array;
  raw: Uint8Array;
}

/** Splits a Name (RDNSequence) DER into RDNs of attributes, in DER order; throws PkiError if malformed. */
export function parseName(der: ArrayBuffer | Uint8Array): NameAttribute[][] {
  const buf = asBytes(der);
  try {
    return childrenOf(buf, readSingle(buf), Tag.SEQUENCE, 'name').map((rdn) =>
      childrenOf(buf, rdn, Tag.SET, 'relative distinguished name').map((atv) => {
        const [type, value, extra] = childrenOf(buf, atv, Tag.SEQUENCE, 'attribute');
        if (!type || type.tag !== Tag.OID || !value || extra) {
          throw new PkiError('malformed DER: bad attribute');
        }
        return {
          oid: decodeOid(contentOf(buf, type)),
          tag: value.tag,
          value: contentOf(buf, value),
          raw: rawOf(buf, value),
        };
      }),
    );
  } catch (err) {
    throw new PkiError(`cannot parse name: ${(err as Error).message}`);
  }
}

/**
 * Why a Name DER cannot be read by every reader of a certificate (readable-name.ts), naming
 * the first bad attribute by its short name or OID; undefined when it can. Throws PkiError
 * when the DER is no Name at all.
 */
export function nameProblem(der: ArrayBuffer | Uint8Array): string | undefined {
  for (const rdn of parseName(der)) {
    for (const attribute of rdn) {
      const problem = nameValueProblem(attribute.tag, attribute.value);
      if (problem !== undefined) {
        return `the value of ${attributeTypeByOid(attribute.oid)?.name ?? attribute.oid} is ${problem}`;
      }
    }
  }
  return undefined;
}

/** True when a Name DER holds no RDNs (RFC 5280 then requires a critical SAN extension). */
export function isEmptyName(der: ArrayBuffer | Uint8Array): boolean {
  return parseName(der).length === 0;
}

// RFC 4514 section 2.4 escaping; control characters are hex-escaped as OpenSSL does.
function escapeValue(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value.charAt(i);
    const code = ch.charCodeAt(0);
    if ('"+,;<>\\'.includes(ch) || ((ch === ' ' || ch === '#') && i === 0)) out += `\\${ch}`;
    else if (ch === ' ' && i === value.length - 1) out += '\\ ';
    else if (code < 0x20 || code === 0x7f)
      out += `\\${code.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += ch;
  }
  return out;
}

function describeAttribute(attr: NameAttribute): string {
  const type = attributeTypeByOid(attr.oid);
  const text = type ? decodeStringValue(attr.tag, attr.value) : undefined;
  // RFC 4514: unknown types and non-string values are written as '#' and the hex of their BER.
  const value =
    text === undefined
      ? `#${Buffer.from(attr.raw).toString('hex').toUpperCase()}`
      : escapeValue(text);
  return `${type?.name ?? attr.oid}=${value}`;
}

/** Formats a Name DER as an RFC 4514 string (last RDN first), for logs and the CLI. */
export function describeSubject(der: ArrayBuffer | Uint8Array): string {
  return parseName(der)
    .reverse()
    .map((rdn) => rdn.map(describeAttribute).join('+'))
    .join(',');
}

/** The fields of a Name DER as Go's pkix.Name reads them: the last CN and serialNumber win, the lists collect every value in order. */
export function subjectFieldsOf(der: ArrayBuffer | Uint8Array): Required<SubjectFields> {
  const fields: Required<SubjectFields> = {
    commonName: '',
    serialNumber: '',
    countries: [],
    organizations: [],
    organizationalUnits: [],
    localities: [],
    provinces: [],
    streetAddresses: [],
    postalCodes: [],
  };
  const lists: Record<string, string[]> = {
    [OID.country]: fields.countries,
    [OID.organization]: fields.organizations,
    [OID.organizationalUnit]: fields.organizationalUnits,
    [OID.locality]: fields.localities,
    [OID.province]: fields.provinces,
    [OID.streetAddress]: fields.streetAddresses,
    [OID.postalCode]: fields.postalCodes,
  };
  for (const rdn of parseName(der)) {
    for (const attr of rdn) {
      // Go skips values that are not strings.
      const value = decodeStringValue(attr.tag, attr.value);
      if (value === undefined) continue;
      if (attr.oid === OID.commonName) fields.commonName = value;
      else if (attr.oid === OID.serialNumber) fields.serialNumber = value;
      else lists[attr.oid]?.push(value);
    }
  }
  return fields;
}
