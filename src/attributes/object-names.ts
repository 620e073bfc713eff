import {
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_LABEL_RULE,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  DNS1123_SUBDOMAIN_RULE,
  isDns1123Label,
  isDns1123Subdomain,
} from '../api/kube-names.js';
import { invalidValue, tooLong } from './attribute-errors.js';

// The Kubernetes API's name rules (api/kube-names.ts), as attribute errors, for values that
// become (or look up) object names: the store and the API server would refuse them only after
// a key was generated, so NodePublishVolume refuses them first.

/** Why text is no namespace name (an RFC 1123 label, at most 63 characters), or undefined. */
export function dnsLabelProblem(text: string): string | undefined {
  if (isDns1123Label(text)) return undefined;
  if (text.length > DNS1123_LABEL_MAX_LENGTH) return tooLong(text, DNS1123_LABEL_MAX_LENGTH);
  return invalidValue(text, DNS1123_LABEL_RULE);
}

/** Why text is no object name (an RFC 1123 subdomain, at most 253 characters), or undefined. */
export function dnsSubdomainProblem(text: string): string | undefined {
  if (isDns1123Subdomain(text)) return undefined;
  if (text.length > DNS1123_SUBDOMAIN_MAX_LENGTH)
    return tooLong(text, DNS1123_SUBDOMAIN_MAX_LENGTH);
  return invalidValue(text, DNS1123_SUBDOMAIN_RULE);
}
