import type { Condition } from '../../../src/api/conditions.js';
import type { IssuerReference } from '../../../src/api/issuer-ref.js';
import type { Modifier } from './modifier.js';

// Modifiers of spec and status, for any kind that has them (the kind is inferred from the
// builder the modifier is passed to, so the fields are checked against its spec or status).
// Each sets a deep copy of what it is given: one modifier is often applied to many objects
// (a list of modifiers shared by a file's cases), and a test that changes a nested field of
// one built object must not change the others.

/** Sets the given spec fields, keeping the others. */
export function withSpec<S extends object>(fields: NoInfer<Partial<S>>): Modifier<{ spec: S }> {
  return (object) => {
    object.spec = { ...object.spec, ...structuredClone(fields) };
  };
}

/** Sets spec.issuerRef, for a Certificate or a CertificateRequest. */
export function withIssuerRef(
  issuerRef: IssuerReference,
): Modifier<{ spec: { issuerRef: IssuerReference } }> {
  return (object) => {
    object.spec.issuerRef = { ...issuerRef };
  };
}

/** Sets the given status fields, keeping the others (`{}` makes an empty status). */
export function withStatus<S extends object>(fields: NoInfer<S>): Modifier<{ status?: S }> {
  return (object) => {
    object.status = { ...object.status, ...structuredClone(fields) } as S;
  };
}

/** Sets status.conditions, keeping the rest of the status. */
export function withConditions(
  conditions: Condition[],
): Modifier<{ status?: { conditions?: Condition[] } }> {
  return (object) => {
    object.status = { ...object.status, conditions: structuredClone(conditions) };
  };
}
