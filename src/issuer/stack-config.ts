import type { KeyObject } from 'node:crypto';
import { type AccessReviewer, allowEveryone } from '../controller/access-reviewer.js';
import { type ApprovalPolicy, approveEveryRequest } from './certificaterequests/approval-policy.js';
import { createIssuerSigners, type IssuerSigners } from './issuer-signers.js';

/** cert-manager's default namespace of ClusterIssuer Secrets. */
export const DEFAULT_CLUSTER_RESOURCE_NAMESPACE = 'kube-system';

/** The SPIFFE trust domain of pod certificates unless --trust-domain says otherwise. */
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';
/** The longest pod certificate unless --pod-certificate-max-duration says otherwise: 720h. */
export const DEFAULT_POD_CERTIFICATE_MAX_DURATION_MS = 720 * 3600 * 1000;

/** What the issuer controllers share: one value per process, given to every controller. */
export interface IssuerStackConfig {
  /** Namespace of ClusterIssuer Secrets. */
  clusterResourceNamespace: string;
  /** The approver's policy (cert-manager's: approve every request). */
  approval: ApprovalPolicy;
  /** One signer per issuer type, shared by every request API. */
  signers: IssuerSigners;
  /** Concurrent signings per signer controller; a signature runs on the main thread (src/pki/signing.ts), the rest of a signing awaits the store. */
  signingWorkers: number;
  /**
   * Touch (approve, sign, mark pending or denied) only requests whose issuer exists and is a
   * CA or SelfSigned issuer, so cert-manager or external issuers can own the other types.
   */
  ownIssuerTypesOnly: boolean;
  /** Trust domain of the SPIFFE ID a pod certificate carries. */
  trustDomain: string;
  /** Upper bound of a pod certificate's lifetime, below the request's maxExpirationSeconds. */
  podCertificateMaxDurationMs: number;
  /**
   * Answers whether a user may do something (the CSR signers' `reference` review): the
   * cluster's SubjectAccessReviews in `cert-csi controller`, everyone in embedded mode.
   */
  accessReviewer: AccessReviewer;
  /** Keys held in this process for in-flight requests (the embedded node plugin's). */
  privateKeyFor?: (namespace: string, name: string) => KeyObject | undefined;
}

/** A stack configuration with cert-manager's defaults for what is not given. */
export function issuerStackConfig(options: Partial<IssuerStackConfig> = {}): IssuerStackConfig {
  return {
    clusterResourceNamespace:
      options.clusterResourceNamespace ?? DEFAULT_CLUSTER_RESOURCE_NAMESPACE,
    approval: options.approval ?? approveEveryRequest,
    signers: options.signers ?? createIssuerSigners(),
    signingWorkers: options.signingWorkers ?? 4,
    ownIssuerTypesOnly: options.ownIssuerTypesOnly ?? false,
    trustDomain: options.trustDomain ?? DEFAULT_TRUST_DOMAIN,
    podCertificateMaxDurationMs:
      options.podCertificateMaxDurationMs ?? DEFAULT_POD_CERTIFICATE_MAX_DURATION_MS,
    // Embedded mode's answer; `cert-csi controller` asks the cluster instead.
    accessReviewer: options.accessReviewer ?? allowEveryone,
    ...(options.privateKeyFor ? { privateKeyFor: options.privateKeyFor } : {}),
  };
}
