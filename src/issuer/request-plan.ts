import {
  type CertificateRequest,
  CRCondition,
  CRReason,
  isApproved,
  isDenied,
  readyReason,
} from '../api/certificate-request.js';
import { findCondition, isConditionTrue } from '../api/conditions.js';
import { type Issuer, isIssuerReady, issuerTypeOf } from '../api/issuer.js';
import { defaultIssuerRef, isCertManagerGroup } from '../api/issuer-ref.js';

/** The issuer a request names, as found in the cache. */
export type IssuerLookup = { issuer: Issuer } | { notFound: string };

/** What the CertificateRequest controller does next for one request. */
export type RequestPlan =
  | { step: 'ignore' }
  | { step: 'deny' }
  | { step: 'waitForApproval' }
  | { step: 'pending'; reason: string; message: string }
  | { step: 'sign'; issuer: Issuer; issuerType: string };

/** The not-found text of a client-go lister, which cert-manager puts in IssuerNotFound. */
export function issuerNotFoundError(kind: string, name: string): string {
  return `${kind.toLowerCase()}.cert-manager.io "${name}" not found`;
}

/**
 * The sync order of cert-manager's generic CertificateRequest controller (reference §2.2),
 * as one pure function: the answer to "why did this request do that".
 * `handles` says which issuer types this controller signs for.
 */
export function planRequestSync(
  request: CertificateRequest,
  lookup: () => IssuerLookup,
  handles: (issuerType: string) => boolean,
): RequestPlan {
  if (!isCertManagerGroup(request.spec.issuerRef)) return { step: 'ignore' };
  if (isDenied(request)) {
    const ready = findCondition(request.status?.conditions, CRCondition.Ready);
    const alreadyDenied =
      ready?.status === 'False' &&
      ready.reason === CRReason.Denied &&
      request.status?.failureTime !== undefined;
    return alreadyDenied ? { step: 'ignore' } : { step: 'deny' };
  }
  if (isConditionTrue(request.status?.conditions, CRCondition.InvalidRequest)) {
    return { step: 'ignore' };
  }
  if (!isApproved(request)) return { step: 'waitForApproval' };
  const reason = readyReason(request);
  if (reason === CRReason.Failed || reason === CRReason.Issued) return { step: 'ignore' };

  const found = lookup();
  if ('notFound' in found) {
    const kind = defaultIssuerRef(request.spec.issuerRef).kind;
    return {
      step: 'pending',
      reason: 'IssuerNotFound',
      message: `Referenced "${kind}" not found: ${found.notFound}`,
    };
  }
  const issuerType = issuerTypeOf(found.issuer);
  if (issuerType === undefined) {
    return { step: 'pending', reason: 'IssuerTypeMissing', message: 'Missing issuer type' };
  }
  if (!handles(issuerType)) return { step: 'ignore' };
  if (!isIssuerReady(found.issuer)) {
    return {
      step: 'pending',
      reason: 'IssuerNotReady',
      message: 'Referenced issuer does not have a Ready status condition',
    };
  }
  if (request.status?.certificate) return { step: 'ignore' };
  return { step: 'sign', issuer: found.issuer, issuerType };
}
