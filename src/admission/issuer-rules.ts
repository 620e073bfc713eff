import { type CAIssuerSpec, ISSUER_TYPE_KEYS, type IssuerSpec } from '../api/issuer.js';
import { forbiddenField, invalidField, requiredField } from '../base/field-error.js';
import { FieldErrorList } from '../base/field-error-list.js';

// cert-manager's webhook validation of Issuers and ClusterIssuers (its
// internal/apis/certmanager/validation/issuer.go ValidateIssuerConfig), with its messages and
// paths. The same function serves both kinds, on create and update.

/**
 * ValidateCAIssuerConfig: secretName is required; an empty OCSP server or issuing
 * certificate URL is refused (cert-manager checks no more than emptiness, and names the OCSP
 * path `ocspServer`, singular).
 */
function caErrors(ca: CAIssuerSpec, errors: FieldErrorList): void {
  if (!ca.secretName) errors.add(requiredField('spec.ca.secretName', ''));
  for (const [i, url] of (ca.ocspServers ?? []).entries()) {
    if (url === '')
      errors.addItem('spec.ca.ocspServer', () =>
        invalidField(
          `spec.ca.ocspServer[${i}]`,
          url,
          'must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org',
        ),
      );
  }
  for (const [i, url] of (ca.issuingCertificateURLs ?? []).entries()) {
    if (url === '')
      errors.addItem('spec.ca.issuingCertificateURLs', () =>
        invalidField(`spec.ca.issuingCertificateURLs[${i}]`, url, 'must be a valid URL'),
      );
  }
}

/**
 * Checks an Issuer's or ClusterIssuer's spec as cert-manager's webhook does: exactly one
 * issuer type (`at least one issuer must be configured`, `may not specify more than one
 * issuer type`), and the CA issuer's fields. SelfSigned has nothing to check. ACME, Vault and
 * Venafi issuers are admitted as a type without checking their fields: cert-csi signs for
 * none of them (they never become Ready here), and another issuer stack may own them.
 * Returns field errors, empty when valid.
 */
export function validateIssuerSpec(spec: IssuerSpec | undefined): string[] {
  const errors = new FieldErrorList();
  let configured = 0;
  // The first type set counts; each later one is refused.
  for (const type of ISSUER_TYPE_KEYS) {
    const config = spec?.[type];
    // A null type (YAML `ca:` with nothing under it) decodes to no type at all, as in Go.
    if (config === undefined || config === null) continue;
    if (configured > 0) {
      errors.add(forbiddenField(`spec.${type}`, 'may not specify more than one issuer type'));
      continue;
    }
    configured++;
    if (type === 'ca') caErrors(config as CAIssuerSpec, errors);
  }
  if (configured === 0) errors.add(requiredField('spec', 'at least one issuer must be configured'));
  return errors.toArray();
}
