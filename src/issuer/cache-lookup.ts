import { splitObjectKey } from '../api/meta.js';

/** Reads an object from an informer cache by its `namespace/name` (or `name`) key. */
export function getByKey<T>(
  cache: { get(name: string, namespace?: string): T | undefined },
  key: string,
): T | undefined {
  const { namespace, name } = splitObjectKey(key);
  return namespace === undefined ? cache.get(name) : cache.get(name, namespace);
}
