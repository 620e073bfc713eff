import { shortened } from '../api/echoed-value.js';
import { compareCodeUnits } from '../base/code-unit-order.js';
import { goQuote, goQuoteValue } from '../base/go-text.js';

/** One rejected attribute: the full key as written (or the key it defaults) and why. */
export interface AttributeError {
  key: string;
  message: string;
}

// Message bodies in the wording of Kubernetes field errors, which csi-driver
// returns (`Invalid value: "x": detail`), minus the `volumeAttributes.<key>` path:
// the key travels separately. Values are quoted shortened (api/echoed-value.ts).

/** `Required value: <detail>`. */
export function requiredValue(detail: string): string {
  return `Required value: ${detail}`;
}

/** `Invalid value: "<value>": <detail>`; pass `redact` for secrets, which are never quoted. */
export function invalidValue(value: string, detail: string, redact = false): string {
  return `Invalid value: ${redact ? '(redacted)' : goQuoteValue(value)}: ${detail}`;
}

/** `Unsupported value: "<value>": supported values: "a", "b"`. */
export function unsupportedValue(value: string, supported: readonly string[]): string {
  return `Unsupported value: ${goQuoteValue(value)}: supported values: ${supported.map(goQuote).join(', ')}`;
}

/** `Duplicate value: "<value>"`. */
export function duplicateValue(value: string): string {
  return `Duplicate value: ${goQuoteValue(value)}`;
}

/** Kubernetes' `Too long` field error, with the limit and the length found, in characters. */
export function tooLong(value: string, limit: number): string {
  return `Too long: ${goQuoteValue(value)}: may not be more than ${limit} characters (it has ${codePoints(value)})`;
}

/** Kubernetes' `Too many` field error: `Too many: <n>: must have at most <limit> items`. */
export function tooMany(count: number, limit: number, items = 'items'): string {
  return `Too many: ${count}: must have at most ${limit} ${items}`;
}

/** The length of text in characters (code points), as X.509 and Kubernetes count them. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

// One bad list element is one error; a list of 10,000 bad elements must not be
// a message of 10,000 errors.
const MAX_MESSAGES_PER_KEY = 3;

/** One message naming every bad key (keys shortened, at most 3 messages each), for gRPC InvalidArgument. */
export function formatAttributeErrors(errors: readonly AttributeError[]): string {
  // Array sort is stable: one key's messages keep the order they were found in.
  const byKey = new Map<string, Set<string>>();
  for (const e of [...errors].sort((a, b) => compareCodeUnits(a.key, b.key))) {
    const messages = byKey.get(e.key) ?? new Set<string>();
    messages.add(e.message);
    byKey.set(e.key, messages);
  }
  const lines: string[] = [];
  for (const [key, messages] of byKey) {
    const shown = shortened(key);
    const all = [...messages];
    for (const message of all.slice(0, MAX_MESSAGES_PER_KEY)) lines.push(`${shown}: ${message}`);
    const more = all.length - MAX_MESSAGES_PER_KEY;
    if (more > 0) lines.push(`${shown}: and ${more} more ${more === 1 ? 'error' : 'errors'}`);
  }
  return lines.join('; ');
}
