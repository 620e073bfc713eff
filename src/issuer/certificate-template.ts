import type { Issuer } from '../api/issuer.js';
import type { CertificateTemplate } from '../pki/certificate.js';
import type { SigningRequest } from './signing-request.js';

/** cert-manager's default certificate lifetime: 90 days. */
export const DEFAULT_DURATION_MS = 2160 * 3600 * 1000;

/** The certificate an issuer makes of a request: its lifetime, CA flag and usages, plus the issuer's CRL, OCSP and AIA URLs. */
export function certificateTemplate(request: SigningRequest, issuer: Issuer): CertificateTemplate {
  const ca = issuer.spec.ca;
  const template: CertificateTemplate = {
    durationMs: request.durationMs,
    isCA: request.isCA,
    usages: request.usages,
    certSignForCA: request.certSignForCA,
    ...(ca?.crlDistributionPoints ? { crlDistributionPoints: ca.crlDistributionPoints } : {}),
    ...(ca?.ocspServers ? { ocspServers: ca.ocspServers } : {}),
    ...(ca?.issuingCertificateURLs ? { issuingCertificateURLs: ca.issuingCertificateURLs } : {}),
  };
  const selfSignedCrl = issuer.spec.selfSigned?.crlDistributionPoints;
  if (selfSignedCrl) template.crlDistributionPoints = selfSignedCrl;
  return template;
}
