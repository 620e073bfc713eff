import { type Condition, findCondition } from '../api/conditions.js';

/** The condition values a `*_ready_status` family has one series for, in cert-manager's order. */
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** The status of an object's Ready condition; no Ready condition counts as Unknown. */
export function readyStatusOf(conditions: readonly Condition[] | undefined): Condition['status'] {
  return findCondition(conditions, 'Ready')?.status ?? 'Unknown';
}

/** A timestamp as Unix seconds (whole, as cert-manager's .Unix()); 0 when absent or unparsable. */
export function unixSeconds(timestamp: string | undefined): number {
  const ms = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}
