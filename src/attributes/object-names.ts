import {
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  isDns1123Label,
  isDns1123Subdomain,
} from '../api/dns-names.js';
import { invalidValue, tooLong } from './attribute-errors.js';

// The Kubernetes API's name rules, in its words, for values that become (or look up)
// object names: the store and the API server would refuse them only after a key
// was generated, so NodePublishVolume refuses them first.

const LABEL_RULE = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character, at most ${DNS1123_LABEL_MAX_LENGTH} characters`;
const SUBDOMAIN_RULE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character, at most ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`;

/** Why text is no namespace name (an RFC 1123 label, at most 63 characters), or undefined. */
export function dnsLabelProblem(text: string): string | undefined {
  if (isDns1123Label(text)) return undefined;
  if (text.length > DNS1123_LABEL_MAX_LENGTH) return tooLong(text, DNS1123_LABEL_MAX_LENGTH);
  return invalidValue(text, LABEL_RULE);
}

/** Why text is no object name (an RFC 1123 subdomain, at most 253 characters), or undefined. */
export function dnsSubdomainProblem(text: string): string | undefined {
  if (isDns1123Subdomain(text)) return undefined;
  if (text.length > DNS1123_SUBDOMAIN_MAX_LENGTH)
    return tooLong(text, DNS1123_SUBDOMAIN_MAX_LENGTH);
  return invalidValue(text, SUBDOMAIN_RULE);
}
