const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Kubernetes object names (and label key prefixes) may be this long at most. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Namespaces and label names may be this long at most. */
export const DNS1123_LABEL_MAX_LENGTH = 63;

/** True for a lowercase RFC 1123 subdomain: the rule for most object names. */
export function isDns1123Subdomain(text: string): boolean {
  return text.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && DNS1123_SUBDOMAIN.test(text);
}

/** True for a lowercase RFC 1123 label: the rule for namespace names. */
export function isDns1123Label(text: string): boolean {
  return text.length <= DNS1123_LABEL_MAX_LENGTH && DNS1123_LABEL.test(text);
}

/** The API server's message for a name that is not a DNS-1123 subdomain. */
export const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', must start and end with an alphanumeric character, and be at most 253 characters";

/** The API server's message for a namespace that is not a DNS-1123 label. */
export const DNS1123_LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', start and end with an alphanumeric character, and be at most 63 characters";
