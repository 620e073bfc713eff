import { performance } from 'node:perf_hooks';
import { type IssuanceFailureReason, publishFact } from '../../base/telemetry.js';
import type { IssuedCertificate } from '../issuance/certificate-files.js';
import { IssuanceError } from '../issuance/issuance-error.js';

/**
 * What the volume manager tells the rest of the process about its volumes (issuances begun
 * and ended, volumes managed and given up), as telemetry facts tagged with the node id: the
 * observability layer listens, the manager holds no metrics.
 */
export class VolumeTelemetry {
  constructor(readonly nodeId: string) {}

  /** Runs one issuance of the volume, telling its start and its end (outcome, duration). */
  async issuance(
    volumeId: string,
    work: () => Promise<IssuedCertificate>,
  ): Promise<IssuedCertificate> {
    const { nodeId } = this;
    publishFact('issuance', { phase: 'started', nodeId, volumeId });
    // Real elapsed time, not the manager's clock: tests jump that one.
    const began = performance.now();
    const seconds = () => (performance.now() - began) / 1000;
    try {
      const issued = await work();
      publishFact('issuance', {
        phase: 'succeeded',
        nodeId,
        volumeId,
        durationSeconds: seconds(),
        nextIssuanceTime: issued.nextIssuanceTime,
      });
      return issued;
    } catch (err) {
      publishFact('issuance', {
        phase: 'failed',
        nodeId,
        volumeId,
        durationSeconds: seconds(),
        reason: failureReason(err),
      });
      throw err;
    }
  }

  /** The volume is managed again (rediscovery): with its renewal time when it has one. */
  managed(volumeId: string, nextIssuanceTime: string | undefined): void {
    publishFact('volume', {
      change: 'managed',
      nodeId: this.nodeId,
      volumeId,
      ...(nextIssuanceTime ? { nextIssuanceTime: new Date(nextIssuanceTime) } : {}),
    });
  }

  /**
   * The volume's first publish since the plugin started found a usable certificate on disk and
   * mounted it: a re-issue avoided (after a restart, or a reboot with the data root on disk).
   */
  kept(volumeId: string): void {
    publishFact('volume', { change: 'kept', nodeId: this.nodeId, volumeId });
  }

  /** The volume was unpublished: nothing of it is managed any more. */
  unmanaged(volumeId: string): void {
    publishFact('volume', { change: 'unmanaged', nodeId: this.nodeId, volumeId });
  }
}

/** The bounded reason of a failed issuance: the one mapping from an error to a reason. */
export function failureReason(err: unknown): IssuanceFailureReason {
  return err instanceof IssuanceError ? err.reason : 'other';
}
