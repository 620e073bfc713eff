import { ClusterIssuerKind, type Issuer, IssuerKind } from './issuer.js';

/** The signer-name domain of namespaced Issuers (cert-manager's, shared by CSRs and pod certificates). */
export const ISSUERS_SIGNER_DOMAIN = 'issuers.cert-manager.io';
/** The signer-name domain of ClusterIssuers. */
export const CLUSTER_ISSUERS_SIGNER_DOMAIN = 'clusterissuers.cert-manager.io';

/** The issuer a signer name designates. */
export type IssuerOfSigner =
  | { kind: 'Issuer'; namespace: string; name: string }
  | { kind: 'ClusterIssuer'; name: string };

/**
 * The issuer a Kubernetes signer name designates: `issuers.cert-manager.io/<namespace>.<name>`
 * (a namespace has no dots, so the first one separates it) or
 * `clusterissuers.cert-manager.io/<name>`; undefined for any other signer.
 */
export function issuerOfSignerName(signerName: string): IssuerOfSigner | undefined {
  const slash = signerName.indexOf('/');
  if (slash < 0) return undefined;
  const domain = signerName.slice(0, slash);
  const path = signerName.slice(slash + 1);
  if (path === '' || path.includes('/')) return undefined;
  if (domain === CLUSTER_ISSUERS_SIGNER_DOMAIN) return { kind: 'ClusterIssuer', name: path };
  if (domain !== ISSUERS_SIGNER_DOMAIN) return undefined;
  const dot = path.indexOf('.');
  if (dot <= 0 || dot === path.length - 1) return undefined;
  return { kind: 'Issuer', namespace: path.slice(0, dot), name: path.slice(dot + 1) };
}

/** The signer name of an Issuer or a ClusterIssuer. */
export function signerNameOfIssuer(issuer: Issuer): string {
  if (issuer.kind === ClusterIssuerKind.kind) {
    return `${CLUSTER_ISSUERS_SIGNER_DOMAIN}/${issuer.metadata.name}`;
  }
  return `${ISSUERS_SIGNER_DOMAIN}/${issuer.metadata.namespace ?? ''}.${issuer.metadata.name}`;
}

/** True when the object is a namespaced Issuer (by kind). */
export function isNamespacedIssuer(issuer: Issuer): boolean {
  return issuer.kind === IssuerKind.kind;
}
