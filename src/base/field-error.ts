import { shortened } from '../api/echoed-value.js';
import { goQuote, goQuoteValue } from './go-text.js';

/**
 * A field value as apimachinery prints it: strings quoted, numbers bare, a Stringer (e.g. a
 * duration) as its text; long values shortened. `echoed` is a text already cut for an error
 * (goByteSlice), printed as it is.
 */
export type FieldValue = string | number | { text: string } | { echoed: string };

function formatValue(value: FieldValue): string {
  if (typeof value === 'string') return goQuoteValue(value);
  if (typeof value === 'number') return String(value);
  if ('echoed' in value) return value.echoed;
  return shortened(value.text);
}

// Kubernetes' field.Error strings (k8s.io/apimachinery/pkg/util/validation/field), so messages
// read as the API server's and cert-manager's webhook's do.

/** `path: Required value: detail`, or `path: Required value` without a detail, as Go prints it. */
export function requiredField(path: string, detail: string): string {
  return detail === '' ? `${path}: Required value` : `${path}: Required value: ${detail}`;
}

/** `path: Invalid value: value: detail`. */
export function invalidField(path: string, value: FieldValue, detail: string): string {
  return `${path}: Invalid value: ${formatValue(value)}: ${detail}`;
}

/** `path: Invalid value: detail`: a value apimachinery leaves out (field.OmitValueType). */
export function invalidFieldOmitted(path: string, detail: string): string {
  return `${path}: Invalid value: ${detail}`;
}

/** `path: Forbidden: detail`. */
export function forbiddenField(path: string, detail: string): string {
  return `${path}: Forbidden: ${detail}`;
}

/** `path: Unsupported value: value: supported values: "a", "b"`. */
export function unsupportedField(
  path: string,
  value: FieldValue,
  supported: readonly string[],
): string {
  return `${path}: Unsupported value: ${formatValue(value)}: supported values: ${supported.map(goQuote).join(', ')}`;
}

/** `path: Too long: may not be more than N bytes`. */
export function tooLongField(path: string, max: number): string {
  return `${path}: Too long: may not be more than ${max} bytes`;
}

/** `path: Duplicate value: value`. */
export function duplicateField(path: string, value: FieldValue): string {
  return `${path}: Duplicate value: ${formatValue(value)}`;
}
