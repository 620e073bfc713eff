import {
  type CertificateRequest,
  CRCondition,
  CRReason,
  isApproved,
  isDenied,
  readyReason,
} from '../../api/certificate-request.js';
import { findCondition, isConditionTrue } from '../../api/conditions.js';
import { type Issuer, isIssuerReady, issuerTypeOf } from '../../api/issuer.js';
import { defaultIssuerRef, isCertManagerGroup } from '../../api/issuer-ref.js';
import { type IssuerLookup, otherKindHint } from '../issuer-lookup.js';

/** What a CertificateRequest signer controller does next for one request. */
export type RequestPlan =
  | { step: 'ignore' }
  | { step: 'deny' }
  | { step: 'waitForApproval' }
  | { step: 'pending'; reason: string; message: string }
  | { step: 'sign'; issuer: Issuer; issuerType: string };

/** Which requests one signer controller acts on. */
export interface SignerScope {
  /** The issuer type this controller signs for. */
  handles(issuerType: string): boolean;
  /**
   * Whether this controller takes the steps that do not depend on the issuer type (deny,
   * wait for approval, issuer missing or untyped) for a request whose issuer has this type
   * (undefined: not found or untyped). cert-manager runs them in every issuer-type controller
   * and so writes and announces them once per controller; here exactly one controller does.
   */
  responsibleFor(issuerType: string | undefined): boolean;
}

/**
 * The sync order of cert-manager's generic CertificateRequest controller (its sync.go),
 * as one pure function: the answer to "why did this request do that".
 */
export function planRequestSync(
  request: CertificateRequest,
  lookup: () => IssuerLookup,
  scope: SignerScope,
): RequestPlan {
  if (!isCertManagerGroup(request.spec.issuerRef)) return { step: 'ignore' };
  // Looked up only when a step needs it, once.
  let found: IssuerLookup | undefined;
  const issuer = () => {
    found ??= lookup();
    return found;
  };
  const typeOf = (lookedUp: IssuerLookup) =>
    'issuer' in lookedUp ? issuerTypeOf(lookedUp.issuer) : undefined;
  const responsible = () => scope.responsibleFor(typeOf(issuer()));
  if (isDenied(request)) {
    const ready = findCondition(request.status?.conditions, CRCondition.Ready);
    const alreadyDenied =
      ready?.status === 'False' &&
      ready.reason === CRReason.Denied &&
      request.status?.failureTime !== undefined;
    return alreadyDenied || !responsible() ? { step: 'ignore' } : { step: 'deny' };
  }
  if (isConditionTrue(request.status?.conditions, CRCondition.InvalidRequest)) {
    return { step: 'ignore' };
  }
  if (!isApproved(request)) {
    return responsible() ? { step: 'waitForApproval' } : { step: 'ignore' };
  }
  const reason = readyReason(request);
  if (reason === CRReason.Failed || reason === CRReason.Issued) return { step: 'ignore' };

  const lookedUp = issuer();
  const issuerType = typeOf(lookedUp);
  if ('notFound' in lookedUp) {
    if (!responsible()) return { step: 'ignore' };
    const kind = defaultIssuerRef(request.spec.issuerRef).kind;
    return {
      step: 'pending',
      reason: 'IssuerNotFound',
      // cert-manager's message, and what to set when the other kind has the name.
      message: `Referenced "${kind}" not found: ${lookedUp.notFound}${otherKindHint(lookedUp, 'issuerRef.kind (a volume: csi.cert-manager.io/issuer-kind)')}`,
    };
  }
  if (issuerType === undefined) {
    return responsible()
      ? { step: 'pending', reason: 'IssuerTypeMissing', message: 'Missing issuer type' }
      : { step: 'ignore' };
  }
  if (!scope.handles(issuerType)) return { step: 'ignore' };
  if (!isIssuerReady(lookedUp.issuer)) {
    return {
      step: 'pending',
      reason: 'IssuerNotReady',
      message: 'Referenced issuer does not have a Ready status condition',
    };
  }
  if (request.status?.certificate) return { step: 'ignore' };
  return { step: 'sign', issuer: lookedUp.issuer, issuerType };
}
