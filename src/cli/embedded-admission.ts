import { type Certificate, CertificateKind, type CertificateSpec } from '../api/certificate.js';
import type { KubeObject } from '../api/meta.js';
import { validateCertificateSpec } from '../certificates/certificate-validation.js';
import type { AdmissionHook } from '../store/admission.js';
import { resourceNameOf } from '../store/object-rules.js';

type Validator = (object: KubeObject) => readonly string[];

// What a cluster's webhooks refuse on create and update, per resource (`plural.group`): in
// embedded mode there is no webhook, so the store runs these itself.
const validators: ReadonlyMap<string, Validator> = new Map<string, Validator>([
  [
    resourceNameOf(CertificateKind),
    (object) => validateCertificateSpec((object as Certificate).spec ?? ({} as CertificateSpec)),
  ],
]);

/**
 * The embedded store's admission: cert-manager's webhook validation for Certificates
 * (validateCertificateSpec); every other kind is admitted as written.
 */
export const embeddedAdmission: AdmissionHook = (kind, object) =>
  validators.get(resourceNameOf(kind))?.(object) ?? [];
