import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import type { Clock } from '../../base/clock.js';
import { TimerSet } from '../../base/timer-set.js';
import type { VolumeMetadata } from '../../volume/metadata.js';
import { type ReissueDecision, reissueDecision } from '../policy/reissue-decision.js';

/**
 * One renewal timer per volume, armed where the reissue decision says for the volume's
 * metadata (with this node's renewal jitter); nothing polls.
 */
export class RenewalScheduler {
  private readonly timers: TimerSet;

  constructor(
    clock: Clock,
    /** Renewals are spread over a random delay of at most this much after the renewal time. */
    private readonly jitterMs: number,
    /** Called when a volume's timer fires, with the decision's reason. */
    private readonly renew: (volumeId: string, reason: string) => void,
  ) {
    this.timers = new TimerSet(clock);
  }

  /** The decision for the volume's timer at start (restart) or after an attempt (settled). */
  plan(
    event: 'restart' | 'settled',
    metadata: VolumeMetadata,
    spec: Pick<VolumeCertificateSpec, 'disableAutoRenew'>,
  ): ReissueDecision {
    return reissueDecision({
      event,
      record: metadata,
      disableAutoRenew: spec.disableAutoRenew,
      jitter: { maxMs: this.jitterMs, draw: Math.random() },
    });
  }

  /** Arms the volume's timer as decided; any other decision clears it. */
  arm(volumeId: string, decision: ReissueDecision): void {
    if (decision.action !== 'schedule') {
      this.timers.cancel(volumeId);
      return;
    }
    this.timers.schedule(volumeId, decision.at, () => {
      this.renew(volumeId, decision.reason);
    });
  }

  /** Arms (or clears) the volume's timer from its metadata after an attempt: the policy decides when. */
  schedule(
    volumeId: string,
    metadata: VolumeMetadata,
    spec: Pick<VolumeCertificateSpec, 'disableAutoRenew'>,
  ): void {
    this.arm(volumeId, this.plan('settled', metadata, spec));
  }

  /** Clears the volume's timer, if any. */
  cancel(volumeId: string): void {
    this.timers.cancel(volumeId);
  }

  /** True when the volume's timer is armed. */
  has(volumeId: string): boolean {
    return this.timers.has(volumeId);
  }

  /** Clears every timer. */
  clear(): void {
    this.timers.clear();
  }

  /** How many timers are armed. */
  get size(): number {
    return this.timers.size;
  }
}
