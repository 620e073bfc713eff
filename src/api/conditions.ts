import type { KubeObject } from './meta.js';

/** A status condition as cert-manager writes it. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  /** Issuer conditions carry the generation they observed; CertificateRequest ones do not. */
  observedGeneration?: number;
}

/**
 * The observedGeneration field of a condition written for object (spread into the
 * condition): its metadata.generation, or nothing when the object has none.
 */
export function observedGenerationOf(object: KubeObject): { observedGeneration?: number } {
  const generation = object.metadata.generation;
  return generation === undefined ? {} : { observedGeneration: generation };
}

/** The condition of that type, if any. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when a condition of that type has status True. */
export function isConditionTrue(
  conditions: readonly Condition[] | undefined,
  type: string,
): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** Kubernetes timestamps have second precision; a finer one would differ after a round trip. */
export function formatTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * Returns the conditions with `next` replacing the condition of its type.
 * lastTransitionTime changes only when the status changes or the condition is new,
 * so re-asserting a state does not look like a transition.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: Date,
): Condition[] {
  const list = conditions ? [...conditions] : [];
  const index = list.findIndex((c) => c.type === next.type);
  const previous = index >= 0 ? list[index] : undefined;
  const lastTransitionTime =
    previous?.status === next.status && previous.lastTransitionTime
      ? previous.lastTransitionTime
      : formatTimestamp(now);
  const updated: Condition = { ...next, lastTransitionTime };
  if (index >= 0) list[index] = updated;
  else list.push(updated);
  return list;
}
