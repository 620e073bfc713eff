/** Exponential backoff after failed issuances (csi-lib: 30 s, ×2, +0-50 % jitter, 5 min cap). */
export interface BackoffPolicy {
  initialMs: number;
  factor: number;
  capMs: number;
  /** The delay is stretched by a random fraction in [0, jitter). */
  jitter: number;
}

/**
 * The wait after the n-th consecutive failure (n >= 1): initial × factor^(n-1), capped,
 * then stretched by jitter, like apimachinery's wait.Backoff that csi-lib uses.
 */
export function backoffDelay(
  failures: number,
  policy: BackoffPolicy,
  random = Math.random,
): number {
  const steps = Math.max(0, failures - 1);
  const base = Math.min(policy.capMs, policy.initialMs * policy.factor ** steps);
  return Math.round(base * (1 + policy.jitter * random()));
}

/**
 * csi-lib 0.11's two classes of failed attempt, each with its own backoff: a volume whose
 * pod does not pass the readiness gates yet (the gate backoff, --gate-backoff-*), and an
 * issuance that failed (the issuance backoff, 30 s doubling to 5 min).
 */
export type BackoffClass = 'gate' | 'issuance';

/** Consecutive failed attempts of each class, as their backoffs count them. */
export interface BackoffCounts {
  gate: number;
  issuance: number;
}

/**
 * The counts after one more failed attempt of a class: that class counts one more, and the
 * other starts afresh, as csi-lib resets the backoff of the class not hit when the error class
 * changes; so a run of gate waits never lengthens the wait after an issuance failure, nor the
 * other way round. A success starts both afresh.
 */
export function countFailedAttempt(counts: BackoffCounts, failed: BackoffClass): BackoffCounts {
  return failed === 'gate'
    ? { gate: counts.gate + 1, issuance: 0 }
    : { gate: 0, issuance: counts.issuance + 1 };
}

/** A retry after an issuance that succeeded but left a certificate due for renewal at once. */
export interface RetryAfterIssuance {
  /** Consecutive failures including this one. */
  failures: number;
  at: number;
  message: string;
}

/**
 * The least time a certificate must leave between the moment it was asked for and its
 * renewal time to count as a good issuance. Any certificate that honours the volume floor
 * (driver/renewal-window.ts: 5 s before renewal, or 2/3 of a 5 s lifetime) leaves more even
 * when its notBefore is truncated to the second below the request: 5 s * 2/3 - 1 s > 2 s.
 */
export const MIN_RENEWAL_LEAD_MS = 2_000;

/**
 * Undefined when a new certificate's renewal time lies ahead, or when it has passed only
 * because getting it took long (a short certificate signed slowly: renewing at once gets a
 * fresh one). When the issuer handed back a certificate due for renewal less than
 * MIN_RENEWAL_LEAD_MS after it was asked for (it shortened the duration below renew-before,
 * backdated it, or its clock runs ahead), renewing at once would get the same answer again
 * and again: the issuance counts as a failure and the next attempt waits for the backoff
 * after the previous failures.
 */
export function retryAfterIssuance(
  issued: { notAfter: Date; nextIssuanceTime: Date },
  /** When the request was asked for (its pending record's createdAt). */
  askedAt: number,
  previousFailures: number,
  now: number,
  policy: BackoffPolicy,
  random = Math.random,
): RetryAfterIssuance | undefined {
  const renewalAt = issued.nextIssuanceTime.getTime();
  if (renewalAt > now || renewalAt >= askedAt + MIN_RENEWAL_LEAD_MS) return undefined;
  const failures = previousFailures + 1;
  return {
    failures,
    at: now + backoffDelay(failures, policy, random),
    message:
      `the issued certificate is due for renewal at once (renewal time ${issued.nextIssuanceTime.toISOString()}, ` +
      `expiry ${issued.notAfter.toISOString()}): the issuer may have shortened its duration below renew-before; ` +
      'retrying after backoff',
  };
}
