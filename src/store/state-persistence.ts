import type { KubeObject } from '../api/meta.js';
import type { StoreError } from './errors.js';

/** Where an object lives: its API group (empty for core), plural, namespace and name. */
export interface ObjectLocation {
  group: string;
  plural: string;
  namespace: string | undefined;
  name: string;
}

/** One object read back from storage. */
export interface StoredObject {
  location: ObjectLocation;
  object: KubeObject;
}

/** Everything a load found. */
export interface LoadedState {
  objects: StoredObject[];
  /** The larger of the saved counter and the newest object's resourceVersion. */
  resourceVersion: number;
}

/** Told about a stored object that could not be read; it has been set aside as movedTo. */
export type CorruptFileHandler = (error: StoreError, path: string, movedTo: string) => void;

/**
 * Where the memory store keeps its objects across restarts (the embedded mode's state dir).
 * Every write resolves once it is durable; the store calls them one at a time per object.
 */
export interface StatePersistence {
  load(): Promise<LoadedState>;
  writeObject(location: ObjectLocation, object: KubeObject): Promise<void>;
  removeObject(location: ObjectLocation): Promise<void>;
  /** Records a resourceVersion no object carries (a deletion's), so a restart never reuses it. */
  saveResourceVersion(resourceVersion: number): Promise<void>;
}
