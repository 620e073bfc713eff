import { ClusterIssuerKind, type Issuer, IssuerKind } from '../api/issuer.js';
import { defaultIssuerRef, type IssuerReference } from '../api/issuer-ref.js';
import type { SharedInformers } from '../controller/shared-informers.js';

/** The issuer a request names, as found in the cache. */
export type IssuerLookup = { issuer: Issuer } | { notFound: string };

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
      const issuer =
        kind === 'ClusterIssuer' ? clusterIssuers.get(name) : issuers.get(name, namespace);
      return issuer ? { issuer } : { notFound: issuerNotFoundError(kind, name) };
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
