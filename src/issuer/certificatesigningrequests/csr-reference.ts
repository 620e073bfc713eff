import type { CertificateSigningRequest } from '../../api/certificate-signing-request.js';
import type { ResourceAttributes } from '../../api/subject-access-review.js';
import type { UserInfo } from '../../api/user-info.js';
import type { AccessReviewer } from '../../controller/access-reviewer.js';
import type { CsrIssuerRef } from './csr-plan.js';

/** The user a CSR records as its requester (set by the API server at create). */
export function requesterOf(csr: CertificateSigningRequest): UserInfo {
  const { username, uid, groups, extra } = csr.spec;
  return {
    username: username ?? '',
    ...(uid !== undefined && { uid }),
    ...(groups !== undefined && { groups }),
    ...(extra !== undefined && { extra }),
  };
}

/**
 * What the requester must be allowed to use a namespaced Issuer: verb `reference` on
 * cert-manager.io `signers` in the issuer's namespace, named after the issuer or `*`, asked in
 * that order (cert-manager's userCanReferenceSigner).
 */
export function referenceAttributes(issuer: CsrIssuerRef): ResourceAttributes[] {
  return [issuer.name, '*'].map((name) => ({
    verb: 'reference',
    group: 'cert-manager.io',
    resource: 'signers',
    version: '*',
    namespace: issuer.namespace,
    name,
  }));
}

/** Whether the CSR's requester may reference the issuer; rejects when a review cannot be answered. */
export async function mayReference(
  reviewer: AccessReviewer,
  csr: CertificateSigningRequest,
  issuer: CsrIssuerRef,
): Promise<boolean> {
  const requester = requesterOf(csr);
  for (const attributes of referenceAttributes(issuer)) {
    if (await reviewer(requester, attributes)) return true;
  }
  return false;
}
