import type { ClusterTrustBundle } from '../../api/cluster-trust-bundle.js';
import { ClusterTrustBundleKind } from '../../api/cluster-trust-bundle.js';
import { type ConfigMap, ConfigMapKind } from '../../api/config-map.js';
import type { KubeObject, ResourceKind } from '../../api/meta.js';
import type { TrustBundleSource } from '../../api/trust-bundle-source.js';
import { type TrustManagerBundle, TrustManagerBundleKind } from '../../api/trust-manager-bundle.js';
import { trustBundlePem } from '../../pki/trust-bundle.js';
import { escapeFieldValue } from '../../store/field-selector.js';
import type { Informer, InformerOptions } from '../../store/informer.js';

// What each kind of trust-bundle source watches (one list+watch per object, or per signer and
// label selector), and how its bundle is read from the caches of those watches.

/** One list+watch a source needs: the key every source needing it shares, what it lists. */
export interface WatchSpec {
  key: string;
  kind: ResourceKind;
  options: InformerOptions;
}

/** The bundle of source read from the caches of its watches (in watchesOf order); throws why not. */
export function bundleFrom(
  source: TrustBundleSource,
  informers: Array<Informer<KubeObject>>,
): string {
  const [first, second] = informers as [Informer<KubeObject>, Informer<KubeObject> | undefined];
  switch (source.kind) {
    case 'configmap':
      return configMapBundle(first, source.namespace, source.name, source.key);
    case 'clustertrustbundle': {
      const bundle = first.get(source.name) as ClusterTrustBundle | undefined;
      if (!bundle) throw new Error(`ClusterTrustBundle "${source.name}" not found`);
      return trustBundlePem(
        [{ name: `ClusterTrustBundle "${source.name}"`, pem: bundle.spec.trustBundle }],
        'given',
      );
    }
    case 'clustertrustbundle-signer': {
      const bundles = first.list() as ClusterTrustBundle[];
      if (bundles.length === 0) {
        throw new Error(
          `no ClusterTrustBundle of signer "${source.signerName}"${source.labelSelector ? ` selected by "${source.labelSelector}"` : ''}`,
        );
      }
      return trustBundlePem(
        bundles.map((b) => ({
          name: `ClusterTrustBundle "${b.metadata.name}"`,
          pem: b.spec.trustBundle,
        })),
        'sorted',
      );
    }
    case 'bundle': {
      if (source.key !== undefined) {
        return configMapBundle(first, source.namespace, source.name, source.key);
      }
      const bundle = first.get(source.name) as TrustManagerBundle | undefined;
      if (!bundle) throw new Error(`Bundle "${source.name}" not found`);
      const key = bundle.spec?.target?.configMap?.key;
      if (!key) {
        throw new Error(`Bundle "${source.name}" has no spec.target.configMap.key`);
      }
      return configMapBundle(second as Informer<KubeObject>, source.namespace, source.name, key);
    }
  }
}

function configMapBundle(
  informer: Informer<KubeObject>,
  namespace: string,
  name: string,
  key: string,
): string {
  const configMap = informer.get(name, namespace) as ConfigMap | undefined;
  const what = `ConfigMap "${namespace}/${name}"`;
  if (!configMap) throw new Error(`${what} not found`);
  const text = configMap.data?.[key];
  const binary = configMap.binaryData?.[key];
  if (text === undefined && binary === undefined) {
    throw new Error(`${what} has no key "${key}"`);
  }
  const pem = text ?? Buffer.from(binary as string, 'base64').toString('latin1');
  return trustBundlePem([{ name: `${what} key "${key}"`, pem }], 'given');
}

const byName = (name: string) => `metadata.name=${escapeFieldValue(name)}`;

/** The list+watches a source needs, each under a key shared by every source that needs it. */
export function watchesOf(source: TrustBundleSource): WatchSpec[] {
  const configMap = (namespace: string, name: string): WatchSpec => ({
    key: `configmaps/${namespace}/${name}`,
    kind: ConfigMapKind,
    options: { namespace, fieldSelector: byName(name) },
  });
  switch (source.kind) {
    case 'configmap':
      return [configMap(source.namespace, source.name)];
    case 'clustertrustbundle':
      return [
        {
          key: `clustertrustbundles/${source.name}`,
          kind: ClusterTrustBundleKind,
          options: { fieldSelector: byName(source.name) },
        },
      ];
    case 'clustertrustbundle-signer':
      return [
        {
          key: `clustertrustbundles;${source.signerName};${source.labelSelector}`,
          kind: ClusterTrustBundleKind,
          options: {
            fieldSelector: `spec.signerName=${escapeFieldValue(source.signerName)}`,
            ...(source.labelSelector ? { labelSelector: source.labelSelector } : {}),
          },
        },
      ];
    case 'bundle':
      return source.key !== undefined
        ? [configMap(source.namespace, source.name)]
        : [
            {
              key: `bundles/${source.name}`,
              kind: TrustManagerBundleKind,
              options: { fieldSelector: byName(source.name) },
            },
            configMap(source.namespace, source.name),
          ];
  }
}
