import type { Condition } from '../api/conditions.js';
import type { Issuer } from '../api/issuer.js';
import type { Secret } from '../api/secret.js';
import { errorMessage } from '../base/error-message.js';
import { readCAKeyPair } from './ca-issuer.js';

/** The Ready condition an issuer should have, and the event announcing it, if any. */
export interface IssuerReadiness {
  condition: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
  /** True when the cause may be transient (the Secret is missing): retry with backoff. */
  retry: boolean;
}

const GET_KEY_PAIR_ERROR = 'Error getting keypair for CA issuer: ';
export const KEY_PAIR_VERIFIED_MESSAGE = 'Signing CA verified';

/**
 * Checks an issuer of a type this stack runs as cert-manager's Setup does. `secret` is the CA
 * Secret from the resource namespace, or undefined when it does not exist.
 * Returns undefined for issuer types this stack does not run.
 */
export function issuerReadiness(
  issuer: Issuer,
  secret: (name: string) => Secret | undefined,
): IssuerReadiness | undefined {
  if (issuer.spec.selfSigned !== undefined && issuer.spec.selfSigned !== null) {
    // cert-manager's SelfSigned setup only sets this condition: it records no event (and an
    // event with an empty message said nothing).
    return {
      condition: { type: 'Ready', status: 'True', reason: 'IsReady', message: '' },
      retry: false,
    };
  }
  const ca = issuer.spec.ca;
  if (!ca) return undefined;
  const found = secret(ca.secretName);
  if (!found) {
    const message = `${GET_KEY_PAIR_ERROR}secrets "${ca.secretName}" not found`;
    return failure('ErrGetKeyPair', message, true);
  }
  let isCA: boolean;
  try {
    const pair = readCAKeyPair(found);
    isCA = pair.certificates[0]?.ca === true;
  } catch (err) {
    const message = `${GET_KEY_PAIR_ERROR}${errorMessage(err)}`;
    return failure('ErrGetKeyPair', message, true);
  }
  if (!isCA)
    return failure('ErrInvalidKeyPair', `${GET_KEY_PAIR_ERROR}certificate is not a CA`, false);
  return {
    condition: {
      type: 'Ready',
      status: 'True',
      reason: 'KeyPairVerified',
      message: KEY_PAIR_VERIFIED_MESSAGE,
    },
    event: { type: 'Normal', reason: 'KeyPairVerified', message: KEY_PAIR_VERIFIED_MESSAGE },
    retry: false,
  };
}

function failure(reason: string, message: string, retry: boolean): IssuerReadiness {
  return {
    condition: { type: 'Ready', status: 'False', reason, message },
    event: { type: 'Warning', reason, message },
    retry,
  };
}
