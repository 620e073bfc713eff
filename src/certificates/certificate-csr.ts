import type { KeyObject } from 'node:crypto';
import type { CertificateSpec } from '../api/certificate.js';
import type { CsrRequest } from '../pki/csr.js';

/**
 * The CSR a Certificate asks for (cert-manager's GenerateCSR): subject and common name, or the
 * literal subject; the SANs, otherNames included; KeyUsage and ExtKeyUsage unless
 * encodeUsagesInRequest is false; the name constraints; signed with spec.signatureAlgorithm.
 */
export function csrRequestFor(spec: CertificateSpec, key: KeyObject): CsrRequest {
  const request: CsrRequest = {
    key,
    subject: {
      ...spec.subject,
      ...(spec.commonName !== undefined ? { commonName: spec.commonName } : {}),
    },
    dnsNames: spec.dnsNames ?? [],
    ipAddresses: spec.ipAddresses ?? [],
    uris: spec.uris ?? [],
    emailAddresses: spec.emailAddresses ?? [],
  };
  if (spec.otherNames?.length)
    // Validation requires both fields of every entry.
    request.otherNames = spec.otherNames.map(({ oid = '', utf8Value = '' }) => ({
      oid,
      utf8Value,
    }));
  if (spec.nameConstraints) request.nameConstraints = spec.nameConstraints;
  if (spec.signatureAlgorithm) request.signatureAlgorithm = spec.signatureAlgorithm;
  if (spec.literalSubject) request.literalSubject = spec.literalSubject;
  if (spec.encodeUsagesInRequest !== false)
    request.usages = { names: spec.usages ?? [], isCA: spec.isCA ?? false };
  return request;
}
