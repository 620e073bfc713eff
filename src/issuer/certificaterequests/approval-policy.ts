import {
  type CertificateRequest,
  CRCondition,
  finalState,
  isApproved,
  isDenied,
} from '../../api/certificate-request.js';

/** What an approval policy decided about one request. */
export type ApprovalDecision =
  | { decision: 'approve'; reason: string; message: string }
  | { decision: 'deny'; reason: string; message: string }
  /** Leave the request alone: another approver may decide. */
  | { decision: 'abstain' };

/** Decides whether a request may be signed; replace it to run a stricter approver. */
export type ApprovalPolicy = (
  request: CertificateRequest,
) => ApprovalDecision | Promise<ApprovalDecision>;

export const CERT_MANAGER_APPROVER_REASON = 'cert-manager.io';

/** cert-manager's built-in approver: every request is approved. */
export const approveEveryRequest: ApprovalPolicy = () => ({
  decision: 'approve',
  reason: CERT_MANAGER_APPROVER_REASON,
  message: 'Certificate request has been approved by cert-manager.io',
});

/**
 * True when the approver must not touch the request: it already carries a decision
 * (Approved and Denied are write-once), or it reached Failed or Issued.
 */
export function approvalSettled(request: CertificateRequest): boolean {
  if (isApproved(request) || isDenied(request)) return true;
  const state = finalState(request);
  return state === 'Failed' || state === 'Issued';
}

/** The condition type an approval decision writes. */
export function conditionTypeFor(decision: 'approve' | 'deny'): string {
  return decision === 'approve' ? CRCondition.Approved : CRCondition.Denied;
}
