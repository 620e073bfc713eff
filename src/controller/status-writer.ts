import type { KubeObject, ResourceKind } from '../api/meta.js';
import { isStoreError } from '../store/errors.js';
import { frozenJsonCopy, jsonEqual, toJsonCopy } from '../store/json-value.js';
import type { ResourceStore } from '../store/resource-store.js';

/** An object with a status subresource. */
export type WithStatus<S> = KubeObject & { status?: S };

/**
 * Writes an object's status only when it changed. Resolves true when it wrote, false when
 * there was nothing to write or the object was deleted meanwhile (nothing left to report
 * on). A Conflict is thrown so the work queue retries: the informer's newer copy usually
 * requeues the object first.
 */
export async function writeStatusIfChanged<S>(
  store: ResourceStore,
  kind: ResourceKind,
  object: WithStatus<S>,
  status: S,
): Promise<boolean> {
  // Compared as they travel (undefined fields dropped), in any key order. The copy is frozen
  // so the store keeps it as it is instead of copying it again; a stored status is no copy.
  const next = frozenJsonCopy(status, 'status');
  if (jsonEqual(next, toJsonCopy(object.status ?? {}, 'status'))) return false;
  try {
    await store.updateStatus(kind, { ...object, status: next });
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return false;
    throw err;
  }
  return true;
}
