import type { IssuerType } from '../../api/issuer.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../../api/labels.js';
import { withCause } from '../../base/error-message.js';
import type { SigningOutcome } from '../signing-outcome.js';

/** A signing outcome as a CertificateRequest reports it: Ready=True, Pending or Failed. */
export type RequestResult =
  | { outcome: 'issued'; certificatePem: string; caPem: string }
  | { outcome: 'pending' | 'failed'; reason: string; message: string };

export const EMPTY_ISSUER_DN_WARNING =
  'Certificate will be issued with an empty Issuer DN, which contravenes RFC 5280 and could break some strict clients';

/**
 * cert-manager's CertificateRequest reasons and messages for every signing outcome (its
 * certificaterequests ca.go and selfsigned.go): the only place they are written. Problems with a
 * Secret are Pending (it may appear or be fixed); problems with the request are Failed.
 */
export function requestResult(issuerType: IssuerType, outcome: SigningOutcome): RequestResult {
  const ca = issuerType === 'ca';
  switch (outcome.kind) {
    case 'issued':
      return { outcome: 'issued', certificatePem: outcome.chainPem, caPem: outcome.caPem };
    case 'caSecretMissing':
    case 'keySecretMissing': {
      const { namespace, name } = outcome.secret;
      return pending(
        outcome.kind === 'caSecretMissing' ? 'SecretMissing' : 'MissingSecret',
        withCause(
          `Referenced secret ${namespace}/${name} not found`,
          `secrets "${name}" not found`,
        ),
      );
    }
    case 'caSecretInvalid': {
      const { namespace, name } = outcome.secret;
      return pending(
        'SecretInvalidData',
        withCause(
          `Failed to parse signing CA keypair from secret ${namespace}/${name}`,
          outcome.cause,
        ),
      );
    }
    case 'keySecretInvalid': {
      const { namespace, name } = outcome.secret;
      return pending(
        'ErrorParsingKey',
        withCause(
          `Failed to get key "${namespace}/${name}" referenced in annotation "${PRIVATE_KEY_SECRET_NAME_ANNOTATION}"`,
          outcome.cause,
        ),
      );
    }
    case 'keyNotReferenced':
      return failed(
        'MissingAnnotation',
        withCause(
          `Annotation "${PRIVATE_KEY_SECRET_NAME_ANNOTATION}" missing or reference empty`,
          'secret name missing',
        ),
      );
    case 'requestInvalid':
      return failed(
        ca ? 'SigningError' : 'ErrorGenerating',
        withCause('Error generating certificate template', outcome.cause),
      );
    case 'keyMismatch':
      return failed(
        'ErrorKeyMatch',
        'Error generating certificate template: CSR not signed by referenced private key',
      );
    case 'signingFailed':
      return failed(
        ca ? 'SigningError' : 'ErrorSigning',
        withCause('Error signing certificate', outcome.cause),
      );
  }
}

function pending(reason: string, message: string): RequestResult {
  return { outcome: 'pending', reason, message };
}

function failed(reason: string, message: string): RequestResult {
  return { outcome: 'failed', reason, message };
}
