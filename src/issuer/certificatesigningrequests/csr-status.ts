import { encodeBytes } from '../../api/certificate-request.js';
import {
  type CertificateSigningRequest,
  type CertificateSigningRequestStatus,
  CSR_CONDITION_FAILED,
} from '../../api/certificate-signing-request.js';
import { formatTimestamp } from '../../api/conditions.js';

/**
 * The status that fails a CSR: its conditions with Failed appended (reason, message, both
 * times now), as cert-manager's CertificateSigningRequestSetFailed writes it. The API lets a
 * Failed condition be written once and never removed, so it is final.
 */
export function failedCsrStatus(
  csr: CertificateSigningRequest,
  reason: string,
  message: string,
  now: Date,
): CertificateSigningRequestStatus {
  const time = formatTimestamp(now);
  return {
    ...csr.status,
    conditions: [
      ...(csr.status?.conditions ?? []),
      {
        type: CSR_CONDITION_FAILED,
        status: 'True',
        reason,
        message,
        lastTransitionTime: time,
        lastUpdateTime: time,
      },
    ],
  };
}

/** The status that answers a CSR: its conditions as they are, and the issued chain (base64 PEM). */
export function issuedCsrStatus(
  csr: CertificateSigningRequest,
  chainPem: string,
): CertificateSigningRequestStatus {
  return { ...csr.status, certificate: encodeBytes(chainPem) };
}
