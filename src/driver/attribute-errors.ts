import { goQuote } from './go-text.js';

/** One rejected attribute: the full key as written (or the key it defaults) and why. */
export interface AttributeError {
  key: string;
  message: string;
}

// Message bodies in the wording of Kubernetes field errors, which csi-driver
// returns (`Invalid value: "x": detail`), minus the `volumeAttributes.<key>` path:
// the key travels separately.

/** `Required value: <detail>`. */
export function requiredValue(detail: string): string {
  return `Required value: ${detail}`;
}

/** `Invalid value: "<value>": <detail>`; pass `redact` for secrets, which are never quoted. */
export function invalidValue(value: string, detail: string, redact = false): string {
  return `Invalid value: ${redact ? '(redacted)' : goQuote(value)}: ${detail}`;
}

/** `Unsupported value: "<value>": supported values: "a", "b"`. */
export function unsupportedValue(value: string, supported: readonly string[]): string {
  return `Unsupported value: ${goQuote(value)}: supported values: ${supported.map(goQuote).join(', ')}`;
}

/** `Duplicate value: "<value>"`. */
export function duplicateValue(value: string): string {
  return `Duplicate value: ${goQuote(value)}`;
}

/** One message naming every bad key, for gRPC InvalidArgument. */
export function formatAttributeErrors(errors: readonly AttributeError[]): string {
  // Array sort is stable: one key's messages keep the order they were found in.
  const lines = [...errors]
    .sort((a, b) => compare(a.key, b.key))
    .map((e) => `${e.key}: ${e.message}`);
  return [...new Set(lines)].join('; ');
}

// Code-unit order, so the result does not depend on the locale.
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
