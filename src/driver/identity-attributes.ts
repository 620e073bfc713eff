import type { SubjectSpec } from '../api/volume-spec.js';
import {
  encodeSubjectAltNames,
  ipAddressBytes,
  parseLiteralSubject,
  validateUri,
} from '../pki/index.js';
import type { AttributeName } from './attribute-keys.js';
import type { AttributeReader } from './attribute-reader.js';
import { splitCsvRecord, splitSanList } from './list-splitting.js';
import { expandVariables, type Variables } from './variable-expansion.js';

/** What the certificate names: subject (or literal subject) and SANs, variables expanded. */
export interface Identity {
  literalSubject?: string;
  subject: SubjectSpec;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
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
// checked, where csi-driver skips them.

/** Reads the subject and SAN attributes, expanding variables where csi-driver does. */
export function readIdentity(attrs: AttributeReader, variables: Variables): Identity {
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
  if (commonName) subject.commonName = commonName;
  // Not expanded, as in csi-driver.
  const serialNumber = attrs.nonEmpty('serialnumber');
  if (serialNumber !== undefined) subject.serialNumber = serialNumber;
  for (const [name, field] of SUBJECT_LISTS) {
    const text = expand(name);
    if (text === undefined) continue;
    const split = splitCsvRecord(text);
    if (split.ok) subject[field] = split.values;
    else attrs.fail(name, split.message);
  }

  const identity: Identity = { subject, dnsNames: [], ipAddresses: [], uris: [] };
  const literalSubject = expand('literal-subject');
  // Empty after expansion (an unset variable) reads as unset, not as an empty subject.
  if (literalSubject) {
    try {
      parseLiteralSubject(literalSubject);
      identity.literalSubject = literalSubject;
      identity.subject = {};
    } catch (err) {
      attrs.fail('literal-subject', errorText(err));
    }
  }

  const dnsNames = splitSanList(expand('dns-names') ?? '');
  const badDnsNames = dnsNames.flatMap((name) =>
    problemOf(() => encodeSubjectAltNames({ dnsNames: [name] })),
  );
  if (badDnsNames.length > 0) attrs.fail('dns-names', badDnsNames.join(', '));
  identity.dnsNames = dnsNames;

  // Not expanded, as in csi-driver.
  const ipAddresses = splitSanList(attrs.value('ip-sans') ?? '');
  const badIps = ipAddresses.filter((ip) => problemOf(() => ipAddressBytes(ip)).length > 0);
  if (badIps.length > 0) {
    attrs.fail('ip-sans', `failed to parse IP address: ["${badIps.join('","')}"]`);
  }
  identity.ipAddresses = ipAddresses;

  const uris = splitSanList(expand('uri-sans') ?? '');
  const badUris = uris.flatMap((uri) => problemOf(() => validateUri(uri)));
  if (badUris.length > 0) attrs.fail('uri-sans', badUris.join(', '));
  identity.uris = uris;

  return identity;
}

function problemOf(check: () => unknown): string[] {
  try {
    check();
    return [];
  } catch (err) {
    return [errorText(err)];
  }
}
