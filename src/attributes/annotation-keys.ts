import { isDns1123Subdomain } from '../api/dns-names.js';

// Kubernetes' rule for annotation keys (ValidateAnnotations: IsQualifiedName of
// the lower-cased key): an optional DNS subdomain prefix, '/', and a name.

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Why a key with a '/' cannot be an annotation key of a Kubernetes object, or undefined when it can. */
export function annotationKeyProblem(key: string): string | undefined {
  const lower = key.toLowerCase();
  const slash = lower.indexOf('/');
  const prefix = lower.slice(0, slash);
  const name = lower.slice(slash + 1);
  if (name.includes('/')) return "it must contain at most one '/'";
  if (prefix === '') return 'prefix part must be non-empty';
  if (prefix.length > 253) return 'prefix part must be no more than 253 characters';
  if (!isDns1123Subdomain(prefix)) {
    return "prefix part must be a lowercase RFC 1123 subdomain: alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character";
  }
  if (name === '') return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}
