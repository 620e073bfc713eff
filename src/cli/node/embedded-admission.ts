import {
  validateCertificateRequestCreate,
  validateCertificateRequestUpdate,
} from '../../admission/certificate-request-rules.js';
import {
  csrSpecChangeErrors,
  csrStatusErrors,
  validateCsrCreate,
} from '../../admission/certificate-signing-request-rules.js';
import {
  validateClusterTrustBundle,
  validateClusterTrustBundleUpdate,
} from '../../admission/cluster-trust-bundle-rules.js';
import { validateIssuerSpec } from '../../admission/issuer-rules.js';
import {
  validatePodCertificateRequestCreate,
  validatePodCertificateRequestStatusUpdate,
  validatePodCertificateRequestUpdate,
  withPodCertificateRequestDefaults,
} from '../../admission/pod-certificate-request-rules.js';
import { type Certificate, CertificateKind, type CertificateSpec } from '../../api/certificate.js';
import { type CertificateRequest, CertificateRequestKind } from '../../api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
} from '../../api/certificate-signing-request.js';
import { type ClusterTrustBundle, ClusterTrustBundleKind } from '../../api/cluster-trust-bundle.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../api/issuer.js';
import type { KubeObject } from '../../api/meta.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../api/pod-certificate-request.js';
import { validateCertificateSpec } from '../../certificates/certificate-validation.js';
import type { AdmissionHook } from '../../store/admission.js';
import { resourceNameOf } from '../../store/object-rules.js';

type Validator = (
  object: KubeObject,
  old: KubeObject | undefined,
  write: Parameters<AdmissionHook>[3],
) => readonly string[];

const certificateRules: Validator = (object, _old, write) =>
  write === 'status'
    ? []
    : validateCertificateSpec((object as Certificate).spec ?? ({} as CertificateSpec));

// cert-manager's webhook validation; its identity and approval plugins have no place here:
// embedded mode has one user, who may do everything (README, "Admission").
const certificateRequestRules: Validator = (object, old) =>
  old
    ? validateCertificateRequestUpdate(object as CertificateRequest, old as CertificateRequest)
    : validateCertificateRequestCreate(object as CertificateRequest);

// cert-manager validates an Issuer's spec on create and update; a status write leaves it alone.
const issuerRules: Validator = (object, _old, write) =>
  write === 'status' ? [] : validateIssuerSpec((object as Issuer).spec);

// The API server's own PodCertificateRequest strategy: create validation (identity fields,
// key material and its proof of possession), spec immutable, status checked against the
// request (ValidatePodCertificateRequestStatusUpdate).
const podCertificateRequestRules: Validator = (object, old, write) => {
  if (!old || write === 'create') {
    return validatePodCertificateRequestCreate(
      withPodCertificateRequestDefaults(object as PodCertificateRequest),
    );
  }
  const next = withPodCertificateRequestDefaults(object as PodCertificateRequest);
  const stored = withPodCertificateRequestDefaults(old as PodCertificateRequest);
  return write === 'status'
    ? validatePodCertificateRequestStatusUpdate(next, stored, new Date())
    : validatePodCertificateRequestUpdate(next, stored);
};

// Kubernetes' CSR rules, with one difference: the store has no approval subresource, so a
// status write may approve or deny (README, "CertificateSigningRequests").
const certificateSigningRequestRules: Validator = (object, old, write) => {
  const csr = object as CertificateSigningRequest;
  if (!old || write === 'create') return validateCsrCreate(csr);
  const stored = old as CertificateSigningRequest;
  return write === 'status'
    ? csrStatusErrors(csr, stored, { approval: true, certificate: true })
    : csrSpecChangeErrors(csr, stored);
};

const clusterTrustBundleRules: Validator = (object, old) => {
  const bundle = object as ClusterTrustBundle;
  return old
    ? validateClusterTrustBundleUpdate(bundle, old as ClusterTrustBundle)
    : validateClusterTrustBundle(bundle);
};

// What a cluster refuses on a write, per resource (`plural.group`): in embedded mode there is
// no webhook and no API server, so the store runs these itself.
const validators: ReadonlyMap<string, Validator> = new Map<string, Validator>([
  [resourceNameOf(CertificateKind), certificateRules],
  [resourceNameOf(CertificateRequestKind), certificateRequestRules],
  [resourceNameOf(IssuerKind), issuerRules],
  [resourceNameOf(ClusterIssuerKind), issuerRules],
  [resourceNameOf(PodCertificateRequestKind), podCertificateRequestRules],
  [resourceNameOf(CertificateSigningRequestKind), certificateSigningRequestRules],
  [resourceNameOf(ClusterTrustBundleKind), clusterTrustBundleRules],
]);

/**
 * The embedded store's admission: cert-manager's webhook validation for Certificates
 * (validateCertificateSpec), CertificateRequests (create, update and status writes) and
 * Issuers/ClusterIssuers (create and update), Kubernetes' rules for PodCertificateRequest
 * updates and status writes, CertificateSigningRequest writes and ClusterTrustBundles; every
 * other kind is admitted as
 * written.
 */
export const embeddedAdmission: AdmissionHook = (kind, object, old, write) =>
  validators.get(resourceNameOf(kind))?.(object, old, write) ?? [];
