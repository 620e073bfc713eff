import {
  CERTIFICATE_NAME_ANNOTATION,
  type Certificate,
  CertificateCondition,
} from '../api/certificate.js';
import { isConditionTrue } from '../api/conditions.js';
import type { Secret } from '../api/secret.js';
import { compareCodeUnits } from '../base/code-unit-order.js';
import { issuanceBackoffUntil } from './issuance-backoff.js';
import {
  type PolicyInput,
  PolicyReason,
  statusTimeText,
  triggerViolation,
} from './policy-chains.js';

/** How long a Certificate that does not own its shared secretName waits before looking again. */
export const NOT_OWNER_RECHECK_MS = 3 * 60_000;

/**
 * Which of the Certificates with one secretName owns the Secret (cert-manager's
 * CertificateOwnsSecret): the one its certificate-name annotation names, if among them; else
 * the oldest, by creationTimestamp then name.
 */
export function secretOwner(
  sharing: readonly Certificate[],
  secret: Secret | undefined,
): string | undefined {
  const named = secret?.metadata.annotations?.[CERTIFICATE_NAME_ANNOTATION];
  if (named !== undefined && sharing.some((c) => c.metadata.name === named)) return named;
  // RFC 3339 timestamps of one format sort as times; names as Go compares them.
  const oldest = [...sharing].sort(
    (a, b) =>
      compareCodeUnits(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') ||
      compareCodeUnits(a.metadata.name, b.metadata.name),
  )[0];
  return oldest?.metadata.name;
}

/** What cert-manager's trigger controller does in one sync. */
export type TriggerDecision =
  /** Already issuing (by the trigger or by hand): nothing. */
  | { action: 'none' }
  /** Another Certificate owns the shared Secret: look again later. */
  | { action: 'not-owner'; recheckAfterMs: number }
  /** Failed issuances hold it back until then. */
  | { action: 'back-off'; until: Date }
  /** Up to date; look again at the renewal time, if there is one ahead. */
  | { action: 'up-to-date'; recheckAt: Date | undefined }
  /** Set Issuing=True with this reason and message, after a Warning event when one is given. */
  | {
      action: 'issue';
      reason: string;
      message: string;
      recheckAt: Date | undefined;
      warning?: { reason: string; message: string };
    };

/**
 * Decides whether a Certificate needs issuing now: not while Issuing=True, not unless it owns
 * its Secret, not while backing off after failures (unless the spec changed since the next
 * request), then by the trigger chain. The renewal time in the status is when to look again.
 */
export function triggerDecision(
  input: PolicyInput & {
    sharingSecret: readonly Certificate[];
    nextRequestChanged: boolean;
    minimumBackoffMs: number;
    maximumBackoffMs: number;
  },
): TriggerDecision {
  const { certificate, now } = input;
  const status = certificate.status;
  if (isConditionTrue(status?.conditions, CertificateCondition.Issuing)) return { action: 'none' };
  if (secretOwner(input.sharingSecret, input.secret) !== certificate.metadata.name)
    return { action: 'not-owner', recheckAfterMs: NOT_OWNER_RECHECK_MS };
  const until = issuanceBackoffUntil({
    lastFailureTime: status?.lastFailureTime,
    failedIssuanceAttempts: status?.failedIssuanceAttempts,
    nextRequestChanged: input.nextRequestChanged,
    now,
    minimumMs: input.minimumBackoffMs,
    maximumMs: input.maximumBackoffMs,
  });
  if (until) return { action: 'back-off', until };
  const renewal = status?.renewalTime ? new Date(status.renewalTime) : undefined;
  const recheckAt = renewal && renewal.getTime() >= now.getTime() ? renewal : undefined;
  const found = triggerViolation(input);
  if (!found) return { action: 'up-to-date', recheckAt };
  if (found.reason === PolicyReason.WindowError)
    // cert-manager renews anyway at the desired time, and says so twice: a Warning with the
    // windows' error, and Issuing as an ordinary renewal.
    return {
      action: 'issue',
      reason: PolicyReason.Renewing,
      message: `Renewing certificate without satisfying renewal windows at: ${statusTimeText(status?.renewalTime)}`,
      recheckAt,
      warning: {
        reason: PolicyReason.WindowError,
        message: `Renewing certificate without satisfying renewal windows due to ${found.message}`,
      },
    };
  return { action: 'issue', reason: found.reason, message: found.message, recheckAt };
}
