import { quoted } from '../api/echoed-value.js';
import {
  concat,
  contentOf,
  encodeOid,
  readSingle,
  sequence,
  setOf,
  type Tlv,
  toArrayBuffer,
} from './der.js';
import { PkiError } from './errors.js';
import { attributeTypeByName, encodeAttribute, encodeAttributeValue } from './name-attributes.js';
import { nameValueProblem } from './readable-name.js';

// The csi-driver `literal-subject` attribute: an RFC 4514 string turned into
// an RDNSequence the way cert-manager's UnmarshalSubjectStringToRDNSequence
// does (go-ldap's ParseDN, then reversed). Where cert-manager is lax we are
// stricter (unknown types are errors, not a nil OID), and where RFC 4514 is
// clear we follow it: type names are case-insensitive and a '#' value is the
// BER of the value, embedded as is when it is a string every certificate reader takes.

const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;
const ESCAPABLE = ' "#+,;<=>\\';

interface RawAttribute {
  text: string;
  endsRdn: boolean;
}

function fail(message: string): never {
  throw new PkiError(`literal subject: ${message}`);
}

// Splits at unescaped ',' ';' (end of RDN) and '+' (next attribute in the same RDN).
function splitAttributes(text: string): RawAttribute[] {
  const out: RawAttribute[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === ',' || ch === ';' || ch === '+') {
      out.push({ text: text.slice(start, i), endsRdn: ch !== '+' });
      start = i + 1;
    }
  }
  out.push({ text: text.slice(start), endsRdn: true });
  return out;
}

function resolveType(type: string): string {
  if (/^[0-9]/.test(type)) {
    try {
      encodeOid(type);
    } catch {
      fail(`invalid attribute type ${quoted(type)}`);
    }
    return type;
  }
  const known = attributeTypeByName(type);
  if (!known) fail(`unknown attribute type ${quoted(type)}`);
  return known.oid;
}

// Leading spaces and unescaped trailing spaces are not part of the value.
function trimValue(raw: string): string {
  let value = raw.replace(/^ +/, '');
  while (value.endsWith(' ')) {
    let backslashes = 0;
    for (let i = value.length - 2; i >= 0 && value[i] === '\\'; i--) backslashes++;
    if (backslashes % 2 === 1) break;
    value = value.slice(0, -1);
  }
  return value;
}

function unescapeValue(value: string, type: string): string {
  // Escapes may spell UTF-8 bytes one by one (\\C3\\A9 is é), so the value is rebuilt as bytes.
  const parts: Uint8Array[] = [];
  const encoder = new TextEncoder();
  let plainStart = 0;
  for (let i = 0; i < value.length; i++) {
    if (value.charAt(i) !== '\\') continue;
    parts.push(encoder.encode(value.slice(plainStart, i)));
    const next = value.charAt(i + 1);
    if (next === '') fail(`dangling escape at the end of the value of ${quoted(type)}`);
    if (ESCAPABLE.includes(next)) {
      parts.push(encoder.encode(next));
      i++;
    } else if (HEX_PAIR.test(value.slice(i + 1, i + 3))) {
      parts.push(Uint8Array.of(Number.parseInt(value.slice(i + 1, i + 3), 16)));
      i += 2;
    } else {
      fail(`invalid escape "\\${next}" in the value of ${quoted(type)}`);
    }
    plainStart = i + 1;
  }
  parts.push(encoder.encode(value.slice(plainStart)));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(concat(parts));
  } catch {
    return fail(`the value of ${quoted(type)} is not valid UTF-8`);
  }
}

// A '#' value must also be one every reader of the certificate accepts (readable-name.ts):
// the rule the signer and the node apply to the certificate, so nothing that passes here
// fails after the key and the request were made.
function encodeHexValue(hex: string, type: string): Uint8Array {
  if (!/^([0-9A-Fa-f]{2})+$/.test(hex)) fail(`invalid hex value for ${quoted(type)}`);
  const der = new Uint8Array(Buffer.from(hex, 'hex'));
  let tlv: Tlv;
  try {
    tlv = readSingle(der);
  } catch {
    return fail(`hex value for ${quoted(type)} is not a single BER element`);
  }
  const problem = nameValueProblem(tlv.tag, contentOf(der, tlv));
  if (problem !== undefined) fail(`the hex value for ${quoted(type)} is ${problem}`);
  return der;
}

function encodeRawAttribute(raw: string): Uint8Array {
  const eq = raw.indexOf('=');
  if (eq < 0) fail(`missing '=' in ${quoted(raw.trim())}`);
  const type = raw.slice(0, eq).trim();
  if (type === '') fail(`missing attribute type in ${quoted(raw.trim())}`);
  const oid = resolveType(type);
  const value = trimValue(raw.slice(eq + 1));
  const valueDer = value.startsWith('#')
    ? encodeHexValue(value.slice(1), type)
    : encodeAttributeValue(oid, unescapeValue(value, type));
  return encodeAttribute(oid, valueDer);
}

/** Parses an RFC 4514 subject string to Name DER; the string lists the last RDN first, so RDNs are reversed. */
export function parseLiteralSubject(text: string): ArrayBuffer {
  if (text.trim() === '') return toArrayBuffer(sequence([]));
  const rdns: Uint8Array[] = [];
  let current: Uint8Array[] = [];
  for (const raw of splitAttributes(text)) {
    if (raw.text.trim() === '') fail(`empty attribute in ${quoted(text)}`);
    current.push(encodeRawAttribute(raw.text));
    if (raw.endsRdn) {
      rdns.push(setOf(current));
      current = [];
    }
  }
  return toArrayBuffer(sequence(rdns.reverse()));
}
