import type { VolumeMetadata } from '../../volume/metadata.js';
import type { ReadinessVerdict } from '../readiness/pod-readiness.js';

// "Why does this volume (re)issue now", in one place. The operations gather the facts (what
// woke the volume, what its metadata.json says, what its pod's readiness says, its attributes'
// flags, the time), call reissueDecision, and do what it says.

/** Why a volume's timer is armed; the renewal it fires carries the same reason. */
export type TimerReason = 'renewal time' | 'retry after failure' | 'never issued';

/** What metadata.json says of a volume, as far as its next issuance goes. */
export type VolumeRecord = Pick<
  VolumeMetadata,
  | 'nextIssuanceTime'
  | 'notAfter'
  | 'failures'
  | 'nextRetryTime'
  | 'pendingRequest'
  | 'waiting'
  | 'podIPs'
>;

/** The renewal jitter: at most maxMs, drawn with draw in [0, 1). */
export interface Jitter {
  maxMs: number;
  draw: number;
}

/** What woke the volume, with the facts the decision needs for it. */
export type ReissueInput =
  /** A NodePublishVolume, first or again (record: undefined before anything was written). */
  | {
      event: 'publish';
      record: VolumeRecord | undefined;
      /** Whether this process watches the volume's pod (it is waiting for it). */
      podWatched: boolean;
      /** The pod's readiness now ({ready: true} when no gate applies to the volume). */
      readiness: ReadinessVerdict;
      /** False when the pod can never change (embedded mode): waiting would be forever. */
      canWait: boolean;
      now: number;
    }
  /** `cert-csi renew` (or a replaced CA): whatever the renewal time and the backoff say. */
  | {
      event: 'manual';
      /** Whether this process manages the volume. */
      managed: boolean;
      /** Whether a publish of the volume runs now. */
      publishRunning: boolean;
      record: VolumeRecord | undefined;
    }
  /** A renewal asked for a reason: its timer, `cert-csi renew`, or a pod change. */
  | { event: 'renewal'; reason: string; readiness: ReadinessVerdict }
  /** The volume's pod changed, or its gate retry is due. */
  | { event: 'pod-change'; record: VolumeRecord; readiness: ReadinessVerdict }
  /** The trust bundle the volume follows changed. */
  | { event: 'trust-bundle-change'; hasCertificate: boolean }
  /** The plugin started and found the volume on disk. */
  | { event: 'restart'; record: VolumeRecord; disableAutoRenew: boolean; jitter: Jitter }
  /** An issuance or a failed attempt ended, or a republish found no timer: when is the next. */
  | { event: 'settled'; record: VolumeRecord; disableAutoRenew: boolean; jitter: Jitter };

/** What to do with the volume now. */
export type ReissueDecision =
  /**
   * Issue a new certificate (a new key unless reuse-private-key) now. The reason is the
   * timer's, 'publish', 'manual request', 'pod ready' or 'pod IPs changed'; podIPs are those
   * to expand ${POD_IP} and ${POD_IPS} with, when the volume uses them.
   */
  | { action: 'issue'; reason: string; podIPs?: string[] | undefined }
  /** Arm the volume's timer: a time in the past means at once. */
  | { action: 'schedule'; at: number; reason: TimerReason }
  /** Issue nothing until the pod is ready; the pod's changes and the gate retry look again. */
  | { action: 'wait-for-pod'; reason: string }
  /** Refuse: a publish whose pod is not ready and never will be, a manual renewal of nothing. */
  | { action: 'refuse'; reason: string }
  /** A republish of a volume whose certificate is usable: only its mount. */
  | { action: 'mount-only' }
  /** A republish of a volume waiting for its pod: its (empty) mount, still waiting. */
  | { action: 'keep-waiting'; reason: string }
  /** Write the new CA file (and the JKS stores trusting it) beside the same key and certificate. */
  | { action: 'rewrite-trust-files' }
  /** Not taken back at start: it never got anything, and kubelet publishes it again. */
  | { action: 'leave-to-kubelet' }
  /** Nothing to issue, and no timer. */
  | { action: 'nothing'; why: string };

// The actions each event can lead to.
interface Outcomes {
  publish: 'issue' | 'wait-for-pod' | 'refuse' | 'mount-only' | 'keep-waiting';
  manual: 'issue' | 'refuse';
  renewal: 'issue' | 'wait-for-pod';
  'pod-change': 'issue' | 'wait-for-pod' | 'nothing';
  'trust-bundle-change': 'rewrite-trust-files' | 'nothing';
  restart: 'leave-to-kubelet' | 'schedule' | 'nothing';
  settled: 'schedule' | 'nothing';
}

/** The decisions an event can lead to. */
export type DecisionFor<E extends ReissueInput['event']> = Extract<
  ReissueDecision,
  { action: Outcomes[E] }
>;

/** The one answer to "why does this volume (re)issue now", from plain facts. */
export function reissueDecision<I extends ReissueInput>(input: I): DecisionFor<I['event']> {
  // Each case returns a DecisionFor its event (the helpers' types say so): the switch cannot
  // carry the narrowing of I back to the result type.
  return decide(input) as DecisionFor<I['event']>;
}

function decide(input: ReissueInput): ReissueDecision {
  switch (input.event) {
    case 'publish':
      return publishDecision(input);
    case 'manual':
      return manualDecision(input);
    case 'renewal':
      return renewalDecision(input.reason, input.readiness);
    case 'pod-change':
      return podChangeDecision(input.record, input.readiness);
    case 'trust-bundle-change':
      return trustBundleDecision(input.hasCertificate);
    case 'restart':
      return restartDecision(input);
    case 'settled':
      return nextAttempt(input);
  }
}

// A republish of a usable or waiting volume only mounts (kubelet republishes often); any other
// publish issues when the pod lets it, waits for the pod when it may, and is refused otherwise.
function publishDecision(
  input: Extract<ReissueInput, { event: 'publish' }>,
): DecisionFor<'publish'> {
  const { record, readiness } = input;
  if (record?.waiting && input.podWatched) {
    return { action: 'keep-waiting', reason: record.waiting.reason };
  }
  if (record && isUsable(record, input.now)) return { action: 'mount-only' };
  if (!readiness.ready) {
    return input.canWait
      ? { action: 'wait-for-pod', reason: readiness.reason }
      : { action: 'refuse', reason: readiness.reason };
  }
  return { action: 'issue', reason: 'publish', podIPs: readiness.podIPs };
}

// A manual renewal renews any managed volume that holds a certificate, now. A first publish
// still in flight has none: renewing would only wait for the same request (up to its
// deadline) and hold up `renew --all`.
function manualDecision(input: Extract<ReissueInput, { event: 'manual' }>): DecisionFor<'manual'> {
  if (!input.managed) return { action: 'refuse', reason: 'not a volume managed by this plugin' };
  if (input.publishRunning && !input.record?.nextIssuanceTime) {
    return {
      action: 'refuse',
      reason: 'its first publish is still in progress: no certificate to renew yet',
    };
  }
  return { action: 'issue', reason: 'manual request' };
}

// Whatever asked for a renewal (its timer, a manual request, a pod change), a pod not ready waits.
function renewalDecision(reason: string, readiness: ReadinessVerdict): DecisionFor<'renewal'> {
  if (!readiness.ready) return { action: 'wait-for-pod', reason: readiness.reason };
  return { action: 'issue', reason, podIPs: readiness.podIPs };
}

// A waiting volume is issued once its pod is ready; an issued one again when its pod's IPs are
// no longer those its certificate names.
function podChangeDecision(
  record: VolumeRecord,
  readiness: ReadinessVerdict,
): DecisionFor<'pod-change'> {
  if (record.waiting) {
    if (!readiness.ready) return { action: 'wait-for-pod', reason: readiness.reason };
    return { action: 'issue', reason: 'pod ready' };
  }
  if (readiness.podIPs && !sameList(readiness.podIPs, record.podIPs ?? [])) {
    return { action: 'issue', reason: 'pod IPs changed' };
  }
  return { action: 'nothing', why: 'nothing its certificate names changed' };
}

// A new bundle is trusted without a new key or request: only the trust files change.
function trustBundleDecision(hasCertificate: boolean): DecisionFor<'trust-bundle-change'> {
  if (!hasCertificate) return { action: 'nothing', why: 'its issuance writes the bundle' };
  return { action: 'rewrite-trust-files' };
}

// At start a volume that never got anything (no certificate, no request in flight, not waiting
// for its pod) is left to kubelet, which publishes it again; the others are timed as after an
// attempt: one due (or overdue) at once, the others at their time.
function restartDecision(
  input: Extract<ReissueInput, { event: 'restart' }>,
): DecisionFor<'restart'> {
  const { record } = input;
  if (!record.nextIssuanceTime && !record.pendingRequest && !record.waiting) {
    return { action: 'leave-to-kubelet' };
  }
  return nextAttempt(input);
}

// After a failure, at the backoff's retry time; a volume without a certificate at once; else
// at the renewal time plus a random spread of at most the jitter, so volumes issued together
// do not all renew in the same second. disable-auto-renew volumes holding a certificate never.
function nextAttempt(input: {
  record: VolumeRecord;
  disableAutoRenew: boolean;
  jitter: Jitter;
}): DecisionFor<'settled'> {
  const { record } = input;
  if ((record.failures ?? 0) > 0 && record.nextRetryTime) {
    return {
      action: 'schedule',
      at: Date.parse(record.nextRetryTime),
      reason: 'retry after failure',
    };
  }
  if (!record.nextIssuanceTime) return { action: 'schedule', at: 0, reason: 'never issued' };
  if (input.disableAutoRenew) return { action: 'nothing', why: 'disable-auto-renew' };
  const spread = Math.floor(input.jitter.draw * input.jitter.maxMs);
  return {
    action: 'schedule',
    at: Date.parse(record.nextIssuanceTime) + spread,
    reason: 'renewal time',
  };
}

/** A volume whose certificate is on disk and not yet expired (no expiry recorded: not usable). */
function isUsable(record: VolumeRecord, now: number): boolean {
  return record.nextIssuanceTime !== undefined && Date.parse(record.notAfter ?? '') > now;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
