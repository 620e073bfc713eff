import { StoreError } from './errors.js';

/**
 * A deep copy of value as it would travel as JSON: undefined fields dropped, dates as strings.
 * Objects are stored and persisted this way, so what a caller reads back after a restart is
 * exactly what it read before. Values JSON cannot hold (cycles, BigInt) are Invalid.
 */
export function toJsonCopy<T>(value: T, what: string): T {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StoreError('Invalid', `${what} is not representable as JSON: ${String(err)}`);
  }
  return JSON.parse(text) as T;
}

/** Deep equality of JSON values (plain objects, arrays, strings, numbers, booleans, null). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]));
}
