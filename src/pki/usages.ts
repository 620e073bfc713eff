import { PkiError } from './errors.js';

// cert-manager's KeyUsage names (spec.usages) and what they turn into:
// a bit of the KeyUsage extension or an ExtendedKeyUsage OID.

/** KeyUsage bit flags, the same values as @peculiar/x509 KeyUsageFlags and Go's x509.KeyUsage. */
export const KeyUsageFlag = {
  digitalSignature: 1,
  contentCommitment: 2,
  keyEncipherment: 4,
  dataEncipherment: 8,
  keyAgreement: 16,
  certSign: 32,
  crlSign: 64,
  encipherOnly: 128,
  decipherOnly: 256,
} as const;

const KEY_USAGES: Readonly<Record<string, number>> = {
  signing: KeyUsageFlag.digitalSignature,
  'digital signature': KeyUsageFlag.digitalSignature,
  'content commitment': KeyUsageFlag.contentCommitment,
  'key encipherment': KeyUsageFlag.keyEncipherment,
  'key agreement': KeyUsageFlag.keyAgreement,
  'data encipherment': KeyUsageFlag.dataEncipherment,
  'cert sign': KeyUsageFlag.certSign,
  'crl sign': KeyUsageFlag.crlSign,
  'encipher only': KeyUsageFlag.encipherOnly,
  'decipher only': KeyUsageFlag.decipherOnly,
};

const EXT_KEY_USAGES: Readonly<Record<string, string>> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Every usage name cert-manager accepts (case-sensitive), key usages first. */
export const KEY_USAGE_NAMES: readonly string[] = [
  ...Object.keys(KEY_USAGES),
  ...Object.keys(EXT_KEY_USAGES),
];

/** cert-manager's default usages when spec.usages is empty. */
export const DEFAULT_USAGES: readonly string[] = ['digital signature', 'key encipherment'];

/** True when name is a cert-manager usage name. */
export function isKnownUsage(name: string): boolean {
  return Object.hasOwn(KEY_USAGES, name) || Object.hasOwn(EXT_KEY_USAGES, name);
}

/** Maps usage names to KeyUsage flags and EKU OIDs like cert-manager's BuildKeyUsages: empty means the defaults, isCA adds cert sign; throws PkiError for unknown names. */
export function usagesToExtensions(
  usages: readonly string[],
  isCA: boolean,
): { keyUsage: number; extKeyUsages: string[] } {
  let keyUsage = isCA ? KeyUsageFlag.certSign : 0;
  const extKeyUsages: string[] = [];
  const unknown: string[] = [];
  for (const name of usages.length === 0 ? DEFAULT_USAGES : usages) {
    const flag = Object.hasOwn(KEY_USAGES, name) ? KEY_USAGES[name] : undefined;
    const oid = Object.hasOwn(EXT_KEY_USAGES, name) ? EXT_KEY_USAGES[name] : undefined;
    if (flag !== undefined) keyUsage |= flag;
    // 's/mime' and 'email protection' are one OID; list it once.
    else if (oid !== undefined) {
      if (!extKeyUsages.includes(oid)) extKeyUsages.push(oid);
    } else unknown.push(`"${name}"`);
  }
  if (unknown.length > 0) {
    throw new PkiError(`unknown key usage${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`);
  }
  return { keyUsage, extKeyUsages };
}

// The two Microsoft code-signing purposes Go's x509 knows but cert-manager has no name for.
const GO_ONLY_EXT_KEY_USAGES = ['1.3.6.1.4.1.311.2.1.22', '1.3.6.1.4.1.311.61.1.1'];
const GO_KNOWN_EXT_KEY_USAGES = new Set([
  ...Object.values(EXT_KEY_USAGES),
  ...GO_ONLY_EXT_KEY_USAGES,
]);

/**
 * The EKU OIDs Go's x509 parser turns into ExtKeyUsage values (what cert-manager compares
 * with a request's usages); any other OID is an UnknownExtKeyUsage, never compared.
 */
export function goKnownExtKeyUsages(oids: readonly string[]): string[] {
  return oids.filter((oid) => GO_KNOWN_EXT_KEY_USAGES.has(oid));
}

// Bit n of Go's x509.KeyUsage (the flags above) is the n-th name.
const KEY_USAGE_BIT_NAMES = [
  'digital signature',
  'content commitment',
  'key encipherment',
  'data encipherment',
  'key agreement',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
];

/** KeyUsage flags as cert-manager names them (apiutil.KeyUsageStrings), lowest bit first. */
export function keyUsageNames(flags: number): string[] {
  return KEY_USAGE_BIT_NAMES.filter((_, bit) => flags & (1 << bit));
}

/**
 * EKU OIDs as cert-manager names them (apiutil.ExtKeyUsageStrings): `email protection` for
 * the OID `s/mime` shares (Go picks either at random), `unknown` for purposes it has no name for.
 */
export function extKeyUsageNames(oids: readonly string[]): string[] {
  return oids.map(
    (oid) => Object.keys(EXT_KEY_USAGES).find((n) => EXT_KEY_USAGES[n] === oid) ?? 'unknown',
  );
}
