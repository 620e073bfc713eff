// Where a volume's CA file comes from when it follows a trust bundle instead of the
// CertificateRequest's status.ca (the `trust-bundle` volume attribute).

/** A ConfigMap key in the pod's namespace (also trust-manager's Bundle target). */
export interface ConfigMapTrustSource {
  kind: 'configmap';
  namespace: string;
  name: string;
  key: string;
}

/** One ClusterTrustBundle, by name. */
export interface ClusterTrustBundleNameSource {
  kind: 'clustertrustbundle';
  name: string;
}

/** Every ClusterTrustBundle of a signer that the label selector selects ("" selects all). */
export interface ClusterTrustBundleSignerSource {
  kind: 'clustertrustbundle-signer';
  signerName: string;
  labelSelector: string;
}

/**
 * trust-manager's Bundle target in the pod's namespace: the ConfigMap named after the Bundle,
 * under `key`, or under the Bundle's `spec.target.configMap.key` when key is absent.
 */
export interface TrustManagerBundleSource {
  kind: 'bundle';
  namespace: string;
  name: string;
  key?: string;
}

export type TrustBundleSource =
  | ConfigMapTrustSource
  | ClusterTrustBundleNameSource
  | ClusterTrustBundleSignerSource
  | TrustManagerBundleSource;

/** The source in the attribute's own grammar, with the namespace: one string per distinct source. */
export function describeTrustBundleSource(source: TrustBundleSource): string {
  switch (source.kind) {
    case 'configmap':
      return `configmap:${source.namespace}/${source.name}/${source.key}`;
    case 'clustertrustbundle':
      return `clustertrustbundle:${source.name}`;
    case 'clustertrustbundle-signer':
      return source.labelSelector === ''
        ? `clustertrustbundle-signer:${source.signerName}`
        : `clustertrustbundle-signer:${source.signerName};${source.labelSelector}`;
    case 'bundle':
      return `bundle:${source.namespace}/${source.name}${source.key === undefined ? '' : `/${source.key}`}`;
  }
}
