import type { KubeObject } from '../api/meta.js';

/** Orders objects by namespace (cluster-scoped first), then name: the order list returns. */
export function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  const left = a.metadata.namespace ?? '';
  const right = b.metadata.namespace ?? '';
  if (left !== right) return left < right ? -1 : 1;
  if (a.metadata.name === b.metadata.name) return 0;
  return a.metadata.name < b.metadata.name ? -1 : 1;
}
