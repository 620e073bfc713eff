import type { SecretRef } from './signing-request.js';

/**
 * What an issuer made of a request, in terms of no request API: each API (CertificateRequest,
 * CertificateSigningRequest, PodCertificateRequest) maps these kinds to its own states,
 * reasons and messages in one place.
 */
export type SigningOutcome =
  | { kind: 'issued'; chainPem: string; caPem: string }
  /** CA issuer: its Secret does not exist (yet). */
  | { kind: 'caSecretMissing'; secret: SecretRef }
  /** CA issuer: its Secret holds no usable key pair. */
  | { kind: 'caSecretInvalid'; secret: SecretRef; cause: unknown }
  /** SelfSigned issuer: the request names no key. */
  | { kind: 'keyNotReferenced' }
  /** SelfSigned issuer: the key's Secret does not exist (yet). */
  | { kind: 'keySecretMissing'; secret: SecretRef }
  /** SelfSigned issuer: the key's Secret holds no usable key. */
  | { kind: 'keySecretInvalid'; secret: SecretRef; cause: unknown }
  /** The request cannot be signed as written (bad CSR, duration or usage). */
  | { kind: 'requestInvalid'; cause: unknown }
  /** SelfSigned issuer: the key is not the one the request's public key belongs to. */
  | { kind: 'keyMismatch' }
  | { kind: 'signingFailed'; cause: unknown };

/** Something worth telling the requester although signing went on. */
export type SigningWarning = 'emptyIssuerDn';

/** An outcome and the warnings met on the way. */
export type SigningResult = SigningOutcome & { warnings?: readonly SigningWarning[] };
