import { isStoreError } from '../../src/store/errors.js';
import {
  type FieldRequirement,
  type FieldSelector,
  parseFieldSelector as parseSelector,
} from '../../src/store/field-selector.js';
import { badRequest } from './status.js';

export type { FieldRequirement, FieldSelector };

// Every kind offers these on the API server, besides its own labels.
const BASE_LABELS = ['metadata.name', 'metadata.namespace'];

/**
 * Parses a field selector against the labels a kind supports (metadata.name,
 * metadata.namespace and extraLabels); anything else is a 400, as upstream.
 */
export function parseFieldSelector(text: string, extraLabels: readonly string[]): FieldSelector {
  try {
    return parseSelector(text, [...BASE_LABELS, ...extraLabels]);
  } catch (err) {
    // The request handlers answer ApiStatusErrors; the parser's refusals are 400s.
    if (isStoreError(err, 'BadRequest')) throw badRequest(err.message);
    throw err;
  }
}
