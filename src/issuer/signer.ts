import type { KeyObject } from 'node:crypto';
import type { CertificateRequest } from '../api/certificate-request.js';
import type { EventRecorder } from '../api/event.js';
import type { Issuer } from '../api/issuer.js';
import type { Secret } from '../api/secret.js';

/** What a signer can read and report while it signs one request. */
export interface SignContext {
  /** A Secret from the cache; undefined when it does not exist. */
  secret(namespace: string, name: string): Secret | undefined;
  /** Where the issuer's Secrets live: its own namespace, or the cluster resource namespace. */
  resourceNamespace(issuer: Issuer): string;
  events: EventRecorder;
  now: Date;
  /**
   * The private key of a request whose key lives in this process (the embedded node
   * plugin's in-flight requests); lets SelfSigned sign without a key Secret.
   */
  privateKeyFor?: (namespace: string, name: string) => KeyObject | undefined;
}

/** The result of one signing attempt; a thrown error means "retry with backoff". */
export type SignOutcome =
  | { outcome: 'issued'; certificatePem: string; caPem: string }
  | { outcome: 'pending'; reason: string; message: string }
  | { outcome: 'failed'; reason: string; message: string };

/** Signs requests for one issuer type. */
export type Signer = (
  request: CertificateRequest,
  issuer: Issuer,
  context: SignContext,
) => Promise<SignOutcome>;
