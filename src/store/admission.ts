import type { KubeObject, ResourceKind } from '../api/meta.js';

/**
 * Validating admission, as a cluster's webhooks and the API server's own per-kind strategies
 * run it on create, update and status writes: given the object a write would store (its final
 * state: name, server-owned metadata and, for an update, the stored status filled in; for a
 * status write, the stored object with the written status), the stored object for an update
 * or status write, and which of the three writes it is, the field errors that refuse the
 * write, in Kubernetes' field.Error form (`spec.secretName: Required value: …`); none admits
 * it. The store turns errors into one `Invalid` StoreError worded as the API server's (see
 * invalidObject). Synchronous and pure: it gets deeply frozen objects (a change throws, and the
 * write fails), and it must not wait for anything, since the store decides a write in one step. Deletes are not admitted.
 *
 * The store knows no kind's rules: the caller that opens it supplies them (the embedded mode
 * wires cert-manager's Certificate validation and Kubernetes' pod certificate rules), so this
 * layer stays below the policy.
 */
export type AdmissionHook = (
  kind: ResourceKind,
  object: KubeObject,
  old: KubeObject | undefined,
  write: 'create' | 'update' | 'status',
) => readonly string[];
