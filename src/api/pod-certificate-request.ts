import type { Condition } from './conditions.js';
import type { KubeObject, ResourceKind } from './meta.js';

/**
 * Kubernetes' PodCertificateRequest (KEP-4317): `v1` from 1.37 (the only version a default
 * 1.37 cluster serves), `v1beta1` in 1.35 and 1.36. The same fields in both, except that v1
 * has no pkixPublicKey/proofOfPossession and requires stubPKCS10Request.
 */
export const PodCertificateRequestKind: ResourceKind = {
  group: 'certificates.k8s.io',
  version: 'v1',
  versions: ['v1', 'v1beta1'],
  kind: 'PodCertificateRequest',
  plural: 'podcertificaterequests',
  namespaced: true,
};

/** What kubelet asks for; every field is immutable after create. Byte fields are base64. */
export interface PodCertificateRequestSpec {
  signerName: string;
  podName: string;
  podUID: string;
  serviceAccountName: string;
  serviceAccountUID: string;
  nodeName: string;
  nodeUID: string;
  maxExpirationSeconds?: number;
  /** DER SubjectPublicKeyInfo (1.34/1.35 kubelets; deprecated in 1.36; not in v1). */
  pkixPublicKey?: string;
  /** The pod UID signed with the subject key (1.34/1.35 kubelets; not in v1). */
  proofOfPossession?: string;
  /** An empty DER PKCS#10 request signed by the subject key (1.36+ kubelets; required in v1). */
  stubPKCS10Request?: string;
  unverifiedUserAnnotations?: Record<string, string>;
}

/** The signer's answer: exactly one terminal condition, and the chain with its times when issued. */
export interface PodCertificateRequestStatus {
  conditions?: Condition[];
  certificateChain?: string;
  notBefore?: string;
  beginRefreshAt?: string;
  notAfter?: string;
}

export interface PodCertificateRequest extends KubeObject {
  spec: PodCertificateRequestSpec;
  status?: PodCertificateRequestStatus;
}

/** The three terminal condition types; a request carries at most one of them. */
export const PCR_CONDITION_ISSUED = 'Issued';
export const PCR_CONDITION_DENIED = 'Denied';
export const PCR_CONDITION_FAILED = 'Failed';
export const PCR_TERMINAL_CONDITIONS: readonly string[] = [
  PCR_CONDITION_ISSUED,
  PCR_CONDITION_DENIED,
  PCR_CONDITION_FAILED,
];

/** API-defined reasons. */
export const PCR_REASON_UNSUPPORTED_KEY_TYPE = 'UnsupportedKeyType';
export const PCR_REASON_INVALID_USER_ANNOTATIONS = 'InvalidUnverifiedUserAnnotations';

/** The API server's default and bounds of spec.maxExpirationSeconds (1 h to 91 days). */
export const PCR_DEFAULT_MAX_EXPIRATION_SECONDS = 86_400;
export const PCR_MIN_EXPIRATION_SECONDS = 3_600;
export const PCR_MAX_EXPIRATION_SECONDS = 7_862_400;
/** An issued status's notBefore must lie within this of the API server's clock. */
export const PCR_NOT_BEFORE_SKEW_SECONDS = 300;
/** beginRefreshAt must lie this far inside [notBefore, notAfter] on both sides. */
export const PCR_REFRESH_MARGIN_SECONDS = 600;

/** The terminal condition of a request, if it has one. */
export function terminalConditionOf(request: PodCertificateRequest): Condition | undefined {
  return request.status?.conditions?.find(
    (c) => PCR_TERMINAL_CONDITIONS.includes(c.type) && c.status === 'True',
  );
}
