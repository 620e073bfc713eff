import { isIP, SocketAddress } from 'node:net';
import { quoted } from '../api/echoed-value.js';
import { sameUnordered } from '../base/unordered-lists.js';
import {
  asBytes,
  childrenOf,
  concat,
  contentOf,
  contextTag,
  decodeOid,
  encodeOid,
  encodeString,
  isAscii,
  readSingle,
  sequence,
  Tag,
  toArrayBuffer,
} from './der.js';
import { PkiError } from './errors.js';

/** Subject alternative names of the kinds cert-manager requests. */
export interface SubjectAltNames {
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  emailAddresses: string[];
}

/** An otherName SAN whose value is a UTF8String (a Certificate's spec.otherNames entry). */
export interface Utf8OtherName {
  oid: string;
  utf8Value: string;
}

/** What a SAN extension is built from: the kinds cert-manager requests, otherNames included. */
export type SubjectAltNamesInput = Partial<SubjectAltNames> & {
  otherNames?: readonly Utf8OtherName[];
};

// GeneralName CHOICE tags (RFC 5280 4.2.1.6), all IMPLICIT; otherName is constructed.
const GN_OTHER = 0;
const GN_EMAIL = 1;
const GN_DNS = 2;
const GN_URI = 6;
const GN_IP = 7;

/** Parses an IPv4 or IPv6 address to its SAN bytes: 4 bytes for IPv4 and IPv4-mapped IPv6 (like Go's To4), else 16; throws PkiError `invalid IP address "x"`. */
export function ipAddressBytes(text: string): Uint8Array {
  const family = isIP(text);
  // Zones (fe80::1%eth0) are accepted by node but are not addresses in a certificate.
  if (family === 0 || text.includes('%')) throw new PkiError(`invalid IP address ${quoted(text)}`);
  if (family === 4) return Uint8Array.from(text.split('.').map(Number));
  const canonical = new SocketAddress({ address: text, family: 'ipv6' }).address;
  const bytes = new Uint8Array(16);
  const [head = '', tail] = canonical.split('::');
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const headGroups = groups(head);
  const tailGroups = tail === undefined ? [] : groups(tail);
  const expand = (gs: string[]): number[] =>
    gs.flatMap((g) => {
      if (g.includes('.')) return g.split('.').map(Number);
      const v = Number.parseInt(g, 16);
      return [v >> 8, v & 0xff];
    });
  const headBytes = expand(headGroups);
  const tailBytes = expand(tailGroups);
  bytes.set(headBytes, 0);
  bytes.set(tailBytes, 16 - tailBytes.length);
  const mapped = bytes.subarray(0, 12).every((b, i) => (i < 10 ? b === 0 : b === 0xff));
  return mapped ? bytes.slice(12) : bytes;
}

/** Formats SAN IP bytes as text: dotted IPv4, or IPv6 in node's canonical (RFC 5952) form. */
export function formatIpAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  if (bytes.length !== 16) throw new PkiError(`invalid IP address length ${bytes.length}`);
  const buf = Buffer.from(bytes);
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(buf.readUInt16BE(i).toString(16));
  return new SocketAddress({ address: groups.join(':'), family: 'ipv6' }).address;
}

/** Canonicalises an IP address string as it will appear in a certificate. */
export function canonicalIpAddress(text: string): string {
  return formatIpAddress(ipAddressBytes(text));
}

/** Same IP addresses in any order, however each is spelled; text that is no IP equals nothing but itself. */
export function sameIpAddresses(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  const canonical = (text: string) => {
    try {
      return canonicalIpAddress(text);
    } catch {
      return `invalid:${text}`;
    }
  };
  return sameUnordered((a ?? []).map(canonical), (b ?? []).map(canonical));
}

/** Checks a URI SAN: it needs a scheme (an absolute URI), printable ASCII only, valid %-escapes; throws PkiError `invalid URI "x"`. */
export function validateUri(uri: string): void {
  const ok =
    /^[A-Za-z][A-Za-z0-9+.-]*:[\x21-\x7e]+$/.test(uri) &&
    !/%(?![0-9A-Fa-f]{2})/.test(uri) &&
    URL.canParse(uri);
  if (!ok) throw new PkiError(`invalid URI ${quoted(uri)}`);
}

/**
 * Encodes a GeneralNames SAN extension value in cert-manager's order: DNS, email, IP, URI, then
 * otherNames (each `[0] { type-id, [0] EXPLICIT UTF8String }`); throws PkiError for names
 * that cannot be encoded.
 */
export function encodeSubjectAltNames(sans: SubjectAltNamesInput): ArrayBuffer {
  const names: Uint8Array[] = [];
  const ia5 = (tag: number, kind: string, value: string): void => {
    if (!isAscii(value)) throw new PkiError(`invalid ${kind} ${quoted(value)}: not ASCII`);
    names.push(contextTag(tag, new TextEncoder().encode(value), false));
  };
  for (const d of sans.dnsNames ?? []) ia5(GN_DNS, 'DNS name', d);
  for (const e of sans.emailAddresses ?? []) ia5(GN_EMAIL, 'email address', e);
  for (const ip of sans.ipAddresses ?? []) names.push(contextTag(GN_IP, ipAddressBytes(ip), false));
  for (const u of sans.uris ?? []) {
    validateUri(u);
    ia5(GN_URI, 'URI', u);
  }
  for (const { oid, utf8Value } of sans.otherNames ?? []) {
    const value = contextTag(0, encodeString(Tag.UTF8_STRING, utf8Value), true);
    names.push(contextTag(GN_OTHER, concat([encodeOid(oid), value]), true));
  }
  return toArrayBuffer(sequence(names));
}

/** True when there is at least one SAN. */
export function hasSubjectAltNames(sans: SubjectAltNamesInput): boolean {
  return [sans.dnsNames, sans.ipAddresses, sans.uris, sans.emailAddresses, sans.otherNames].some(
    (l) => (l?.length ?? 0) > 0,
  );
}

/** An otherName as read from a SAN extension: utf8Value is undefined when its value is not a well-formed UTF8String. */
export interface DecodedOtherName {
  oid: string;
  utf8Value: string | undefined;
}

/** Decodes the otherName entries of a SAN extension value, in order; throws PkiError on malformed DER. */
export function decodeOtherNames(der: ArrayBuffer | Uint8Array): DecodedOtherName[] {
  const buf = asBytes(der);
  const out: DecodedOtherName[] = [];
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  for (const name of childrenOf(buf, readSingle(buf), Tag.SEQUENCE, 'GeneralNames')) {
    if (name.tag !== (0xa0 | GN_OTHER)) continue;
    const [typeId, explicit, extra] = childrenOf(buf, name, 0xa0 | GN_OTHER, 'otherName');
    if (typeId?.tag !== Tag.OID || explicit?.tag !== 0xa0 || extra)
      throw new PkiError('malformed DER: bad otherName');
    const [value, more] = childrenOf(buf, explicit, 0xa0, 'otherName value');
    if (!value || more) throw new PkiError('malformed DER: bad otherName value');
    let utf8Value: string | undefined;
    if (value.tag === Tag.UTF8_STRING) {
      try {
        utf8Value = utf8.decode(contentOf(buf, value));
      } catch {
        utf8Value = undefined;
      }
    }
    out.push({ oid: decodeOid(contentOf(buf, typeId)), utf8Value });
  }
  return out;
}

/** Decodes a SAN extension value; names of other kinds (otherName, directoryName, ...) are skipped, as Go does. */
export function decodeSubjectAltNames(der: ArrayBuffer | Uint8Array): SubjectAltNames {
  const buf = asBytes(der);
  const out: SubjectAltNames = { dnsNames: [], ipAddresses: [], uris: [], emailAddresses: [] };
  const latin1 = (b: Uint8Array): string => Buffer.from(b).toString('latin1');
  for (const name of childrenOf(buf, readSingle(buf), Tag.SEQUENCE, 'GeneralNames')) {
    const content = contentOf(buf, name);
    switch (name.tag) {
      case 0x80 | GN_DNS:
        out.dnsNames.push(latin1(content));
        break;
      case 0x80 | GN_EMAIL:
        out.emailAddresses.push(latin1(content));
        break;
      case 0x80 | GN_URI:
        out.uris.push(latin1(content));
        break;
      case 0x80 | GN_IP:
        out.ipAddresses.push(formatIpAddress(content));
        break;
    }
  }
  return out;
}
