import {
  type CertificateRequest,
  CRCondition,
  finalState,
  isApproved,
  isDenied,
} from '../../api/certificate-request.js';
import { isCsiVolumeRequest } from '../../api/labels.js';
import type { IssuerLookup } from '../issuer-lookup.js';
import { volumeCaRefusal } from '../volume-ca-policy.js';

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

/** The reason of a denied CA certificate for a CSI volume. */
export const VOLUME_CA_DENIED_REASON = 'IsCANotAllowed';

/**
 * The rule the approver applies before any approval policy: a request made for a CSI volume
 * (the node plugin's labels) with spec.isCA is denied unless its issuer opts in
 * (volume-ca-policy.ts). undefined leaves the request to the policy: every other request,
 * such as a Certificate's (the bootstrap CA) or a user's own, is not this rule's business.
 */
export function volumeCaDecision(
  request: CertificateRequest,
  lookup: () => IssuerLookup,
): ApprovalDecision | undefined {
  if (request.spec.isCA !== true || !isCsiVolumeRequest(request.metadata.labels)) return undefined;
  const refusal = volumeCaRefusal(request.spec.issuerRef, request.metadata.namespace ?? '', lookup);
  if (refusal === undefined) return undefined;
  return {
    decision: 'deny',
    reason: VOLUME_CA_DENIED_REASON,
    message: `a CSI volume asked for a CA certificate (is-ca: "true", spec.isCA): ${refusal}`,
  };
}
