const HOUR_MS = 3_600_000;

/** cert-manager's default --certificate-request-minimum-backoff-duration (1h). */
export const DEFAULT_MINIMUM_BACKOFF_MS = HOUR_MS;
/** cert-manager's default --certificate-request-maximum-backoff-duration (32h). */
export const DEFAULT_MAXIMUM_BACKOFF_MS = 32 * HOUR_MS;

/** What the trigger knows when it decides whether failed issuances hold it back. */
export interface BackoffInput {
  /** status.lastFailureTime (RFC 3339). */
  lastFailureTime?: string | undefined;
  /** status.failedIssuanceAttempts. */
  failedIssuanceAttempts?: number | undefined;
  /** A next request exists that cannot be decoded or no longer matches the spec. */
  nextRequestChanged: boolean;
  now: Date;
  minimumMs: number;
  maximumMs: number;
}

/**
 * The delay after the last failure: minimum * 2^(attempts-1), the maximum when that leaves
 * [minimum, maximum], the minimum for no or non-positive attempts (as cert-manager's trigger).
 */
export function backoffDelayMs(
  failedIssuanceAttempts: number | undefined,
  minimumMs: number,
  maximumMs: number,
): number {
  let delay = minimumMs;
  if (failedIssuanceAttempts !== undefined && failedIssuanceAttempts > 0) {
    const computed = minimumMs * 2 ** (failedIssuanceAttempts - 1);
    delay = computed < minimumMs || computed > maximumMs ? maximumMs : computed;
  }
  return Math.max(delay, minimumMs);
}

/**
 * When issuance may next be attempted after failed issuances, or undefined when it may be
 * attempted now: no failure recorded, a changed spec (compared with the next request), a
 * non-positive minimum, or the delay has passed since the last failure.
 */
export function issuanceBackoffUntil(input: BackoffInput): Date | undefined {
  if (input.lastFailureTime === undefined) return undefined;
  if (input.nextRequestChanged) return undefined;
  if (input.minimumMs <= 0) return undefined;
  const lastFailure = Date.parse(input.lastFailureTime);
  // An unreadable time cannot hold issuance back forever.
  if (Number.isNaN(lastFailure)) return undefined;
  const delay = backoffDelayMs(input.failedIssuanceAttempts, input.minimumMs, input.maximumMs);
  if (input.now.getTime() - lastFailure >= delay) return undefined;
  return new Date(lastFailure + delay);
}
