import { ClusterIssuerKind, type Issuer, IssuerKind } from './issuer.js';

/** The signer-name domain of namespaced Issuers (cert-manager's, shared by CSRs and pod certificates). */
export const ISSUERS_SIGNER_DOMAIN = 'issuers.cert-manager.io';
/** The signer-name domain of ClusterIssuers. */
export const CLUSTER_ISSUERS_SIGNER_DOMAIN = 'clusterissuers.cert-manager.io';

/** The API group of cert-manager's issuers, which a signer name's domain must end in. */
const CERT_MANAGER_GROUP = 'cert-manager.io';

/** A signer name taken apart (cert-manager's SignerIssuerRef): `<type>.<group>/<namespace>.<name>`. */
export interface SignerRef {
  type: string;
  group: string;
  /** '' for a ClusterIssuer, or when the name part has no dot. */
  namespace: string;
  name: string;
}

/**
 * Takes a signer name apart as cert-manager's certificatesigningrequests/util/signername.go
 * does: exactly one `/`; the domain splits at its first dot into type and group; the path's
 * first dot-segment must not be empty. For `clusterissuers` the whole path is the name;
 * otherwise the first segment is the namespace and the rest (joined by dots) the name, and a
 * path without a dot is a name with namespace ''. Undefined for a malformed name.
 */
export function parseSignerName(signerName: string): SignerRef | undefined {
  const parts = signerName.split('/');
  if (parts.length !== 2) return undefined;
  const [domain, path] = parts as [string, string];
  const dot = domain.indexOf('.');
  if (dot < 0) return undefined;
  const type = domain.slice(0, dot);
  const group = domain.slice(dot + 1);
  const segments = path.split('.');
  if (segments[0] === '') return undefined;
  if (segments.length === 1) return { type, group, namespace: '', name: path };
  if (type === 'clusterissuers') return { type, group, namespace: '', name: path };
  return { type, group, namespace: segments[0] as string, name: segments.slice(1).join('.') };
}

/** The issuer a signer name designates. */
export type IssuerOfSigner =
  | { kind: 'Issuer'; namespace: string; name: string }
  | { kind: 'ClusterIssuer'; name: string };

/**
 * The issuer a Kubernetes signer name designates: `issuers.cert-manager.io/<namespace>.<name>`
 * or `clusterissuers.cert-manager.io/<name>`, parsed by parseSignerName (so
 * `issuers.cert-manager.io/x` names Issuer x in namespace '', which never exists); undefined
 * for a malformed name, another group or another type.
 */
export function issuerOfSignerName(signerName: string): IssuerOfSigner | undefined {
  const ref = parseSignerName(signerName);
  if (!ref || ref.group !== CERT_MANAGER_GROUP) return undefined;
  if (ref.type === 'clusterissuers') return { kind: 'ClusterIssuer', name: ref.name };
  if (ref.type === 'issuers') return { kind: 'Issuer', namespace: ref.namespace, name: ref.name };
  return undefined;
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
