import { type CertificateRequest, CRCondition } from '../api/certificate-request.js';
import { findCondition } from '../api/conditions.js';
import type { ResourceAttributes } from '../api/subject-access-review.js';
import { forbiddenField } from '../base/field-error.js';
import { goQuote } from '../base/go-text.js';

// cert-manager's approval admission plugin (its
// internal/webhook/admission/certificaterequest/approval): whoever adds an Approved or Denied
// condition to a CertificateRequest's status must hold `approve` on the issuer's signer name.

/** What the plugin's SubjectAccessReviews ask, for each signer name: `approve` on cert-manager.io `signers`, any version. */
export const APPROVE_ACCESS = {
  verb: 'approve',
  group: 'cert-manager.io',
  resource: 'signers',
  version: '*',
} as const;

/** The ResourceAttributes of the SubjectAccessReview for one signer name. */
export function approveAttributes(signerName: string): ResourceAttributes {
  return { ...APPROVE_ACCESS, name: signerName };
}

/** The approval condition types an update adds (present now, absent before); the plugin runs only when there is one. */
export function newApprovalConditions(
  request: CertificateRequest,
  old: CertificateRequest,
): Array<'Approved' | 'Denied'> {
  return [CRCondition.Approved, CRCondition.Denied].filter(
    (type) =>
      findCondition(old.status?.conditions, type) === undefined &&
      findCondition(request.status?.conditions, type) !== undefined,
  );
}

/**
 * The `signers` resource names that grant approval, in the order they are asked, for the
 * issuer resource `<plural>.<group>` (e.g. `issuers.cert-manager.io`): the wildcard
 * `<resource>/*`, then `<resource>/<namespace>.<name>` for a namespaced issuer or
 * `<resource>/<name>` for a cluster-scoped one. Allowed by either.
 */
export function approvalSignerNames(
  signerResource: string,
  request: CertificateRequest,
  clusterScoped: boolean,
): [string, string] {
  const name = request.spec?.issuerRef?.name ?? '';
  const namespace = request.metadata?.namespace ?? '';
  return [
    `${signerResource}/*`,
    clusterScoped ? `${signerResource}/${name}` : `${signerResource}/${namespace}.${name}`,
  ];
}

/** The issuerRef as Go's `%v` prints the struct: `{name kind group}`, as written (empty fields stay empty). */
function printedIssuerRef(request: CertificateRequest): string {
  const ref = request.spec?.issuerRef;
  return `{${ref?.name ?? ''} ${ref?.kind ?? ''} ${ref?.group ?? ''}}`;
}

/** Why an approval is refused: the user holds `approve` on neither signer name. */
export function approvalForbidden(username: string, request: CertificateRequest): string {
  return forbiddenField(
    'status.conditions',
    `user ${goQuote(username)} does not have permissions to set approved/denied conditions for issuer ${printedIssuerRef(request)}`,
  );
}

/** Why an approval is refused: the issuerRef's group and kind name no resource the cluster serves. */
export function unknownSignerResource(request: CertificateRequest): string {
  return forbiddenField(
    'spec.issuerRef',
    `referenced signer resource does not exist: ${printedIssuerRef(request)}`,
  );
}
