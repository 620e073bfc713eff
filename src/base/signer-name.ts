import {
  byteLength,
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
} from '../api/kube-names.js';
import { invalidField, requiredField, tooLongField } from './field-error.js';

// kube-apiserver's rule for certificates.k8s.io signer names, which the admission rules and the
// trust-bundle volume attribute share. It answers with field errors, so it lives beside them.

// The longest signer name: a domain, '/', and a path holding `<namespace>.<name>`.
const SIGNER_NAME_MAX =
  DNS1123_SUBDOMAIN_MAX_LENGTH + 1 + DNS1123_SUBDOMAIN_MAX_LENGTH + DNS1123_LABEL_MAX_LENGTH + 1;

/** True for a signer name reserved by the Kubernetes project (`kubernetes.io` or a subdomain). */
export function isKubernetesSignerName(signerName: string): boolean {
  const host = signerName.split('/')[0] as string;
  return host === 'kubernetes.io' || host.endsWith('.kubernetes.io');
}

/**
 * kube-apiserver's ValidateSignerName (pkg/apis/core/validation): `<domain>/<path>`,
 * the domain two or more DNS labels, the path dot-separated DNS subdomains, 571 characters at
 * most. Field errors at path; none when valid.
 */
export function validateSignerName(path: string, signerName: string): string[] {
  if (signerName === '') return [requiredField(path, '')];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [
      invalidField(
        path,
        signerName,
        "must be a fully qualified domain and path of the form 'example.com/signer-name'",
      ),
    ];
  }
  const [domain, signerPath] = segments as [string, string];
  const errors: string[] = [];
  if (byteLength(domain) > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    errors.push(tooLongField(path, DNS1123_SUBDOMAIN_MAX_LENGTH));
  }
  const domainLabels = domain.split('.');
  // Only the first bad label is reported: the others' messages would read the same.
  const badLabel = domainLabels.find((label) => dns1123LabelErrors(label).length > 0);
  if (badLabel !== undefined) {
    for (const problem of dns1123LabelErrors(badLabel)) {
      errors.push(invalidField(path, domain, `validating label "${badLabel}": ${problem}`));
    }
  }
  if (domainLabels.length < 2) {
    errors.push(
      invalidField(path, domain, 'should be a domain with at least two segments separated by dots'),
    );
  }
  const badSegment = signerPath.split('.').find((s) => dns1123SubdomainErrors(s).length > 0);
  if (badSegment !== undefined) {
    for (const problem of dns1123SubdomainErrors(badSegment)) {
      errors.push(invalidField(path, signerPath, `validating label "${badSegment}": ${problem}`));
    }
  }
  if (byteLength(signerName) > SIGNER_NAME_MAX) errors.push(tooLongField(path, SIGNER_NAME_MAX));
  return errors;
}
