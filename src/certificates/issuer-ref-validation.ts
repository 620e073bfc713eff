import { CERT_MANAGER_GROUP, type IssuerReference } from '../api/issuer-ref.js';
import { invalidField, requiredField } from '../base/field-error.js';

/**
 * cert-manager's webhook check of an issuerRef under specPath (validateIssuerRef, shared by
 * Certificates and CertificateRequests): a name is required; in cert-manager's own group (or
 * none) the kind must be empty, Issuer or ClusterIssuer.
 */
export function validateIssuerRef(ref: IssuerReference | undefined, specPath: string): string[] {
  const errors: string[] = [];
  const path = `${specPath}.issuerRef`;
  if (!ref?.name) errors.push(requiredField(`${path}.name`, 'must be specified'));
  const group = ref?.group ?? '';
  const kind = ref?.kind ?? '';
  if (
    (group === '' || group === CERT_MANAGER_GROUP) &&
    kind !== '' &&
    kind !== 'Issuer' &&
    kind !== 'ClusterIssuer'
  ) {
    // cert-manager's hint names the path it builds, <spec>.issuerRef.kind.group.
    const hint = group === '' ? ` (did you forget to set ${path}.kind.group?)` : '';
    errors.push(
      invalidField(`${path}.kind`, kind, `must be one of Issuer or ClusterIssuer${hint}`),
    );
  }
  return errors;
}
