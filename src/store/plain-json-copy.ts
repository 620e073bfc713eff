// What JSON.parse(JSON.stringify(value)) gives, built by walking the value when it is made
// only of plain objects, arrays and primitives: the store copies every object it is handed,
// and the text round trip of a status's conditions showed in profiles of the controllers.
// Anything else (toJSON, Dates, class instances, BigInt, cycles, a `__proto__` key) is left
// to the real round trip, so its result and its errors stay JSON's own.

/** Returned by plainJsonCopy when the value needs JSON's own round trip. */
export const NEEDS_JSON: unique symbol = Symbol('needs JSON');

/** Deeper than this is left to JSON (which also reports cycles the way callers expect). */
const MAX_DEPTH = 64;

/**
 * The JSON round trip of value as a member of an object: undefined when JSON drops it,
 * NEEDS_JSON when it holds something only JSON.stringify should judge. `shared(v)` says
 * an object is already an immutable JSON value and may be taken as it is.
 */
export function plainJsonCopy(
  value: unknown,
  shared: (value: object) => boolean,
): unknown | typeof NEEDS_JSON {
  return copyValue(value, shared, 0, false);
}

function copyValue(
  value: unknown,
  shared: (value: object) => boolean,
  depth: number,
  inArray: boolean,
): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      // JSON writes -0 as 0 and NaN and the infinities as null.
      return Number.isFinite(value) ? value + 0 : null;
    case 'undefined':
    case 'function':
    case 'symbol':
      return inArray ? null : undefined;
    case 'bigint':
      return NEEDS_JSON;
  }
  if (value === null) return null;
  const object = value as object;
  if (shared(object)) return object;
  if (depth >= MAX_DEPTH || typeof (object as { toJSON?: unknown }).toJSON === 'function')
    return NEEDS_JSON;
  if (Array.isArray(object)) {
    const copy: unknown[] = new Array(object.length);
    for (let i = 0; i < object.length; i++) {
      const item = copyValue(object[i], shared, depth + 1, true);
      if (item === NEEDS_JSON) return NEEDS_JSON;
      copy[i] = item;
    }
    return copy;
  }
  const prototype = Object.getPrototypeOf(object);
  if (prototype !== Object.prototype && prototype !== null) return NEEDS_JSON;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    if (key === '__proto__') return NEEDS_JSON;
    const member = copyValue((object as Record<string, unknown>)[key], shared, depth + 1, false);
    if (member === NEEDS_JSON) return NEEDS_JSON;
    if (member !== undefined) copy[key] = member;
  }
  return copy;
}
