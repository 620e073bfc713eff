import { ClusterIssuerKind, type Issuer, IssuerKind } from '../api/issuer.js';
import { defaultIssuerRef, type IssuerReference } from '../api/issuer-ref.js';
import type { SharedInformers } from '../controller/shared-informers.js';

/** The two kinds an issuerRef names. */
export type IssuerKindName = 'Issuer' | 'ClusterIssuer';

/**
 * The issuer a request names, as found in the cache; when not found, whether an issuer of the
 * other kind has that name (the usual slip: the default kind is Issuer, a shared CA is a
 * ClusterIssuer).
 */
export type IssuerLookup =
  | { issuer: Issuer }
  | { notFound: string; otherKindExists?: IssuerKindName | undefined };

/**
 * What to do about an issuer not found when one of the other kind has its name, as
 * `; a ClusterIssuer of that name exists: set KEY: ClusterIssuer` (key: where the kind is
 * set); '' when none does.
 */
export function otherKindHint(lookedUp: IssuerLookup, key: string): string {
  if (!('notFound' in lookedUp) || lookedUp.otherKindExists === undefined) return '';
  const other = lookedUp.otherKindExists;
  return `; a${other === 'Issuer' ? 'n' : ''} ${other} of that name exists: set ${key}: ${other}`;
}

/** The not-found text of a client-go lister, which cert-manager puts in IssuerNotFound. */
export function issuerNotFoundError(kind: string, name: string): string {
  return `${kind.toLowerCase()}.cert-manager.io "${name}" not found`;
}

/** Reads issuers from the process's Issuer and ClusterIssuer caches. */
export function issuerCaches(informers: SharedInformers) {
  const issuers = informers.informer<Issuer>(IssuerKind);
  const clusterIssuers = informers.informer<Issuer>(ClusterIssuerKind);
  return {
    issuers,
    clusterIssuers,
    /** The issuer an issuerRef names from a namespace (a namespaced Issuer is looked up there). */
    lookup(ref: IssuerReference, namespace: string | undefined): IssuerLookup {
      const { kind, name } = defaultIssuerRef(ref);
      const cluster = kind === 'ClusterIssuer';
      const issuer = cluster ? clusterIssuers.get(name) : issuers.get(name, namespace);
      if (issuer) return { issuer };
      const other = cluster ? issuers.get(name, namespace) : clusterIssuers.get(name);
      const notFound = issuerNotFoundError(kind, name);
      return other === undefined
        ? { notFound }
        : { notFound, otherKindExists: cluster ? 'Issuer' : 'ClusterIssuer' };
    },
  };
}

/** Where an issuer's Secrets live: its own namespace, or the cluster resource namespace. */
export function resourceNamespaceOf(issuer: Issuer, clusterResourceNamespace: string): string {
  return issuer.kind === 'ClusterIssuer'
    ? clusterResourceNamespace
    : (issuer.metadata.namespace ?? clusterResourceNamespace);
}

/** How requests refer to an issuer in an index: `ClusterIssuer/<name>` or `Issuer/<namespace>/<name>`. */
export function issuerIndexValue(
  kind: string,
  name: string,
  namespace: string | undefined,
): string {
  return kind === 'ClusterIssuer' ? `ClusterIssuer/${name}` : `Issuer/${namespace ?? ''}/${name}`;
}
