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
  /** The version the in-process store serves; for a kind with versions, the preferred one. */
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /**
   * The versions cert-csi can speak of a kind that clusters serve in different versions,
   * preferred first (version is the first). A cluster store uses the first one the server
   * serves, found through discovery; without this field it uses version.
   */
  versions?: readonly string[];
}

/** The apiVersion string of a kind (`v1` for the core group), in version or else its own. */
export function apiVersionOf(kind: ResourceKind, version = kind.version): string {
  return kind.group === '' ? version : `${kind.group}/${version}`;
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
