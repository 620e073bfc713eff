import type { Condition } from '../api/conditions.js';
import { byteLength, qualifiedNameErrors, regexError } from '../api/kube-names.js';
import {
  duplicateField,
  invalidField,
  requiredField,
  tooLongField,
  unsupportedField,
} from '../base/field-error.js';
import { FieldErrorList } from '../base/field-error-list.js';

// apimachinery's metav1 validators (pkg/apis/meta/v1/validation), with their messages, for the
// rules that reuse them: times and metav1.Conditions. Messages follow the Go code word for
// word, so a client sees what kube-apiserver would say. Name rules are api/kube-names.ts's.

const CONDITION_REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const CONDITION_REASON = new RegExp(`^${CONDITION_REASON_FMT}$`);
const CONDITION_REASON_ERROR =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
const CONDITION_REASON_MAX = 1024;
const CONDITION_MESSAGE_MAX = 32 * 1024;

/** The detail of a timestamp that is not RFC 3339 (ours: the API server fails to decode it). */
export const RFC3339_DETAIL = 'must be an RFC 3339 time, e.g. 2026-03-02T10:00:00Z';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A metav1.Time from JSON (RFC 3339) as epoch milliseconds; undefined when absent, NaN when malformed. */
export function parseKubeTime(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  return RFC3339.test(text) ? Date.parse(text) : Number.NaN;
}

/** metav1 ValidateConditions: unique types, each a qualified name, status, time, reason, message. */
export function validateConditions(conditions: readonly Condition[], path: string): string[] {
  const errors = new FieldErrorList();
  const seen = new Set<string>();
  conditions.forEach((condition, i) => {
    const at = `${path}[${i}]`;
    const type = condition.type ?? '';
    if (seen.has(type)) errors.addItem(path, () => duplicateField(`${at}.type`, type));
    seen.add(type);
    for (const problem of qualifiedNameErrors(type)) {
      errors.addItem(path, () => invalidField(`${at}.type`, type, problem));
    }
    const status = condition.status ?? '';
    if (!['False', 'True', 'Unknown'].includes(status)) {
      errors.addItem(path, () =>
        unsupportedField(`${at}.status`, status, ['False', 'True', 'Unknown']),
      );
    }
    const generation = condition.observedGeneration ?? 0;
    if (generation < 0) {
      errors.addItem(path, () =>
        invalidField(
          `${at}.observedGeneration`,
          generation,
          'must be greater than or equal to zero',
        ),
      );
    }
    const transition = parseKubeTime(condition.lastTransitionTime);
    if (transition === undefined) {
      errors.addItem(path, () => requiredField(`${at}.lastTransitionTime`, 'must be set'));
    } else if (Number.isNaN(transition)) {
      // The API server cannot even decode such a body; no Go message exists for it.
      errors.addItem(path, () =>
        invalidField(
          `${at}.lastTransitionTime`,
          String(condition.lastTransitionTime),
          RFC3339_DETAIL,
        ),
      );
    }
    const reason = condition.reason ?? '';
    if (reason === '') errors.addItem(path, () => requiredField(`${at}.reason`, 'must be set'));
    else {
      if (!CONDITION_REASON.test(reason)) {
        errors.addItem(path, () =>
          invalidField(
            `${at}.reason`,
            reason,
            regexError(
              CONDITION_REASON_ERROR,
              CONDITION_REASON_FMT,
              'my_name',
              'MY_NAME',
              'MyName',
              'ReasonA,ReasonB',
              'ReasonA:ReasonB',
            ),
          ),
        );
      }
      if (byteLength(reason) > CONDITION_REASON_MAX) {
        errors.addItem(path, () => tooLongField(`${at}.reason`, CONDITION_REASON_MAX));
      }
    }
    if (byteLength(condition.message ?? '') > CONDITION_MESSAGE_MAX) {
      errors.addItem(path, () => tooLongField(`${at}.message`, CONDITION_MESSAGE_MAX));
    }
  });
  return errors.toArray();
}
