import { formatGoDuration } from '../pki/duration.js';

/**
 * The shortest time a volume's certificate may be asked to live before its renewal is due.
 * Shorter, a renewal (key, CSR, signing, writing: up to seconds on a busy node or a remote
 * issuer) cannot finish before the certificate expires, and renewals follow each other
 * without pause. Far below cert-manager's 1h minimum for a Certificate, so short-lived test
 * certificates still work (the renewal tests use 12 s, the crash trials 6 s).
 */
export const MIN_RENEWAL_WINDOW_MS = 5_000;

/** Which attribute leaves no room for a renewal, and why; undefined when both do. */
export interface RenewalWindowProblem {
  name: 'duration' | 'renew-before';
  detail: string;
}

/**
 * Checks that a certificate of durationMs with renewBeforeMs (when set) is due for renewal
 * no sooner than MIN_RENEWAL_WINDOW_MS after issuance. A renew-before at or above the
 * duration is ignored for a third of the lifetime (csi-driver's calculateNextIssuanceTime), so only
 * a shorter one is checked.
 */
export function renewalWindowProblem(
  durationMs: number,
  renewBeforeMs: number | undefined,
): RenewalWindowProblem | undefined {
  const floor = formatGoDuration(MIN_RENEWAL_WINDOW_MS);
  if (durationMs < MIN_RENEWAL_WINDOW_MS) {
    return {
      name: 'duration',
      detail: `duration must be at least ${floor}: a shorter certificate cannot be renewed before it expires`,
    };
  }
  if (renewBeforeMs === undefined || renewBeforeMs >= durationMs) return undefined;
  if (durationMs - renewBeforeMs >= MIN_RENEWAL_WINDOW_MS) return undefined;
  return {
    name: 'renew-before',
    detail: `renew-before must be at least ${floor} shorter than the duration (${formatGoDuration(durationMs)}), so a renewal is not due at once`,
  };
}
