import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { EventRecorder } from '../../src/api/event.js';
import type { Issuer, IssuerType } from '../../src/api/issuer.js';
import {
  EMPTY_ISSUER_DN_WARNING,
  type RequestResult,
  requestResult,
} from '../../src/issuer/certificaterequests/request-outcome.js';
import { signingInputOf } from '../../src/issuer/certificaterequests/request-signing.js';
import type { IssuerSigner, SigningContext } from '../../src/issuer/issuer-signer.js';

/** A signing context plus where a BadConfig warning goes, as the CR controller reports it. */
export type RequestSigningContext = SigningContext & { events?: EventRecorder };

/**
 * Signs a CertificateRequest the way the CertificateRequest controllers do, without the
 * controller: the request read through its adapter, signed by an issuer's signer, the outcome
 * mapped to the request's reasons and messages, an empty-subject warning recorded as an event.
 */
export async function signAsRequest(
  signer: IssuerSigner,
  issuerType: IssuerType,
  request: CertificateRequest,
  issuer: Issuer,
  context: RequestSigningContext,
): Promise<RequestResult> {
  const signed = await signer(issuer, signingInputOf(request), context);
  if (signed.warnings?.includes('emptyIssuerDn')) {
    context.events?.event(request, 'Warning', 'BadConfig', EMPTY_ISSUER_DN_WARNING);
  }
  return requestResult(issuerType, signed);
}
