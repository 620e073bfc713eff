import type { Issuer } from '../api/issuer.js';
import type { Secret } from '../api/secret.js';
import type { SigningResult } from './signing-outcome.js';
import type { SigningInput } from './signing-request.js';

/** What an issuer reads while it signs. */
export interface SigningContext {
  /** A Secret from the cache; undefined when it does not exist. */
  secret(namespace: string, name: string): Secret | undefined;
  /** Where the issuer's Secrets live: its own namespace, or the cluster resource namespace. */
  resourceNamespace(issuer: Issuer): string;
  now: Date;
}

/** Signs requests of any API for one issuer type; never throws for a request's or a Secret's fault. */
export type IssuerSigner = (
  issuer: Issuer,
  input: SigningInput,
  context: SigningContext,
) => Promise<SigningResult>;
