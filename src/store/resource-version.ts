import { StoreError } from './errors.js';

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Parses a decimal resourceVersion; anything else is Invalid (the error names the text). */
export function parseResourceVersion(text: string): number {
  const value = Number(text);
  if (!DECIMAL.test(text) || !Number.isSafeInteger(value)) {
    throw new StoreError('Invalid', `invalid resource version "${text}": not a decimal integer`);
  }
  return value;
}

/**
 * True when candidate is a later resourceVersion than current. Kubernetes calls them opaque,
 * but both etcd and the memory store issue increasing decimals; when either is not decimal
 * any difference counts as newer.
 */
export function isNewerResourceVersion(
  candidate: string | undefined,
  current: string | undefined,
): boolean {
  if (candidate === undefined || current === undefined) return candidate !== current;
  if (!DECIMAL.test(candidate) || !DECIMAL.test(current)) return candidate !== current;
  if (candidate.length !== current.length) return candidate.length > current.length;
  return candidate > current;
}
