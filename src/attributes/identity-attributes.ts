import { quoted } from '../api/echoed-value.js';
import type { SubjectSpec } from '../api/volume-spec.js';
import { parseLiteralSubject } from '../pki/literal-subject.js';
import { ipAddressBytes, validateUri } from '../pki/san.js';
import { codePoints, tooLong, tooMany } from './attribute-errors.js';
import type { AttributeName } from './attribute-keys.js';
import type { AttributeReader } from './attribute-reader.js';
import {
  COMMON_NAME_MAX_CHARACTERS,
  dnsNameProblem,
  LITERAL_SUBJECT_MAX_CHARACTERS,
  SUBJECT_ALT_NAMES_MAX,
  SUBJECT_VALUE_MAX_CHARACTERS,
  SUBJECT_VALUES_MAX,
  URI_MAX_CHARACTERS,
} from './identity-limits.js';
import { splitCsvRecord, splitSanList } from './list-splitting.js';
import {
  expandVariables,
  POD_IP_VARIABLE_NAMES,
  referencedVariables,
  type Variables,
} from './variable-expansion.js';

/** What the certificate names: subject (or literal subject) and SANs, variables expanded. */
export interface Identity {
  literalSubject?: string;
  subject: SubjectSpec;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  /** True when ip-sans uses ${POD_IP} or ${POD_IPS}. */
  usesPodIPs: boolean;
}

/** The values of ${POD_IP} and ${POD_IPS}. */
export interface PodIpVariables {
  POD_IP: string;
  POD_IPS: string;
}

type SubjectListField = Exclude<keyof SubjectSpec, 'commonName' | 'serialNumber'>;

const SUBJECT_LISTS: ReadonlyArray<[AttributeName, SubjectListField]> = [
  ['organizations', 'organizations'],
  ['organizationalunits', 'organizationalUnits'],
  ['countries', 'countries'],
  ['provinces', 'provinces'],
  ['localities', 'localities'],
  ['streetaddresses', 'streetAddresses'],
  ['postalcodes', 'postalCodes'],
];

// The pki helpers throw PkiError, nothing else.
const errorText = (err: unknown): string => (err as Error).message;

// A literal-subject replaces every other subject attribute; those are still
// checked, where csi-driver skips them. Lengths and counts are checked after
// expansion, against identity-limits.ts, so that the CSR builds and signs.

/** The longest textual IPv4 address. */
export const LONGEST_IPV4 = '255.255.255.255';
/** The longest textual IPv6 address (45 characters: six groups, then an IPv4 tail). */
export const LONGEST_IPV6 = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255';

/**
 * What the pod's IPs may turn out to be, at worst, once known: the longest address of each
 * family first, with the other family beside it (Kubernetes gives a pod at most one address
 * per family). An attribute using ${POD_IP} or ${POD_IPS} must be valid with each.
 */
export const POD_IP_WORST_CASES: readonly PodIpVariables[] = [
  { POD_IP: LONGEST_IPV4, POD_IPS: `${LONGEST_IPV4},${LONGEST_IPV6}` },
  { POD_IP: LONGEST_IPV6, POD_IPS: `${LONGEST_IPV6},${LONGEST_IPV4}` },
];

/**
 * Reads the subject and SAN attributes, expanding variables where csi-driver does, and
 * ${POD_IP} and ${POD_IPS} in ip-sans. The pod's IPs are often unknown at publish (and a
 * renewal may see others), so attributes using them are also checked with every worst case
 * (POD_IP_WORST_CASES): what passes here never fails once the real IPs are known.
 */
export function readIdentity(
  attrs: AttributeReader,
  variables: Variables,
  podIpVariables: PodIpVariables,
): Identity {
  const identity = readIdentityWith(attrs, variables, podIpVariables);
  if (identity.usesPodIPs) checkPodIpWorstCases(attrs, variables);
  return identity;
}

// Errors that only a worst case shows are recorded once, saying which pod IPs they need.
function checkPodIpWorstCases(attrs: AttributeReader, variables: Variables): void {
  const seen = new Set(attrs.errors.map((e) => `${e.key}\n${e.message}`));
  for (const worst of POD_IP_WORST_CASES) {
    const scratch = attrs.fresh();
    readIdentityWith(scratch, variables, worst);
    for (const error of scratch.errors) {
      const id = `${error.key}\n${error.message}`;
      if (seen.has(id)) continue;
      seen.add(id);
      attrs.errors.push({
        key: error.key,
        message: `with the pod IPs ${worst.POD_IPS} (the longest of each family; the real ones are known only at issuance): ${error.message}`,
      });
    }
  }
}

/** readIdentity with one value of the pod IP variables. */
function readIdentityWith(
  attrs: AttributeReader,
  variables: Variables,
  podIpVariables: PodIpVariables,
): Identity {
  // os.Expand on one attribute; undefined means the error is recorded.
  const expand = (name: AttributeName): string | undefined => {
    const text = attrs.nonEmpty(name);
    if (text === undefined) return undefined;
    const expansion = expandVariables(text, variables);
    if (expansion.ok) return expansion.value;
    attrs.fail(name, expansion.message);
    return undefined;
  };

  const subject: SubjectSpec = {};
  const commonName = expand('common-name');
  if (commonName) {
    subject.commonName = commonName;
    checkLength(attrs, 'common-name', commonName, COMMON_NAME_MAX_CHARACTERS);
  }
  // Not expanded, as in csi-driver.
  const serialNumber = attrs.nonEmpty('serialnumber');
  if (serialNumber !== undefined) {
    subject.serialNumber = serialNumber;
    checkLength(attrs, 'serialnumber', serialNumber, SUBJECT_VALUE_MAX_CHARACTERS);
  }
  for (const [name, field] of SUBJECT_LISTS) {
    const text = expand(name);
    if (text === undefined) continue;
    const split = splitCsvRecord(text);
    if (!split.ok) {
      attrs.fail(name, split.message);
      continue;
    }
    subject[field] = split.values;
    if (split.values.length > SUBJECT_VALUES_MAX) {
      attrs.fail(name, tooMany(split.values.length, SUBJECT_VALUES_MAX, 'values'));
      continue;
    }
    for (const value of split.values) checkLength(attrs, name, value, SUBJECT_VALUE_MAX_CHARACTERS);
  }

  const identity: Identity = {
    subject,
    dnsNames: [],
    ipAddresses: [],
    uris: [],
    usesPodIPs: false,
  };
  const literalSubject = expand('literal-subject');
  // Empty after expansion (an unset variable) reads as unset, not as an empty subject.
  if (literalSubject && codePoints(literalSubject) > LITERAL_SUBJECT_MAX_CHARACTERS) {
    attrs.fail('literal-subject', tooLong(literalSubject, LITERAL_SUBJECT_MAX_CHARACTERS));
  } else if (literalSubject) {
    try {
      parseLiteralSubject(literalSubject);
      identity.literalSubject = literalSubject;
      identity.subject = {};
    } catch (err) {
      attrs.fail('literal-subject', errorText(err));
    }
  }

  const dnsNames = splitSanList(readDnsNames(attrs, expand) ?? '');
  for (const name of dnsNames) {
    const problem = dnsNameProblem(name);
    if (problem !== undefined) attrs.fail('dns-names', problem);
  }
  identity.dnsNames = dnsNames;

  const ipSansText = attrs.value('ip-sans');
  const ipSans = readIpSans(ipSansText, podIpVariables);
  for (const problem of ipSans.problems) attrs.fail('ip-sans', problem);
  const ipAddresses = ipSans.ipAddresses;
  identity.ipAddresses = ipAddresses;

  const uris = splitSanList(expand('uri-sans') ?? '');
  const tooLongUris = uris.filter((uri) => codePoints(uri) > URI_MAX_CHARACTERS);
  for (const uri of tooLongUris) {
    attrs.fail('uri-sans', tooLong(uri, URI_MAX_CHARACTERS));
  }
  // csi-driver joins the parse errors into one message; at most three are listed.
  const badUris = uris
    .filter((uri) => !tooLongUris.includes(uri))
    .flatMap((uri) => problemOf(() => validateUri(uri)));
  if (badUris.length > 0) attrs.fail('uri-sans', listed(badUris).join(', '));
  identity.uris = uris;

  const tooManySans = sanCountProblem(dnsNames.length + ipAddresses.length + uris.length);
  if (tooManySans !== undefined) {
    for (const [name, list] of SAN_LISTS) {
      if (identity[list].length > 0) attrs.fail(name, tooManySans);
    }
  }

  identity.usesPodIPs = referencedVariables(ipSansText ?? '').some(isPodIpVariable);
  return identity;
}

/**
 * ip-sans expanded with the pod IP variables (csi-driver expands nothing there; only the pod's
 * IPs are offered): its addresses, and why they are refused, if they are.
 */
export function readIpSans(
  text: string | undefined,
  podIpVariables: PodIpVariables,
): { ipAddresses: string[]; problems: string[] } {
  if (text === undefined) return { ipAddresses: [], problems: [] };
  const expansion = expandVariables(text, { ...podIpVariables });
  if (!expansion.ok) return { ipAddresses: [], problems: [expansion.message] };
  const ipAddresses = splitSanList(expansion.value);
  const badIps = ipAddresses.filter((ip) => problemOf(() => ipAddressBytes(ip)).length > 0);
  if (badIps.length === 0) return { ipAddresses, problems: [] };
  // csi-driver's message, listing at most three of them.
  const more = badIps.length > 3 ? ` and ${badIps.length - 3} more` : '';
  const shown = badIps.slice(0, 3).map(quoted).join(',');
  return { ipAddresses, problems: [`failed to parse IP address: [${shown}]${more}`] };
}

/** Why a certificate cannot hold this many SANs (dns-names, ip-sans and uri-sans), if it cannot. */
export function sanCountProblem(count: number): string | undefined {
  if (count <= SUBJECT_ALT_NAMES_MAX) return undefined;
  return tooMany(
    count,
    SUBJECT_ALT_NAMES_MAX,
    'subject alternative names (dns-names, ip-sans and uri-sans together)',
  );
}

/**
 * dns-names refuses ${POD_IP} and ${POD_IPS}: the pod may have an IPv6 address, whose ':'
 * no DNS name can hold, and its family is unknown until issuance (csi-driver has no such
 * variables; cert-csi offered them here before). The address belongs in ip-sans.
 */
function readDnsNames(
  attrs: AttributeReader,
  expand: (name: AttributeName) => string | undefined,
): string | undefined {
  const text = attrs.nonEmpty('dns-names');
  const podIpNames = referencedVariables(text ?? '').filter(isPodIpVariable);
  if (podIpNames.length === 0) return expand('dns-names');
  const used = [...new Set(podIpNames)].map((name) => `\${${name}}`).join(' and ');
  attrs.fail(
    'dns-names',
    `${used} cannot be used in dns-names: the pod's address may be IPv6, whose ':' no DNS name can hold, and its family is known only at issuance; put the pod's IP in ip-sans`,
  );
  return undefined;
}

const isPodIpVariable = (name: string): boolean =>
  (POD_IP_VARIABLE_NAMES as readonly string[]).includes(name);

const SAN_LISTS: ReadonlyArray<[AttributeName, 'dnsNames' | 'ipAddresses' | 'uris']> = [
  ['dns-names', 'dnsNames'],
  ['ip-sans', 'ipAddresses'],
  ['uri-sans', 'uris'],
];

// At most three of many, then how many more: thousands of bad elements are one short message.
function listed(items: readonly string[]): string[] {
  const shown = items.slice(0, 3);
  if (items.length > 3) shown.push(`and ${items.length - 3} more`);
  return shown;
}

// X.509's upper bounds count characters, not bytes.
function checkLength(attrs: AttributeReader, name: AttributeName, value: string, max: number) {
  if (codePoints(value) > max) attrs.fail(name, tooLong(value, max));
}

function problemOf(check: () => unknown): string[] {
  try {
    check();
    return [];
  } catch (err) {
    return [errorText(err)];
  }
}
