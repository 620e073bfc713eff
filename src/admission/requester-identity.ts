import type { CertificateRequest } from '../api/certificate-request.js';
import type { UserInfo } from '../api/user-info.js';
import { forbiddenField } from '../base/field-error.js';
import { sameUnordered } from '../base/unordered-lists.js';
import { jsonEqual } from '../store/json-value.js';

// cert-manager's identity admission plugin (its
// internal/webhook/admission/certificaterequest/identity): a CertificateRequest records who
// created it, and nobody can forge or change that record.

/** One RFC 6902 operation, as a mutating webhook returns them (base64 of the JSON array). */
export interface JsonPatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

type Identity = Pick<CertificateRequest['spec'], 'uid' | 'username' | 'groups' | 'extra'>;

/** What the plugin writes: uid, username and groups always (empty when the user has none); extra only when the user has some. */
function identityOf(user: UserInfo): Identity {
  const extra = user.extra ?? {};
  return {
    uid: user.uid ?? '',
    username: user.username,
    groups: [...(user.groups ?? [])],
    ...(Object.keys(extra).length > 0 ? { extra: structuredClone(extra) } : {}),
  };
}

/**
 * The mutating identity plugin on CREATE: the JSON patch that sets spec.uid, spec.username
 * and spec.groups to the requester's, and replaces spec.extra with the requester's or removes
 * it when the requester has none. Only what differs is patched; empty when nothing does.
 */
export function requesterIdentityPatch(
  request: CertificateRequest,
  user: UserInfo,
): JsonPatchOperation[] {
  const identity = identityOf(user);
  const spec = request.spec as unknown;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    return [{ op: spec === undefined ? 'add' : 'replace', path: '/spec', value: identity }];
  const current = spec as Record<string, unknown>;
  const operations: JsonPatchOperation[] = [];
  for (const field of ['uid', 'username', 'groups', 'extra'] as const) {
    const path = `/spec/${field}`;
    const present = Object.hasOwn(current, field);
    const wanted = identity[field];
    if (wanted === undefined) {
      if (present) operations.push({ op: 'remove', path });
    } else if (!present) operations.push({ op: 'add', path, value: wanted });
    else if (!jsonEqual(current[field], wanted))
      operations.push({ op: 'replace', path, value: wanted });
  }
  return operations;
}

/** The same keys, each with the same values in any order (extrasMatch). */
function extrasMatch(
  a: Record<string, string[]> | undefined,
  b: Record<string, string[]> | undefined,
): boolean {
  const left = a ?? {};
  const right = b ?? {};
  return (
    Object.keys(left).length === Object.keys(right).length &&
    Object.keys(left).every(
      (key) => Object.hasOwn(right, key) && sameUnordered(left[key], right[key]),
    )
  );
}

/**
 * The validating identity plugin on CREATE: spec.uid, spec.username, spec.groups and
 * spec.extra must be the requester's (groups and extra values in any order). Returns field
 * errors, empty when they are.
 */
export function validateRequesterIdentity(request: CertificateRequest, user: UserInfo): string[] {
  const spec = request.spec ?? ({} as Identity);
  const errors: string[] = [];
  const mismatch = (field: string) =>
    forbiddenField(`spec.${field}`, `${field} identity must be that of the requester`);
  if ((spec.uid ?? '') !== (user.uid ?? '')) errors.push(mismatch('uid'));
  if ((spec.username ?? '') !== user.username) errors.push(mismatch('username'));
  if (!sameUnordered(spec.groups, user.groups)) errors.push(mismatch('groups'));
  if (!extrasMatch(spec.extra, user.extra)) errors.push(mismatch('extra'));
  return errors;
}

/**
 * The validating identity plugin on UPDATE: the four identity fields cannot change (groups
 * in any order; extra exactly). Returns field errors, empty when none changed.
 */
export function validateRequesterIdentityUpdate(
  request: CertificateRequest,
  old: CertificateRequest,
): string[] {
  const spec = request.spec ?? ({} as Identity);
  const before = old.spec ?? ({} as Identity);
  const errors: string[] = [];
  const changed = (field: string) =>
    forbiddenField(`spec.${field}`, `${field} identity cannot be changed once set`);
  if ((spec.uid ?? '') !== (before.uid ?? '')) errors.push(changed('uid'));
  if ((spec.username ?? '') !== (before.username ?? '')) errors.push(changed('username'));
  if (!sameUnordered(spec.groups, before.groups)) errors.push(changed('groups'));
  // reflect.DeepEqual in cert-manager: order counts; an absent map and an empty one differ.
  if (!jsonEqual(spec.extra ?? null, before.extra ?? null)) errors.push(changed('extra'));
  return errors;
}
