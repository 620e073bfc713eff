import { jsonEqual } from '../../src/store/json-value.js';

/** The patch Content-Types the fake server applies. */
export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';

/** A patch document that is not well formed (the API server answers 400). */
export class PatchFormatError extends Error {}

/** A well-formed patch that cannot apply to the object (the API server answers 422). */
export class PatchApplyError extends Error {}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Assigning through `obj[key]` with key "__proto__" would replace the prototype instead of
// adding the field JSON.parse gave us; define it as an own property instead.
function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** RFC 7386 JSON Merge Patch: objects merge recursively, null deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = {};
  if (isObject(target))
    for (const [key, value] of Object.entries(target)) setOwn(result, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwn(result, key, applyMergePatch(result[key], value));
  }
  return result;
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** RFC 6902 JSON Patch (add, remove, replace, move, copy, test) on a copy of target. */
export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) {
    throw new PatchFormatError('a JSON patch must be an array of operations');
  }
  let document = structuredClone(target);
  patch.forEach((raw: unknown, index) => {
    const operation = checkOperation(raw, index);
    document = applyOperation(document, operation, index);
  });
  return document;
}

function checkOperation(raw: unknown, index: number): Operation {
  if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
    throw new PatchFormatError(`operation ${index}: op and path are required`);
  }
  const operation: Operation = { op: raw.op, path: raw.path };
  if (['add', 'replace', 'test'].includes(raw.op)) {
    if (!Object.hasOwn(raw, 'value')) {
      throw new PatchFormatError(`operation ${index} (${raw.op}): value is required`);
    }
    operation.value = raw.value;
  } else if (['move', 'copy'].includes(raw.op)) {
    if (typeof raw.from !== 'string') {
      throw new PatchFormatError(`operation ${index} (${raw.op}): from is required`);
    }
    operation.from = raw.from;
  } else if (raw.op !== 'remove') {
    throw new PatchFormatError(`operation ${index}: unknown op "${raw.op}"`);
  }
  return operation;
}

function applyOperation(document: unknown, operation: Operation, index: number): unknown {
  const fail = (why: string) =>
    new PatchApplyError(`operation ${index} (${operation.op} ${operation.path}): ${why}`);
  switch (operation.op) {
    case 'add':
      return add(document, pointer(operation.path), structuredClone(operation.value), fail);
    case 'remove':
      return remove(document, pointer(operation.path), fail).document;
    case 'replace': {
      const removed = remove(document, pointer(operation.path), fail).document;
      return add(removed, pointer(operation.path), structuredClone(operation.value), fail);
    }
    case 'move': {
      const from = pointer(operation.from as string);
      const taken = remove(document, from, fail);
      return add(taken.document, pointer(operation.path), taken.value, fail);
    }
    case 'copy': {
      const value = structuredClone(lookup(document, pointer(operation.from as string), fail));
      return add(document, pointer(operation.path), value, fail);
    }
    default: {
      if (!jsonEqual(lookup(document, pointer(operation.path), fail), operation.value)) {
        throw fail('test failed: the value differs');
      }
      return document;
    }
  }
}

/** RFC 6901: `/a/b~1c` names a → "b/c"; the empty pointer is the whole document. */
function pointer(text: string): string[] {
  if (text === '') return [];
  if (!text.startsWith('/')) throw new PatchFormatError(`invalid JSON pointer "${text}"`);
  return text
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function lookup(document: unknown, path: string[], fail: (why: string) => Error): unknown {
  let value = document;
  for (const token of path) {
    if (Array.isArray(value)) value = value[arrayIndex(token, value.length - 1, fail)];
    else if (isObject(value) && Object.hasOwn(value, token)) value = value[token];
    else throw fail(`path not found at "${token}"`);
  }
  return value;
}

function arrayIndex(token: string, max: number, fail: (why: string) => Error): number {
  if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) > max) {
    throw fail(`array index "${token}" out of range`);
  }
  return Number(token);
}

function add(
  document: unknown,
  path: string[],
  value: unknown,
  fail: (why: string) => Error,
): unknown {
  if (path.length === 0) return value;
  const parent = lookup(document, path.slice(0, -1), fail);
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const at = last === '-' ? parent.length : arrayIndex(last, parent.length, fail);
    parent.splice(at, 0, value);
  } else if (isObject(parent)) {
    setOwn(parent, last, value);
  } else {
    throw fail('the parent is not an object or array');
  }
  return document;
}

function remove(
  document: unknown,
  path: string[],
  fail: (why: string) => Error,
): { document: unknown; value: unknown } {
  if (path.length === 0) return { document: undefined, value: document };
  const parent = lookup(document, path.slice(0, -1), fail);
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const [value] = parent.splice(arrayIndex(last, parent.length - 1, fail), 1);
    return { document, value };
  }
  if (isObject(parent) && Object.hasOwn(parent, last)) {
    const value = parent[last];
    delete parent[last];
    return { document, value };
  }
  throw fail(`path not found at "${last}"`);
}
