/** Kubernetes object metadata, the subset cert-csi reads and writes. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

/** Any API object: what the store keeps. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** Where a kind lives in the API: group/version, plural resource name and scope. */
export interface ResourceKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/** The apiVersion string of a kind (`v1` for the core group). */
export function apiVersionOf(kind: ResourceKind): string {
  return kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones: the cache key. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits an object key made by objectKey. */
export function splitObjectKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  if (slash < 0) return { name: key };
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** True when owner is obj's controller: an owner reference with controller true and owner's UID (metav1.IsControlledBy). */
export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const uid = owner.metadata.uid;
  if (!uid) return false;
  return (obj.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.uid === uid,
  );
}
