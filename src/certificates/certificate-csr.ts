import type { KeyObject } from 'node:crypto';
import type { CertificateSpec } from '../api/certificate.js';
import type { CsrRequest } from '../pki/csr.js';

/**
 * The CSR a Certificate asks for (cert-manager's GenerateCSR): subject and common name, or the
 * literal subject; the SANs; KeyUsage and ExtKeyUsage unless encodeUsagesInRequest is false.
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
  if (spec.literalSubject) request.literalSubject = spec.literalSubject;
  if (spec.encodeUsagesInRequest !== false)
    request.usages = { names: spec.usages ?? [], isCA: spec.isCA ?? false };
  return request;
}
