import type { CertificateSpec } from '../api/certificate.js';
import type { CertificateRequestSpec } from '../api/certificate-request.js';
import { defaultIssuerRef } from '../api/issuer-ref.js';
import { sameUnordered } from '../base/unordered-lists.js';
import type { ParsedCsr } from '../pki/csr.js';
import { parseGoDuration } from '../pki/duration.js';
import { decodeOtherNames, sameIpAddresses } from '../pki/san.js';
import { parseLiteralSubject, subjectFieldsOf } from '../pki/subject.js';

function durationMs(text: string): number | undefined {
  try {
    return parseGoDuration(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether the CSR carries exactly the spec's otherNames, in any order. cert-manager compares
 * only when the spec lists some and then also fails a CSR without a SAN extension; here an
 * unset list is an empty one, so removing every otherName asks for a new certificate, and
 * `otherNames: []` never mismatches a CSR without SANs. A value that is no UTF8String (or
 * DER that does not decode) matches nothing.
 */
function sameOtherNames(csr: ParsedCsr, spec: CertificateSpec): boolean {
  const key = (oid: string, value: string) => `${oid} ${value}`;
  let actual: string[];
  try {
    actual = decodeOtherNames(csr.sanExtension?.der ?? new Uint8Array([0x30, 0])).map(
      ({ oid, utf8Value }) => (utf8Value === undefined ? '\u0000' : key(oid, utf8Value)),
    );
  } catch {
    return false;
  }
  const wanted = (spec.otherNames ?? []).map(({ oid = '', utf8Value = '' }) => key(oid, utf8Value));
  return sameUnordered(actual, wanted);
}

function sameBytes(a: ArrayBuffer, b: ArrayBuffer): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}

/**
 * The Certificate spec fields a CertificateRequest (its spec and its decoded CSR) no longer
 * matches, in cert-manager's RequestMatchesSpec order and names (pkg/util/pki/match.go): an empty
 * list means the request is still the one the spec asks for. Usages are compared as written
 * (no defaulting), duration only when both are set, the issuer with kind and group defaulted.
 */
export function requestMismatches(
  request: CertificateRequestSpec,
  csr: ParsedCsr,
  spec: CertificateSpec,
): string[] {
  const violations: string[] = [];
  const { sans } = csr;
  if (!sameIpAddresses(sans.ipAddresses, spec.ipAddresses)) violations.push('spec.ipAddresses');
  if (!sameUnordered(sans.uris, spec.uris)) violations.push('spec.uris');
  if (!sameUnordered(sans.emailAddresses, spec.emailAddresses))
    violations.push('spec.emailAddresses');
  if (!sameUnordered(sans.dnsNames, spec.dnsNames)) violations.push('spec.dnsNames');
  if (!sameOtherNames(csr, spec)) violations.push('spec.otherNames');
  if (spec.literalSubject) {
    let literal: ArrayBuffer | undefined;
    try {
      literal = parseLiteralSubject(spec.literalSubject);
    } catch {
      literal = undefined;
    }
    if (!literal || !sameBytes(literal, csr.subjectDer)) violations.push('spec.literalSubject');
  } else {
    const subject = subjectFieldsOf(csr.subjectDer);
    const wanted = spec.subject ?? {};
    if (subject.commonName !== (spec.commonName ?? '')) violations.push('spec.commonName');
    if (subject.serialNumber !== (wanted.serialNumber ?? ''))
      violations.push('spec.subject.serialNumber');
    const lists: Array<[string, string[], string[] | undefined]> = [
      ['spec.subject.organizations', subject.organizations, wanted.organizations],
      ['spec.subject.countries', subject.countries, wanted.countries],
      ['spec.subject.localities', subject.localities, wanted.localities],
      ['spec.subject.organizationalUnits', subject.organizationalUnits, wanted.organizationalUnits],
      // cert-manager's spelling.
      ['spec.subject.postCodes', subject.postalCodes, wanted.postalCodes],
      ['spec.subject.provinces', subject.provinces, wanted.provinces],
      ['spec.subject.streetAddresses', subject.streetAddresses, wanted.streetAddresses],
    ];
    for (const [field, actual, expected] of lists) {
      if (!sameUnordered(actual, expected)) violations.push(field);
    }
  }
  if ((request.isCA ?? false) !== (spec.isCA ?? false)) violations.push('spec.isCA');
  if (!sameUnordered(request.usages, spec.usages)) violations.push('spec.usages');
  if (request.duration !== undefined && spec.duration !== undefined) {
    const asked = durationMs(request.duration);
    if (asked === undefined || asked !== durationMs(spec.duration))
      violations.push('spec.duration');
  }
  const requested = defaultIssuerRef(request.issuerRef);
  const wantedIssuer = defaultIssuerRef(spec.issuerRef);
  if (
    requested.name !== wantedIssuer.name ||
    requested.kind !== wantedIssuer.kind ||
    requested.group !== wantedIssuer.group
  )
    violations.push('spec.issuerRef');
  return violations;
}
