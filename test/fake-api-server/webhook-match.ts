import type { KubeObject } from '../../src/api/meta.js';
import type { LabelSelector, RuleWithOperations } from '../../src/api/webhook-configuration.js';

// Which webhooks a request goes to, as k8s.io/apiserver's webhook predicates decide it
// (pkg/admission/plugin/webhook/predicates/{rules,namespace,object}): pure functions over the
// request's attributes.

/** What a write is, for matching: the resource as addressed, and its namespace. */
export interface MatchedRequest {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  group: string;
  version: string;
  /** The plural resource name. */
  resource: string;
  /** '' for the object itself, e.g. 'status'. */
  subResource: string;
  /** '' for cluster-scoped objects; a Namespace's own name for requests on an existing Namespace. */
  namespace: string;
}

/** A selector that cannot be evaluated (only from objects seeded into the store unvalidated). */
export class SelectorError extends Error {}

function exactOrWildcard(items: readonly string[] | undefined, requested: string): boolean {
  return (items ?? []).some((item) => item === '*' || item === requested);
}

/** Requests for Namespace objects, which are cluster-scoped however their namespace is set. */
export function isNamespaceResource(request: MatchedRequest): boolean {
  return request.group === '' && request.version === 'v1' && request.resource === 'namespaces';
}

function scopeMatches(rule: RuleWithOperations, request: MatchedRequest): boolean {
  switch (rule.scope ?? '*') {
    case '*':
      return true;
    case 'Namespaced':
      return !isNamespaceResource(request) && request.namespace !== '';
    case 'Cluster':
      return isNamespaceResource(request) || request.namespace === '';
    default:
      return false;
  }
}

function resourceMatches(rule: RuleWithOperations, request: MatchedRequest): boolean {
  return (rule.resources ?? []).some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    return (
      (res === '*' || res === request.resource) && (sub === '*' || sub === request.subResource)
    );
  });
}

/** rules.Matcher: scope, operation, group, version and resource/subresource all match. */
export function ruleMatches(rule: RuleWithOperations, request: MatchedRequest): boolean {
  return (
    scopeMatches(rule, request) &&
    exactOrWildcard(rule.operations, request.operation) &&
    exactOrWildcard(rule.apiGroups, request.group) &&
    exactOrWildcard(rule.apiVersions, request.version) &&
    resourceMatches(rule, request)
  );
}

/** True when labels satisfy a metav1.LabelSelector; an absent or empty selector selects everything. */
export function selectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const has = (key: string) => labels !== undefined && Object.hasOwn(labels, key);
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    if (!has(key) || labels?.[key] !== value) return false;
  }
  for (const requirement of selector?.matchExpressions ?? []) {
    const present = has(requirement.key);
    const value = present ? labels?.[requirement.key] : undefined;
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case 'In':
        if (!present || !values.includes(value as string)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(value as string)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        throw new SelectorError(`"${requirement.operator}" is not a valid label selector operator`);
    }
  }
  return true;
}

/** Whether a selector selects nothing in particular (it then matches without any lookup). */
export function isEmptySelector(selector: LabelSelector | undefined): boolean {
  return (
    Object.keys(selector?.matchLabels ?? {}).length === 0 &&
    (selector?.matchExpressions ?? []).length === 0
  );
}

/**
 * Whose labels the namespaceSelector is matched against: none for cluster-scoped objects
 * (never filtered), the object itself for a create or update of a Namespace, else the
 * Namespace the request is in (looked up by the caller).
 */
export function namespaceLabelSource(
  request: MatchedRequest,
  object: KubeObject | undefined,
):
  | { kind: 'unfiltered' }
  | { kind: 'object'; object: KubeObject | undefined }
  | { kind: 'namespace'; name: string } {
  if (request.namespace === '' && !isNamespaceResource(request)) return { kind: 'unfiltered' };
  if (
    isNamespaceResource(request) &&
    request.subResource === '' &&
    (request.operation === 'CREATE' || request.operation === 'UPDATE')
  ) {
    return { kind: 'object', object };
  }
  return { kind: 'namespace', name: request.namespace };
}

/** object.Matcher: an objectSelector matches the labels of the new object or of the old one. */
export function objectSelectorMatches(
  selector: LabelSelector | undefined,
  object: KubeObject | undefined,
  oldObject: KubeObject | undefined,
): boolean {
  if (isEmptySelector(selector)) return true;
  return [object, oldObject].some(
    (candidate) =>
      candidate !== undefined && selectorMatches(selector, candidate.metadata.labels ?? {}),
  );
}
