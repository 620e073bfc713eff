import { type CertificateRequest, CRCondition, CRReason } from '../api/certificate-request.js';
import { findCondition } from '../api/conditions.js';

/**
 * Whether a request ended in failure before the current issuance attempt began (the Issuing
 * condition's lastTransitionTime): a previous attempt's, which the requestmanager replaces.
 * cert-manager counts only reason Failed; a Denied request counts too here, so the attempt
 * after the backoff asks again instead of failing at once on the old denial (README).
 */
export function isStaleFailure(
  request: CertificateRequest,
  issuingSince: string | undefined,
): boolean {
  const ready = findCondition(request.status?.conditions, CRCondition.Ready);
  const failedAt = request.status?.failureTime;
  return (
    ready?.status === 'False' &&
    (ready.reason === CRReason.Failed || ready.reason === CRReason.Denied) &&
    failedAt !== undefined &&
    issuingSince !== undefined &&
    Date.parse(failedAt) < Date.parse(issuingSince)
  );
}
