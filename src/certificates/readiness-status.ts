import { CertificateCondition, type CertificateStatus } from '../api/certificate.js';
import {
  type Condition,
  formatTimestamp,
  observedGenerationOf,
  setCondition,
} from '../api/conditions.js';
import {
  certificateRenewalTime,
  type PolicyInput,
  PolicyReason,
  readinessViolation,
} from './policy-chains.js';
import { secretCertificate } from './secret-contents.js';

/** The Ready condition's reason and message when nothing is wrong. */
export const READY_REASON = 'Ready';
export const READY_MESSAGE = 'Certificate is up to date and has not expired';

/** The Ready message when the renewal windows cannot place the renewal time. */
export function windowErrorMessage(error: string): string {
  return `Could not calculate renewal time: ${error}`;
}

/**
 * The status cert-manager's readiness controller writes: the Ready condition from the
 * readiness chain, and notBefore, notAfter and renewalTime from the Secret's certificate,
 * cleared when there is no readable one. Everything else in the status is kept. When the
 * renewal windows cannot place the renewal time, Ready is False with reason WindowError (the
 * controller also sends that as a Warning event).
 */
export function readinessStatus(input: PolicyInput): CertificateStatus {
  const { certificate, secret, now } = input;
  const found = readinessViolation(input);
  const ready: Omit<Condition, 'lastTransitionTime'> = found
    ? {
        type: CertificateCondition.Ready,
        status: 'False',
        reason: found.reason,
        message: found.message,
      }
    : {
        type: CertificateCondition.Ready,
        status: 'True',
        reason: READY_REASON,
        message: READY_MESSAGE,
      };
  Object.assign(ready, observedGenerationOf(certificate));
  const {
    notBefore: _notBefore,
    notAfter: _notAfter,
    renewalTime: _renewalTime,
    ...kept
  } = certificate.status ?? {};
  const status: CertificateStatus = {
    ...kept,
    conditions: setCondition(certificate.status?.conditions, ready, now),
  };
  const decoded = secret ? secretCertificate(secret) : undefined;
  if (!decoded?.ok) return status;
  const leaf = decoded.value;
  status.notBefore = formatTimestamp(new Date(leaf.validFrom));
  status.notAfter = formatTimestamp(new Date(leaf.validTo));
  const renewal = certificateRenewalTime(certificate, leaf);
  if (renewal.at) status.renewalTime = formatTimestamp(renewal.at);
  if (renewal.error !== undefined) {
    const windowError = {
      type: CertificateCondition.Ready,
      status: 'False' as const,
      reason: PolicyReason.WindowError,
      message: windowErrorMessage(renewal.error),
      ...observedGenerationOf(certificate),
    };
    status.conditions = setCondition(certificate.status?.conditions, windowError, now);
  }
  return status;
}
