import type { VolumeMetadata } from '../volume/metadata.js';

/** Exponential backoff after failed issuances (csi-lib: 30 s, ×2, +0-50 % jitter, 5 min cap). */
export interface BackoffPolicy {
  initialMs: number;
  factor: number;
  capMs: number;
  /** The delay is stretched by a random fraction in [0, jitter). */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 30_000,
  factor: 2,
  capMs: 300_000,
  jitter: 0.5,
};

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

/** When a volume should next be (re)issued, and why; undefined when it never should. */
export interface NextAttempt {
  at: number;
  reason: 'retry after failure' | 'renewal time' | 'never issued';
}

/**
 * The one place that answers "why is this volume renewed now": after a failure, at the
 * backoff's retry time; else at the certificate's renewal time plus a random spread of at
 * most jitterMs, so volumes issued together do not all renew in the same second.
 * disable-auto-renew volumes are never renewed once they hold a certificate.
 */
export function nextAttempt(
  metadata: Pick<VolumeMetadata, 'nextIssuanceTime' | 'nextRetryTime' | 'failures'>,
  options: { disableAutoRenew: boolean; jitterMs: number; random?: () => number },
): NextAttempt | undefined {
  const random = options.random ?? Math.random;
  if ((metadata.failures ?? 0) > 0 && metadata.nextRetryTime) {
    return { at: Date.parse(metadata.nextRetryTime), reason: 'retry after failure' };
  }
  if (!metadata.nextIssuanceTime) return { at: 0, reason: 'never issued' };
  if (options.disableAutoRenew) return undefined;
  const spread = options.jitterMs > 0 ? Math.floor(random() * options.jitterMs) : 0;
  return { at: Date.parse(metadata.nextIssuanceTime) + spread, reason: 'renewal time' };
}
