import type { KubeObject } from '../api/meta.js';
import type { IndexDefinition } from '../store/informer.js';

/** Objects by the UID of each of their owners (`metadata.ownerReferences[].uid`). */
export const byOwnerUid: IndexDefinition<KubeObject> = {
  name: 'owner-uid',
  values: (obj) => (obj.metadata.ownerReferences ?? []).map((owner) => owner.uid),
};

/** Objects by their namespace ('' for cluster-scoped ones): one namespace's objects without a scan. */
export const byNamespace: IndexDefinition<KubeObject> = {
  name: 'namespace',
  values: (obj) => [obj.metadata.namespace ?? ''],
};

const labelIndexes = new Map<string, IndexDefinition<KubeObject>>();

/** Objects by the value of one label; one definition per label, so users share the index. */
export function byLabel(label: string): IndexDefinition<KubeObject> {
  let index = labelIndexes.get(label);
  if (!index) {
    index = {
      name: `label:${label}`,
      values: (obj) => {
        const value = obj.metadata.labels?.[label];
        return value === undefined ? [] : [value];
      },
    };
    labelIndexes.set(label, index);
  }
  return index;
}

/** An index by one field that an object references (an issuer, a Secret); none when undefined. */
export function byField<T extends KubeObject>(
  name: string,
  field: (obj: T) => string | undefined,
): IndexDefinition<T> {
  return {
    name,
    values: (obj) => {
      const value = field(obj);
      return value === undefined ? [] : [value];
    },
  };
}
