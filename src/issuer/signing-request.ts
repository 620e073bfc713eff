import type { KeyObject } from 'node:crypto';
import type { CertificateSubject } from '../pki/certificate.js';

/** A Secret by namespace and name. */
export interface SecretRef {
  namespace: string;
  name: string;
}

/** Where the SelfSigned issuer finds the private key that signs a request. */
export type SelfSignedKey =
  /** `tls.key` of this Secret. */
  | { secret: SecretRef }
  /** A key this process holds for the request (the embedded node plugin's in-flight keys). */
  | { key: KeyObject };

/** What any request API asks an issuer to sign, once read from its own object. */
export interface SigningRequest {
  /** Public key, subject and SAN/NameConstraints extensions, from a CSR or built by the API. */
  subject: CertificateSubject;
  durationMs: number;
  isCA: boolean;
  /** cert-manager usage names; empty means `digital signature, key encipherment`. */
  usages: readonly string[];
  /** Whether isCA adds `cert sign` (CertificateRequests: yes; Kubernetes CSRs: no). */
  certSignForCA: boolean;
  /**
   * Whether the certificate must not outlive the CA that signs it (pod certificates: a
   * PodCertificateRequest's times are checked by the API server). cert-manager's APIs do not
   * clamp (cert-manager/cert-manager#5864).
   */
  boundedByIssuer?: boolean;
}

/**
 * A request of some API on its way to an issuer. Its fields are read only when the issuer
 * has checked its own key material, because cert-manager reports a missing CA Secret before
 * a malformed CSR; read() rejects when the request cannot be signed as written.
 */
export interface SigningInput {
  read(): Promise<SigningRequest>;
  /** The key a SelfSigned issuer signs with; undefined when the request names none. */
  selfSignedKey?: SelfSignedKey;
}
