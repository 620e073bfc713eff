import { quoted } from '../api/echoed-value.js';
import type { ErrorKind } from '../base/error-catalogue.js';

// The rules read objects as typed values. A review's object was not necessarily checked against
// its CRD's schema (mutating webhooks see it before the API server does, and anyone who can
// reach the webhook can send anything), so a field of the wrong type would otherwise surface as
// a JavaScript TypeError. These decoders check the types of the fields the rules read, as
// cert-manager's webhook decoding into Go structs does, and name the first field that is wrong.

/** A field of an object the rules cannot read: not of its type. The message names it. */
export class ObjectShapeError extends Error {
  override readonly name = 'ObjectShapeError';

  get errorKind(): ErrorKind {
    return 'CERT_CSI_OBJECT_FIELD_WRONG_TYPE';
  }
}

/**
 * Checks value at path (e.g. `request.object.spec`) and returns it as the rules read it; throws
 * ObjectShapeError naming path and the expected type when it is not of it.
 */
export type Shape = (value: unknown, path: string) => unknown;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a JSON value is, for a message: never the value itself, which may be large or secret. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function wrong(path: string, expected: string, value: unknown): never {
  throw new ObjectShapeError(`${path} must be ${expected}, got ${kindOf(value)}`);
}

/** A string. */
export const aString: Shape = (value, path) =>
  typeof value === 'string' ? value : wrong(path, 'a string', value);

/** true or false. */
export const aBoolean: Shape = (value, path) =>
  typeof value === 'boolean' ? value : wrong(path, 'a boolean', value);

/** A whole number (Go's int fields). */
export const anInteger: Shape = (value, path) =>
  Number.isInteger(value) ? value : wrong(path, 'a whole number', value);

/** A list whose every element is of item (an element is never null: Go has no null string). */
export function listOf(item: Shape, expected: string): Shape {
  return (value, path) => {
    if (!Array.isArray(value)) return wrong(path, expected, value);
    let decoded: unknown[] | undefined;
    for (const [i, element] of value.entries()) {
      const read = item(element, `${path}[${i}]`);
      if (read !== element) {
        decoded ??= [...value];
        decoded[i] = read;
      }
    }
    return decoded ?? value;
  };
}

/** An object used as a map: any keys, every value of item. */
export function mapOf(item: Shape, expected: string): Shape {
  return (value, path) => {
    if (!isRecord(value)) return wrong(path, expected, value);
    let decoded: Record<string, unknown> | undefined;
    for (const [key, element] of Object.entries(value)) {
      const read = item(element, `${path}[${quoted(key)}]`);
      if (read !== element) {
        decoded ??= { ...value };
        decoded[key] = read;
      }
    }
    return decoded ?? value;
  };
}

/**
 * An object (a Go struct) with these known fields: each one present is of its shape; a null
 * one is dropped (Go decodes null as the field's absence); other fields are kept unread.
 */
export function objectOf(fields: Readonly<Record<string, Shape>>): Shape {
  return (value, path) => {
    if (!isRecord(value)) return wrong(path, 'an object', value);
    let decoded: Record<string, unknown> | undefined;
    for (const [field, shape] of Object.entries(fields)) {
      const element = value[field];
      // In-process callers may hold an undefined member: absent, as in JSON.
      if (element === undefined || !Object.hasOwn(value, field)) continue;
      if (element === null) {
        decoded ??= { ...value };
        delete decoded[field];
        continue;
      }
      const read = shape(element, `${path}.${field}`);
      if (read !== element) {
        decoded ??= { ...value };
        decoded[field] = read;
      }
    }
    return decoded ?? value;
  };
}
