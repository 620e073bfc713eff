import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import type { Clock } from '../../base/clock.js';
import { TimerSet } from '../../base/timer-set.js';
import type { VolumeMetadata } from '../../volume/metadata.js';
import { nextAttempt } from '../policy/renewal-policy.js';

/**
 * One renewal timer per volume, armed at the time the renewal policy (nextAttempt) gives for
 * the volume's metadata; nothing polls.
 */
export class RenewalScheduler {
  private readonly timers: TimerSet;

  constructor(
    clock: Clock,
    /** Renewals are spread over a random delay of at most this much after the renewal time. */
    private readonly jitterMs: number,
    /** Called when a volume's timer fires, with the policy's reason. */
    private readonly renew: (volumeId: string, reason: string) => void,
  ) {
    this.timers = new TimerSet(clock);
  }

  /** Arms (or clears) the volume's timer from its metadata: the policy decides when. */
  schedule(
    volumeId: string,
    metadata: VolumeMetadata,
    spec: Pick<VolumeCertificateSpec, 'disableAutoRenew'>,
  ): void {
    const attempt = nextAttempt(metadata, {
      disableAutoRenew: spec.disableAutoRenew,
      jitterMs: this.jitterMs,
    });
    if (!attempt) {
      this.timers.cancel(volumeId);
      return;
    }
    this.timers.schedule(volumeId, attempt.at, () => {
      this.renew(volumeId, attempt.reason);
    });
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
