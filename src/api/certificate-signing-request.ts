import type { KubeObject, ResourceKind } from './meta.js';

/** Kubernetes' own certificate request (certificates.k8s.io/v1, GA since 1.19), cluster-scoped. */
export const CertificateSigningRequestKind: ResourceKind = {
  group: 'certificates.k8s.io',
  version: 'v1',
  kind: 'CertificateSigningRequest',
  plural: 'certificatesigningrequests',
  namespaced: false,
};

/**
 * What a requester asks for. `request` is the base64 of a PEM PKCS#10 request; the user
 * fields are set by the API server from whoever created the object and cannot be forged.
 */
export interface CertificateSigningRequestSpec {
  request: string;
  signerName: string;
  expirationSeconds?: number;
  /** certificates.k8s.io key usage names (the same 23 spellings as cert-manager's). */
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** One condition of a CSR (certificates/v1 CertificateSigningRequestCondition). */
export interface CsrCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

/** Approval (the /approval subresource) and the signer's answer (the /status subresource). */
export interface CertificateSigningRequestStatus {
  conditions?: CsrCondition[];
  /** The base64 of the issued PEM chain, leaf first; immutable once set. */
  certificate?: string;
}

export interface CertificateSigningRequest extends KubeObject {
  spec: CertificateSigningRequestSpec;
  status?: CertificateSigningRequestStatus;
}

/** Condition types: set by an approver (Approved, Denied) or by the signer (Failed). */
export const CSR_CONDITION_APPROVED = 'Approved';
export const CSR_CONDITION_DENIED = 'Denied';
export const CSR_CONDITION_FAILED = 'Failed';

/**
 * cert-manager's experimental annotations on a CSR (pkg/apis/experimental/v1alpha1): the
 * requested duration as a Go duration string (it wins over spec.expirationSeconds), whether to
 * issue a CA certificate (only the exact value "true"), and the Secret holding the key a
 * SelfSigned issuer signs with.
 */
export const CSR_DURATION_ANNOTATION = 'experimental.cert-manager.io/request-duration';
export const CSR_IS_CA_ANNOTATION = 'experimental.cert-manager.io/request-is-ca';
export const CSR_PRIVATE_KEY_SECRET_ANNOTATION =
  'experimental.cert-manager.io/private-key-secret-name';

/** The shortest certificate cert-manager signs for a CSR, as the API's expirationSeconds minimum: 600 s. */
export const CSR_MINIMUM_DURATION_MS = 600_000;

/** Every key usage certificates.k8s.io/v1 accepts (its validation's allValidUsages). */
export const CSR_KEY_USAGES: readonly string[] = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
];

/**
 * True when the CSR has a condition of that type, whatever its status: cert-manager's checks
 * (and the API, which allows only True for Approved, Denied and Failed) look at the type only.
 */
export function hasCsrCondition(csr: CertificateSigningRequest, type: string): boolean {
  return (csr.status?.conditions ?? []).some((condition) => condition.type === type);
}
