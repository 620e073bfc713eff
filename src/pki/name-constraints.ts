import { isIP } from 'node:net';
import type { NameConstraintItem, NameConstraints } from '../api/certificate.js';
import { quoted } from '../api/echoed-value.js';
import { concat, contextTag, isAscii, sequence } from './der.js';
import { PkiError } from './errors.js';
import { ipAddressBytes } from './san.js';

// The NameConstraints extension value (RFC 5280 4.2.1.10) as cert-manager's
// MarshalNameConstraints writes it: per subtree list DNS, IP, email, URI
// entries, each a GeneralSubtree with only its base (minimum 0, no maximum).

// GeneralName tags of the bases (context-specific, primitive).
const GN_EMAIL = 1;
const GN_DNS = 2;
const GN_URI = 6;
const GN_IP = 7;

/**
 * The bytes of a CIDR range in a name constraint: the masked address followed by the mask,
 * 4+4 bytes for IPv4 and 16+16 for IPv6 (IPv4-mapped ones included), as Go's net.ParseCIDR
 * gives them; throws PkiError `invalid CIDR address "x"`.
 */
export function cidrBytes(text: string): Uint8Array {
  const invalid = () => new PkiError(`invalid CIDR address ${quoted(text)}`);
  const slash = text.indexOf('/');
  const address = text.slice(0, slash);
  const prefix = text.slice(slash + 1);
  const family = isIP(address);
  // Go's ParseCIDR takes only decimal prefix digits and no zone.
  if (slash < 0 || family === 0 || !/^[0-9]{1,3}$/.test(prefix)) throw invalid();
  let ip: Uint8Array;
  try {
    ip = ipAddressBytes(address);
  } catch {
    throw invalid();
  }
  if (family === 6 && ip.length === 4)
    ip = Uint8Array.of(...new Array(10).fill(0), 0xff, 0xff, ...ip);
  const bits = Number(prefix);
  if (bits > ip.length * 8) throw invalid();
  const mask = ip.map((_, i) => {
    const left = Math.min(Math.max(bits - i * 8, 0), 8);
    return (0xff00 >> left) & 0xff;
  });
  return concat([ip.map((b, i) => b & (mask[i] as number)), mask]);
}

function subtrees(item: NameConstraintItem | undefined): Uint8Array[] {
  const entries: Uint8Array[] = [];
  const base = (tag: number, content: Uint8Array) =>
    entries.push(sequence([contextTag(tag, content, false)]));
  const ia5 = (tag: number, kind: string, value: string) => {
    if (!isAscii(value)) throw new PkiError(`invalid ${kind} ${quoted(value)}: not ASCII`);
    base(tag, new TextEncoder().encode(value));
  };
  for (const dns of item?.dnsDomains ?? []) ia5(GN_DNS, 'DNS domain', dns);
  for (const range of item?.ipRanges ?? []) base(GN_IP, cidrBytes(range));
  for (const email of item?.emailAddresses ?? []) ia5(GN_EMAIL, 'email address', email);
  for (const uri of item?.uriDomains ?? []) ia5(GN_URI, 'URI domain', uri);
  return entries;
}

/**
 * Encodes a Certificate's spec.nameConstraints as the extension value: permitted [0] and
 * excluded [1] only when they hold an entry; undefined when neither does (cert-manager adds
 * no extension then). Throws PkiError for a range or name that cannot be encoded.
 */
export function encodeNameConstraints(constraints: NameConstraints): Uint8Array | undefined {
  const permitted = subtrees(constraints.permitted);
  const excluded = subtrees(constraints.excluded);
  if (permitted.length === 0 && excluded.length === 0) return undefined;
  const parts: Uint8Array[] = [];
  if (permitted.length > 0) parts.push(contextTag(0, concat(permitted), true));
  if (excluded.length > 0) parts.push(contextTag(1, concat(excluded), true));
  return sequence(parts);
}
