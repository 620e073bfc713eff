import type { ErrorKind } from '../../base/error-catalogue.js';
import type { IssuanceErrorReason } from '../../base/telemetry.js';

// Each reason its own kind: a CSI client (kubelet, `cert-csi publish`) tells them by gRPC code.
const issuanceKinds: Record<IssuanceErrorReason, ErrorKind> = {
  denied: 'CERT_CSI_ISSUANCE_DENIED',
  failed: 'CERT_CSI_ISSUANCE_FAILED',
  timeout: 'CERT_CSI_ISSUANCE_TIMED_OUT',
  aborted: 'CERT_CSI_ISSUANCE_ABORTED',
  'invalid-certificate': 'CERT_CSI_ISSUED_CERTIFICATE_INVALID',
};

/** Why an issuance ended without a certificate; its kind follows its reason. */
export class IssuanceError extends Error {
  constructor(
    message: string,
    readonly reason: IssuanceErrorReason,
  ) {
    super(message);
    this.name = 'IssuanceError';
  }

  get errorKind(): ErrorKind {
    return issuanceKinds[this.reason];
  }
}

/** Throws the IssuanceError of an aborted signal: its deadline passed, or the volume went. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

/** An abort of the issuance's signal as the IssuanceError the driver maps; others unchanged. */
export function asIssuanceError(err: unknown, signal: AbortSignal): unknown {
  if (!signal.aborted || err instanceof IssuanceError || err !== signal.reason) return err;
  return abortError(signal);
}

// A deadline aborts with a TimeoutError; an unpublish (or a stop) with anything else.
function abortError(signal: AbortSignal): IssuanceError {
  const timedOut = signal.reason instanceof Error && signal.reason.name === 'TimeoutError';
  return timedOut
    ? new IssuanceError('timed out before the CertificateRequest was created', 'timeout')
    : new IssuanceError('issuance aborted: the volume was unpublished', 'aborted');
}
