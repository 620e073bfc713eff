import type { KubeObject, ObjectMeta } from '../../../src/api/meta.js';
import type { Modifier } from './modifier.js';

// Modifiers of metadata, for an object of any kind. Each sets its field to exactly the value
// given, as cert-manager's Set* modifiers do.

/** Sets metadata.namespace. */
export function withNamespace(namespace: string): Modifier<KubeObject> {
  return (object) => {
    object.metadata.namespace = namespace;
  };
}

/** Sets metadata.labels to exactly labels (`{}` included). */
export function withLabels(labels: Record<string, string>): Modifier<KubeObject> {
  return (object) => {
    object.metadata.labels = { ...labels };
  };
}

/** Sets metadata.annotations to exactly annotations (`{}` included). */
export function withAnnotations(annotations: Record<string, string>): Modifier<KubeObject> {
  return (object) => {
    object.metadata.annotations = { ...annotations };
  };
}

/**
 * Sets metadata.generateName and removes metadata.name: a client that asks the server to
 * choose the name sends none.
 */
export function withGenerateName(prefix: string): Modifier<KubeObject> {
  return (object) => {
    object.metadata.generateName = prefix;
    delete (object.metadata as Partial<ObjectMeta>).name;
  };
}

/** Sets metadata.generation. */
export function withGeneration(generation: number): Modifier<KubeObject> {
  return (object) => {
    object.metadata.generation = generation;
  };
}

/** Sets metadata.uid. */
export function withUid(uid: string): Modifier<KubeObject> {
  return (object) => {
    object.metadata.uid = uid;
  };
}

/** Sets metadata.creationTimestamp (RFC 3339). */
export function withCreationTimestamp(timestamp: string): Modifier<KubeObject> {
  return (object) => {
    object.metadata.creationTimestamp = timestamp;
  };
}

/** Sets metadata.resourceVersion. */
export function withResourceVersion(resourceVersion: string): Modifier<KubeObject> {
  return (object) => {
    object.metadata.resourceVersion = resourceVersion;
  };
}
