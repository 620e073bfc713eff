import { StoreError } from './errors.js';
import { NEEDS_JSON, plainJsonCopy } from './plain-json-copy.js';

// Values frozen by freezeJson: exactly what a JSON round trip of them gives, and immutable, so
// a copy of them is themselves. Only the value and its direct members are remembered: writes
// reuse whole fields of a stored object (`{ ...stored, status }`), never deeper parts alone.
const frozenJson = new WeakSet<object>();

/**
 * A deep copy of value as it would travel as JSON: undefined fields dropped, dates as strings.
 * Objects are stored and persisted this way, so what a caller reads back after a restart is
 * exactly what it read before. Values JSON cannot hold (cycles, BigInt) are Invalid. Parts
 * that freezeJson froze are not copied but shared: they are immutable and already JSON.
 */
export function toJsonCopy<T>(value: T, what: string): T {
  if (isFrozenJson(value)) return value;
  if (isPlainObject(value)) {
    try {
      return copyMembers(value) as T;
    } catch {
      // Worded below exactly as for the whole value.
    }
  }
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StoreError('Invalid', `${what} is not representable as JSON: ${String(err)}`);
  }
  return JSON.parse(text) as T;
}

/**
 * Deep-freezes value, which must be a JSON value (the result of toJsonCopy or JSON.parse), and
 * remembers it as one, so toJsonCopy shares it instead of copying. Returns value.
 */
export function freezeJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  deepFreeze(value);
  frozenJson.add(value);
  for (const member of Object.values(value)) {
    if (typeof member === 'object' && member !== null) frozenJson.add(member);
  }
  return value;
}

/** A frozen JSON copy of value (toJsonCopy, then freezeJson). */
export function frozenJsonCopy<T>(value: T, what: string): T {
  const copy = toJsonCopy(value, what);
  return isFrozenJson(copy) ? copy : freezeJson(copy);
}

/** True when value was frozen by freezeJson (or is a member of one that was). */
export function isFrozenJson(value: unknown): boolean {
  return typeof value === 'object' && value !== null && frozenJson.has(value);
}

/** A plain object without toJSON, whose JSON form is the JSON forms of its members. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return (
    (prototype === Object.prototype || prototype === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}

/** The JSON copy of a plain object, sharing its frozen JSON members; throws as JSON.stringify. */
function copyMembers(value: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // Assigning it would set the copy's prototype: the whole-value path handles it.
    if (key === '__proto__') throw new Error('__proto__ member');
    const member = value[key];
    // Strings (a certificate's PEM, a CSR) are most of an object's bytes: taken as they are.
    if (isFrozenJson(member) || typeof member === 'string' || typeof member === 'boolean') {
      copy[key] = member;
      continue;
    }
    const plain = plainJsonCopy(member, isFrozenJson);
    if (plain !== NEEDS_JSON) {
      if (plain !== undefined) copy[key] = plain;
      continue;
    }
    // As JSON.stringify does for a member: called with its key, dropped when it has no form.
    const text = JSON.stringify({ [key]: member });
    if (text === '{}') continue;
    copy[key] = (JSON.parse(text) as Record<string, unknown>)[key];
  }
  return copy;
}

function deepFreeze(value: object): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const member of Object.values(value)) {
    if (typeof member === 'object' && member !== null) deepFreeze(member);
  }
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
