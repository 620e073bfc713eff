import { goQuote } from '../base/go-text.js';

/** Where the pseudo-resource `signers` lives: RBAC grants sign, attest and approve on it. */
export const SIGNERS_RESOURCE = { apiGroup: 'certificates.k8s.io', resource: 'signers' } as const;

/**
 * The `signers` resource names that grant a verb for signerName, in the order kube-apiserver
 * asks its authorizer (certauthorization.IsAuthorizedForSignerName): the exact name, then the
 * wildcard of its domain, `<domain>/*`. A grant on either is enough.
 */
export function signerAuthorizationNames(signerName: string): [string, string] {
  const domain = signerName.split('/')[0] as string;
  return [signerName, `${domain}/*`];
}

/** Why a status write is refused (the status strategy's Forbidden, at spec.signerName). */
export function signDeniedDetail(user: string, signerName: string): string {
  return `User ${goQuote(user)} is not permitted to "sign" for signer ${goQuote(signerName)}`;
}

/** Why a signer-linked ClusterTrustBundle write is refused (the ClusterTrustBundleAttest plugin). */
export function attestDeniedDetail(signerName: string): string {
  return `user not permitted to attest for signerName ${goQuote(signerName)}`;
}

/** Why a CSR status write that sets a certificate is refused (the CertificateSigning plugin). */
export function csrSignDeniedDetail(signerName: string): string {
  return `user not permitted to sign requests with signerName ${goQuote(signerName)}`;
}

/** Why a write of a CSR's approval subresource is refused (the CertificateApproval plugin). */
export function csrApproveDeniedDetail(signerName: string): string {
  return `user not permitted to approve requests with signerName ${goQuote(signerName)}`;
}
