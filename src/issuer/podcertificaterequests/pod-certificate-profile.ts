import type { KeyObject } from 'node:crypto';
import type { CertificateSubject } from '../../pki/certificate.js';
import { encodeSubjectAltNames } from '../../pki/san.js';
import { subjectToDer } from '../../pki/subject.js';
import type { SigningRequest } from '../signing-request.js';

/** The SPIFFE ID of a pod's service account: `spiffe://<trust-domain>/ns/<namespace>/sa/<name>`. */
export function spiffeIdOf(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/**
 * What a pod certificate holds (docs/pod-certificates.md): the requested key, an empty
 * subject, the SPIFFE ID as its only SAN (critical, as RFC 5280 wants with an empty subject),
 * digital signature (plus key encipherment for RSA keys) and both TLS usages. Nothing else
 * is taken from the request: only the identity kubelet vouched for is certified.
 */
export function podSigningRequest(options: {
  publicKey: KeyObject;
  /** publicKey's SubjectPublicKeyInfo as the request encoded it, copied into the certificate. */
  spkiDer?: Uint8Array;
  spiffeId: string;
  durationMs: number;
}): SigningRequest {
  const subject: CertificateSubject = {
    publicKey: options.publicKey,
    ...(options.spkiDer ? { spkiDer: options.spkiDer } : {}),
    subjectDer: subjectToDer({}),
    sanExtension: { critical: true, der: encodeSubjectAltNames({ uris: [options.spiffeId] }) },
  };
  const rsa = options.publicKey.asymmetricKeyType === 'rsa';
  return {
    subject,
    durationMs: options.durationMs,
    isCA: false,
    usages: [
      'digital signature',
      ...(rsa ? ['key encipherment'] : []),
      'server auth',
      'client auth',
    ],
    certSignForCA: false,
    boundedByIssuer: true,
  };
}

const TRUST_DOMAIN = /^[a-z0-9._-]+$/;

/** Why text cannot be a SPIFFE trust domain (lowercase letters, digits, `.`, `-`, `_`; at most 255), or undefined. */
export function trustDomainProblem(text: string): string | undefined {
  if (text.length === 0) return 'must not be empty';
  if (text.length > 255) return 'must be at most 255 characters';
  if (!TRUST_DOMAIN.test(text)) {
    return "may contain only lowercase letters, digits, '.', '-' and '_'";
  }
  return undefined;
}
