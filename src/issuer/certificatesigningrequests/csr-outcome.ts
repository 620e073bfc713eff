import { CSR_PRIVATE_KEY_SECRET_ANNOTATION } from '../../api/certificate-signing-request.js';
import type { IssuerType } from '../../api/issuer.js';
import { errorMessage } from '../../base/error-message.js';
import { goQuote } from '../../base/go-text.js';
import type { SigningOutcome } from '../signing-outcome.js';

/** A signing outcome as a CSR signer reports it. */
export type CsrResult =
  /** status.certificate = the chain (leaf and intermediates: the CSR API has no CA field). */
  | { outcome: 'issued'; chainPem: string; message: string }
  /** A Warning event; the CSR waits for the Secret to appear or change. */
  | { outcome: 'wait'; reason: string; message: string }
  /** The Failed condition and a Warning event of the same reason: final. */
  | { outcome: 'failed'; reason: string; message: string };

/**
 * cert-manager's CSR reasons and messages for every signing outcome (certificatesigningrequests
 * ca.go and selfsigned.go): the only place they are written. A missing or unusable Secret
 * waits; anything wrong with the request or the signature fails.
 */
export function csrResult(issuerType: IssuerType, outcome: SigningOutcome): CsrResult {
  const ca = issuerType === 'ca';
  switch (outcome.kind) {
    case 'issued':
      return {
        outcome: 'issued',
        chainPem: outcome.chainPem,
        message: ca
          ? 'Certificate fetched from issuer successfully'
          : 'Certificate self signed successfully',
      };
    case 'caSecretMissing': {
      const { namespace, name } = outcome.secret;
      return wait('SecretMissing', `Referenced secret ${namespace}/${name} not found`);
    }
    case 'caSecretInvalid': {
      const { namespace, name } = outcome.secret;
      return wait(
        'SecretInvalidData',
        `Failed to parse signing CA keypair from secret ${namespace}/${name}: ${errorMessage(outcome.cause)}`,
      );
    }
    case 'keySecretMissing': {
      const { namespace, name } = outcome.secret;
      return wait('SecretNotFound', `Referenced Secret ${namespace}/${name} not found`);
    }
    case 'keySecretInvalid': {
      const { namespace, name } = outcome.secret;
      return wait(
        'ErrorParsingKey',
        `Failed to parse signing key from secret ${namespace}/${name}: ${errorMessage(outcome.cause)}`,
      );
    }
    case 'keyNotReferenced':
      return failed(
        'MissingAnnotation',
        `Missing private key reference annotation: ${goQuote(CSR_PRIVATE_KEY_SECRET_ANNOTATION)}`,
      );
    case 'requestInvalid':
      return failed(
        ca ? 'SigningError' : 'ErrorGenerating',
        `Error generating certificate template: ${errorMessage(outcome.cause)}`,
      );
    case 'keyMismatch':
      return failed(
        'ErrorKeyMatch',
        'Referenced private key in Secret does not match that in the request',
      );
    case 'signingFailed':
      return failed(
        ca ? 'SigningError' : 'ErrorSigning',
        `Error signing certificate: ${errorMessage(outcome.cause)}`,
      );
  }
}

function wait(reason: string, message: string): CsrResult {
  return { outcome: 'wait', reason, message };
}

function failed(reason: string, message: string): CsrResult {
  return { outcome: 'failed', reason, message };
}
