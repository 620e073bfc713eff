import { quoted } from './echoed-value.js';
import {
  DNS1123_LABEL_MESSAGE,
  DNS1123_SUBDOMAIN_MESSAGE,
  isDns1123Label,
  isDns1123Subdomain,
} from './kube-names.js';

/** A namespaced object's namespace and name, as `kubectl` and cmctl address it. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/**
 * What is wrong with a namespace and name, or undefined when both are valid: the namespace
 * must be a DNS-1123 label, the name (of a Certificate, as most kinds) a DNS-1123 subdomain.
 */
export function namespacedNameProblem(ref: NamespacedName): string | undefined {
  if (!isDns1123Label(ref.namespace)) {
    return `namespace ${quoted(ref.namespace)} is invalid: ${DNS1123_LABEL_MESSAGE}`;
  }
  if (!isDns1123Subdomain(ref.name)) {
    return `name ${quoted(ref.name)} is invalid: ${DNS1123_SUBDOMAIN_MESSAGE}`;
  }
  return undefined;
}

/** Parses `NAMESPACE/NAME`; throws an Error saying what is wrong (the value echoed, shortened). */
export function parseNamespacedName(text: string): NamespacedName {
  const parts = text.split('/');
  const [namespace, name] = parts;
  if (parts.length !== 2 || !namespace || !name) {
    throw new Error(`expected NAMESPACE/NAME, got ${quoted(text)}`);
  }
  const ref = { namespace, name };
  const problem = namespacedNameProblem(ref);
  if (problem) throw new Error(problem);
  return ref;
}

/** `namespace/name`. */
export function formatNamespacedName(ref: NamespacedName): string {
  return `${ref.namespace}/${ref.name}`;
}
