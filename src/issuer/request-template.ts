import { type CertificateRequest, decodeBytes } from '../api/certificate-request.js';
import type { Issuer } from '../api/issuer.js';
import type { CertificateTemplate } from '../pki/certificate.js';
import { type ParsedCsr, parseCsr } from '../pki/csr.js';
import { parseGoDuration } from '../pki/duration.js';
import { isKnownUsage } from '../pki/usages.js';

/** cert-manager's default certificate lifetime: 90 days. */
export const DEFAULT_DURATION_MS = 2160 * 3600 * 1000;

/** The parsed CSR and the certificate template a request asks for. */
export interface RequestTemplate {
  csr: ParsedCsr;
  template: CertificateTemplate;
}

/**
 * Reads what the request asks for: CSR (signature checked), lifetime, CA flag, usages,
 * and the issuer's CRL/OCSP/AIA URLs. Throws when the request cannot be signed as written.
 */
export async function templateFromRequest(
  request: CertificateRequest,
  issuer: Issuer,
): Promise<RequestTemplate> {
  const csr = await parseCsr(decodeBytes(request.spec.request) ?? '');
  const durationMs =
    request.spec.duration === undefined
      ? DEFAULT_DURATION_MS
      : parseGoDuration(request.spec.duration);
  if (!(durationMs > 0)) {
    throw new Error(`spec.duration must be positive, got "${request.spec.duration}"`);
  }
  const unknown = (request.spec.usages ?? []).filter((usage) => !isKnownUsage(usage));
  if (unknown.length > 0) {
    throw new Error(`unknown key usages: ${unknown.map((u) => `"${u}"`).join(', ')}`);
  }
  const ca = issuer.spec.ca;
  const template: CertificateTemplate = {
    durationMs,
    isCA: request.spec.isCA === true,
    usages: request.spec.usages ?? [],
    ...(ca?.crlDistributionPoints ? { crlDistributionPoints: ca.crlDistributionPoints } : {}),
    ...(ca?.ocspServers ? { ocspServers: ca.ocspServers } : {}),
    ...(ca?.issuingCertificateURLs ? { issuingCertificateURLs: ca.issuingCertificateURLs } : {}),
  };
  const selfSignedCrl = issuer.spec.selfSigned?.crlDistributionPoints;
  if (selfSignedCrl) template.crlDistributionPoints = selfSignedCrl;
  return { csr, template };
}
