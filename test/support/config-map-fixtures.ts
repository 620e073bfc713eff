import { type ConfigMap, ConfigMapKind } from '../../src/api/config-map.js';
import type { ResourceStore } from '../../src/store/resource-store.js';

/** Creates the ConfigMap, or replaces the data of the one there (a trust-bundle source change). */
export async function putConfigMap(
  store: ResourceStore,
  namespace: string,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  const existing = await store
    .get<ConfigMap>(ConfigMapKind, name, namespace)
    .catch(() => undefined);
  if (existing) await store.update<ConfigMap>(ConfigMapKind, { ...existing, data });
  else
    await store.create<ConfigMap>(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace },
      data,
    });
}
