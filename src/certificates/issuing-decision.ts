import type { KeyObject, X509Certificate } from 'node:crypto';
import {
  CERTIFICATE_REVISION_ANNOTATION,
  type Certificate,
  CertificateCondition,
  type CertificateStatus,
} from '../api/certificate.js';
import {
  type CertificateRequest,
  CRCondition,
  CRReason,
  decodeBytes,
} from '../api/certificate-request.js';
import {
  type Condition,
  findCondition,
  formatTimestamp,
  observedGenerationOf,
  setCondition,
} from '../api/conditions.js';
import { errorMessage } from '../base/error-message.js';
import { publicKeysEqual } from '../pki/keys.js';
import type { OwnedRequest } from './next-request-plan.js';
import { certificateOfPem } from './pem-decodings.js';
import { privateKeyMismatches } from './private-key-match.js';
import { requestMismatches } from './request-match.js';
import { isStaleFailure } from './stale-failure.js';

/** The reason of a failure found in the issued certificate itself. */
export const INVALID_CERTIFICATE_REASON = 'InvalidCertificate';
/** The message of the Normal Issuing event once the Secret holds the new certificate. */
export const ISSUED_MESSAGE = 'The certificate has been successfully issued';

/** What cert-manager's issuing controller does with an issuing Certificate. */
export type IssuingDecision =
  | { action: 'wait' }
  | { action: 'fail'; reason: string; message: string }
  | { action: 'issue'; request: CertificateRequest };

function failWith(condition: Condition): IssuingDecision {
  return {
    action: 'fail',
    reason: condition.reason ?? '',
    message: `The certificate request has failed to complete and will be retried: ${condition.message ?? ''}`,
  };
}

function invalidCertificate(message: string): IssuingDecision {
  return {
    action: 'fail',
    reason: INVALID_CERTIFICATE_REASON,
    message: `The certificate request has failed to complete and will be retried: ${message}`,
  };
}

/**
 * Decides whether the next revision's request has ended: it waits until the next key and
 * exactly one matching request of the next revision exist, then fails on Denied, InvalidRequest
 * or Failed (in that order: a misbehaving issuer that also says Issued still fails), and issues
 * on Issued once the certificate decodes, is for the CSR's key and has not expired.
 */
export function issuingDecision(input: {
  certificate: Certificate;
  nextKey: KeyObject | undefined;
  owned: readonly OwnedRequest[];
  now: Date;
}): IssuingDecision {
  const { certificate, nextKey, owned, now } = input;
  if (!nextKey || privateKeyMismatches(nextKey, certificate.spec.privateKey).length > 0)
    return { action: 'wait' };
  const next = (certificate.status?.revision ?? 0) + 1;
  const ofNext = owned.filter(
    (o) => o.request.metadata.annotations?.[CERTIFICATE_REVISION_ANNOTATION] === String(next),
  );
  if (ofNext.length !== 1) return { action: 'wait' };
  const [{ request, csr }] = ofNext as [OwnedRequest];
  if (csr instanceof Error || requestMismatches(request.spec, csr, certificate.spec).length > 0)
    return { action: 'wait' };
  if (!publicKeysEqual(csr.publicKey, nextKey)) return { action: 'wait' };
  const issuing = findCondition(certificate.status?.conditions, CertificateCondition.Issuing);
  if (!issuing) return { action: 'wait' };
  const conditions = request.status?.conditions;
  const ready = findCondition(conditions, CRCondition.Ready);
  // A failure from before this attempt began: the requestmanager replaces that request.
  if (isStaleFailure(request, issuing.lastTransitionTime)) return { action: 'wait' };
  const denied = findCondition(conditions, CRCondition.Denied);
  if (denied?.status === 'True') return failWith(denied);
  const invalid = findCondition(conditions, CRCondition.InvalidRequest);
  if (invalid?.status === 'True') return failWith(invalid);
  if (!ready) return { action: 'wait' };
  if (ready.reason === CRReason.Failed) return failWith(ready);
  if (ready.reason !== CRReason.Issued) return { action: 'wait' };
  let leaf: X509Certificate;
  try {
    leaf = certificateOfPem(decodeBytes(request.status?.certificate) ?? '');
  } catch (err) {
    return invalidCertificate(
      `Issuer returned an invalid certificate: failed to decode: ${errorMessage(err)}`,
    );
  }
  if (!publicKeysEqual(leaf.publicKey, csr.publicKey))
    return invalidCertificate(
      'Issuer returned a certificate with a public key that does not match the CSR. This usually indicates a misconfigured issuer.',
    );
  const notAfter = new Date(leaf.validTo);
  if (now.getTime() > notAfter.getTime())
    return invalidCertificate(
      `Issuer returned an already expired certificate (notAfter: ${formatTimestamp(notAfter)}). This usually indicates an expired CA certificate in the issuer.`,
    );
  return { action: 'issue', request };
}

/**
 * The status after a failed issuance: lastFailureTime now, one more failed attempt, and
 * Issuing=False with the request's reason (it stays, so the trigger's backoff can see it).
 */
export function failedIssuanceStatus(
  certificate: Certificate,
  failure: { reason: string; message: string },
  now: Date,
): CertificateStatus {
  const status = certificate.status ?? {};
  return {
    ...status,
    lastFailureTime: formatTimestamp(now),
    failedIssuanceAttempts: (status.failedIssuanceAttempts ?? 0) + 1,
    conditions: setCondition(
      status.conditions,
      {
        type: CertificateCondition.Issuing,
        status: 'False',
        reason: failure.reason,
        message: failure.message,
        ...observedGenerationOf(certificate),
      },
      now,
    ),
  };
}

/** The status once the Secret holds the next revision: revision raised, Issuing and the failure fields gone. */
export function issuedStatus(certificate: Certificate): CertificateStatus {
  const {
    lastFailureTime: _lastFailureTime,
    failedIssuanceAttempts: _failedIssuanceAttempts,
    ...status
  } = certificate.status ?? {};
  return {
    ...status,
    revision: (status.revision ?? 0) + 1,
    conditions: (status.conditions ?? []).filter((c) => c.type !== CertificateCondition.Issuing),
  };
}
