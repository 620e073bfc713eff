import {
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  DNS1123_SUBDOMAIN_PREFIX_RULE,
  EMPTY_NAME_ERROR,
  EMPTY_PREFIX_ERROR,
  isDns1123Subdomain,
  isQualifiedNamePart,
  maxLenError,
  QUALIFIED_NAME_ERROR,
  QUALIFIED_NAME_MAX_LENGTH,
} from '../api/kube-names.js';

// Kubernetes' rule for annotation keys (ValidateAnnotations: IsQualifiedName of
// the lower-cased key): an optional DNS subdomain prefix, '/', and a name.

/** Why a key with a '/' cannot be an annotation key of a Kubernetes object, or undefined when it can. */
export function annotationKeyProblem(key: string): string | undefined {
  const lower = key.toLowerCase();
  const slash = lower.indexOf('/');
  const prefix = lower.slice(0, slash);
  const name = lower.slice(slash + 1);
  if (name.includes('/')) return "it must contain at most one '/'";
  if (prefix === '') return EMPTY_PREFIX_ERROR;
  if (prefix.length > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    return `prefix part ${maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH)}`;
  }
  if (!isDns1123Subdomain(prefix)) return `prefix part must be ${DNS1123_SUBDOMAIN_PREFIX_RULE}`;
  if (name === '') return EMPTY_NAME_ERROR;
  if (name.length > QUALIFIED_NAME_MAX_LENGTH) {
    return `name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`;
  }
  if (!isQualifiedNamePart(name)) return `name part ${QUALIFIED_NAME_ERROR}`;
  return undefined;
}
