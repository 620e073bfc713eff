import { type Condition, findCondition, isConditionTrue } from './conditions.js';
import { CERT_MANAGER_GROUP, type IssuerReference } from './issuer-ref.js';
import type { KubeObject, ResourceKind } from './meta.js';

export const CertificateRequestKind: ResourceKind = {
  group: CERT_MANAGER_GROUP,
  version: 'v1',
  kind: 'CertificateRequest',
  plural: 'certificaterequests',
  namespaced: true,
};

export interface CertificateRequestSpec {
  /** PEM CSR, base64-encoded as in the Kubernetes JSON form of a []byte. */
  request: string;
  issuerRef: IssuerReference;
  /** Go duration string, e.g. `2160h0m0s`. */
  duration?: string;
  isCA?: boolean;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface CertificateRequestStatus {
  conditions?: Condition[];
  /** PEM leaf and intermediates, base64-encoded. */
  certificate?: string;
  /** PEM CA, base64-encoded. */
  ca?: string;
  failureTime?: string;
}

export interface CertificateRequest extends KubeObject {
  spec: CertificateRequestSpec;
  status?: CertificateRequestStatus;
}

/** Condition types of a CertificateRequest. */
export const CRCondition = {
  Ready: 'Ready',
  InvalidRequest: 'InvalidRequest',
  Approved: 'Approved',
  Denied: 'Denied',
} as const;

/** Reasons of the Ready condition. */
export const CRReason = {
  Pending: 'Pending',
  Failed: 'Failed',
  Issued: 'Issued',
  Denied: 'Denied',
} as const;

/** The Ready condition's reason, or undefined when there is no Ready condition. */
export function readyReason(cr: CertificateRequest): string | undefined {
  return findCondition(cr.status?.conditions, CRCondition.Ready)?.reason;
}

/** Why a request will never change again, or undefined while it can still progress. */
export type FinalState = 'Issued' | 'Failed' | 'Denied' | 'InvalidRequest';

/**
 * The final state of a cert-manager CertificateRequest: Denied=True, InvalidRequest=True,
 * Ready=False/Failed or Ready=True/Issued. Pending is not final.
 * Denied and InvalidRequest win over Ready because they are set by other actors
 * and the CR controller may not have reacted yet.
 */
export function finalState(cr: CertificateRequest): FinalState | undefined {
  const conditions = cr.status?.conditions;
  if (isConditionTrue(conditions, CRCondition.Denied)) return 'Denied';
  if (isConditionTrue(conditions, CRCondition.InvalidRequest)) return 'InvalidRequest';
  const ready = findCondition(conditions, CRCondition.Ready);
  if (ready?.status === 'False' && ready.reason === CRReason.Failed) return 'Failed';
  if (ready?.status === 'True' && ready.reason === CRReason.Issued) return 'Issued';
  return undefined;
}

/** True once approved by an approver. */
export function isApproved(cr: CertificateRequest): boolean {
  return isConditionTrue(cr.status?.conditions, CRCondition.Approved);
}

/** True once denied by an approver. */
export function isDenied(cr: CertificateRequest): boolean {
  return isConditionTrue(cr.status?.conditions, CRCondition.Denied);
}

/** Encodes text as the base64 form Kubernetes uses for []byte fields. */
export function encodeBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** Decodes a base64 []byte field to text; undefined stays undefined. */
export function decodeBytes(value: string | undefined): string | undefined {
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}
