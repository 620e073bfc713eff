import type { X509Certificate } from 'node:crypto';
import type { CertificateSpec } from '../api/certificate.js';
import { sameUnordered } from '../base/unordered-lists.js';
import { readCertificateFields } from '../pki/certificate-fields.js';
import { ExtensionOid } from '../pki/extensions.js';
import { decodeSubjectAltNames, sameIpAddresses } from '../pki/san.js';
import { type SubjectFields, subjectFieldsOf } from '../pki/subject.js';

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((value) => b.has(value));
}

/** The names of an issued certificate: its subject's common name and its SANs. */
export interface IssuedNames {
  commonName: string;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  emailAddresses: string[];
}

/** Reads an issued certificate's subject fields and names in one pass (throws PkiError on a malformed one). */
export function issuedSubjectOf(certificate: X509Certificate): {
  subject: Required<SubjectFields>;
  names: IssuedNames;
} {
  const fields = readCertificateFields(certificate.raw);
  const san = fields.extensions.get(ExtensionOid.subjectAltName);
  const sans = san
    ? decodeSubjectAltNames(san.value)
    : { dnsNames: [], ipAddresses: [], uris: [], emailAddresses: [] };
  const subject = subjectFieldsOf(fields.subjectDer);
  return { subject, names: { commonName: subject.commonName, ...sans } };
}

/** Reads the names an issued certificate carries (throws PkiError on a malformed one). */
export function issuedNamesOf(certificate: X509Certificate): IssuedNames {
  return issuedSubjectOf(certificate).names;
}

/**
 * The spec fields an issued certificate's names no longer match (cert-manager's
 * SecretDataAltNamesMatchSpec, a looser check than the request's): the common name and DNS
 * names may move between the subject and the SANs, as some CAs do; IPs, URIs and emails
 * must match in any order.
 */
export function issuedNamesMismatches(names: IssuedNames, spec: CertificateSpec): string[] {
  const violations: string[] = [];
  const expected = new Set(spec.dnsNames ?? []);
  if (spec.commonName) expected.add(spec.commonName);
  const actual = new Set(names.dnsNames);
  if (names.commonName) actual.add(names.commonName);
  if (!sameSet(actual, expected)) {
    if (
      (spec.commonName && !actual.has(spec.commonName)) ||
      (names.commonName && !expected.has(names.commonName))
    )
      violations.push('spec.commonName');
    if (
      !(spec.dnsNames ?? []).every((name) => actual.has(name)) ||
      !names.dnsNames.every((name) => expected.has(name))
    )
      violations.push('spec.dnsNames');
  }
  if (!sameIpAddresses(names.ipAddresses, spec.ipAddresses)) violations.push('spec.ipAddresses');
  if (!sameUnordered(names.uris, spec.uris)) violations.push('spec.uris');
  if (!sameUnordered(names.emailAddresses, spec.emailAddresses))
    violations.push('spec.emailAddresses');
  return violations;
}
