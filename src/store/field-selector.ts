import type { KubeObject } from '../api/meta.js';
import { StoreError } from './errors.js';

/** One `field=value` (or `==`) or `field!=value` term. */
export interface FieldRequirement {
  field: string;
  equals: boolean;
  value: string;
}

/** A parsed field selector; every term must hold. */
export interface FieldSelector {
  requirements: readonly FieldRequirement[];
  matches(object: KubeObject): boolean;
  /** The name a `metadata.name=` term pins, which RBAC treats as a named request. */
  exactName(): string | undefined;
}

/**
 * Parses the API server's field selector syntax (`a=b,c==d,e!=f`, with `\,` `\=` `\\`
 * escapes in values; empty terms are skipped), as upstream's fields.ParseSelector does:
 * errors are BadRequest (HTTP 400) with upstream's messages. With supportedLabels, a field
 * outside it is refused as the API server refuses a label the kind does not offer; without,
 * any dotted path into the object is accepted, for a caller that knows no per-kind lists.
 */
export function parseFieldSelector(
  text: string,
  supportedLabels?: readonly string[],
): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitUnescaped(text, ',')) {
    if (term === '') continue;
    const requirement = parseTerm(term, text);
    if (supportedLabels !== undefined && !supportedLabels.includes(requirement.field)) {
      throw badRequest(`field label not supported: ${requirement.field}`);
    }
    requirements.push(requirement);
  }
  return {
    requirements,
    matches: (object) =>
      requirements.every((r) => (fieldValue(object, r.field) === r.value) === r.equals),
    exactName: () => requirements.find((r) => r.field === 'metadata.name' && r.equals)?.value,
  };
}

function badRequest(message: string): StoreError {
  return new StoreError('BadRequest', message);
}

function parseTerm(term: string, whole: string): FieldRequirement {
  // The first operator wins, trying `!=` then `==` then `=` at each position, as upstream;
  // an escaped character is never part of an operator.
  for (let i = 0; i < term.length; i++) {
    if (term[i] === '\\') {
      i++;
      continue;
    }
    for (const operator of ['!=', '==', '=']) {
      if (term.startsWith(operator, i)) {
        const field = term.slice(0, i);
        if (field === '') break;
        return {
          field,
          equals: operator !== '!=',
          value: unescapeValue(term.slice(i + operator.length), whole),
        };
      }
    }
  }
  throw badRequest(`invalid selector: '${whole}'; can't understand '${term}'`);
}

function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unescapeValue(value: string, whole: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i] as string;
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '\\' && next !== ',' && next !== '=') {
        throw badRequest(`invalid field selector: '${whole}': invalid escape sequence`);
      }
      out += next;
      i++;
    } else if (char === '=' || char === ',') {
      throw badRequest(`invalid field selector: '${whole}': unescaped ${char} in value`);
    } else {
      out += char;
    }
  }
  return out;
}

/** The value a field label selects on; a missing field counts as '' (e.g. an unscheduled pod). */
function fieldValue(object: KubeObject, label: string): string {
  let value: unknown = object;
  for (const part of label.split('.')) {
    // Own properties only: `metadata.constructor` is no field of the object.
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return '';
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : String(value);
}

/** A value escaped for a `field=value` term (`\`, `,` and `=`), as parseFieldSelector reads it back. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (char) => `\\${char}`);
}
