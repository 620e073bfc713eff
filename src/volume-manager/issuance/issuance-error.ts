/** Why an issuance ended without a certificate; the driver maps it to a gRPC code. */
export class IssuanceError extends Error {
  constructor(
    message: string,
    readonly reason: 'denied' | 'failed' | 'timeout' | 'aborted' | 'invalid-certificate',
  ) {
    super(message);
    this.name = 'IssuanceError';
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
