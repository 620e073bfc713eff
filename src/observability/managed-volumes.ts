import { hashIdentifier } from '../api/labels.js';
import type { IssuanceFact, VolumeFact } from '../base/telemetry.js';

/**
 * The node's managed volumes as the volume manager reports them (issuances that succeeded,
 * rediscovery, unpublish), with each volume's renewal time: what the scrape needs of them,
 * kept in memory so no scrape reads a metadata.json.
 */
export class ManagedVolumes {
  /**
   * By volume id: its hash (the label its requests carry, computed once) and its renewal time
   * in Unix seconds, undefined while only a request is in flight.
   */
  private readonly volumes = new Map<string, { hash: string; next: number | undefined }>();

  constructor(private readonly nodeId: string) {}

  /** Takes in a volume manager fact; facts of other nodes (another plugin in the process) are ignored. */
  observe(fact: IssuanceFact | VolumeFact): void {
    if (fact.nodeId !== this.nodeId) return;
    if ('phase' in fact) {
      if (fact.phase === 'succeeded') this.set(fact.volumeId, seconds(fact.nextIssuanceTime));
      return;
    }
    // A kept certificate changes nothing here: rediscovery reported the volume managed.
    if (fact.change === 'kept') return;
    if (fact.change === 'unmanaged') this.volumes.delete(fact.volumeId);
    else this.set(fact.volumeId, fact.nextIssuanceTime && seconds(fact.nextIssuanceTime));
  }

  private set(volumeId: string, next: number | undefined): void {
    const hash = this.volumes.get(volumeId)?.hash ?? hashIdentifier(volumeId);
    this.volumes.set(volumeId, { hash, next });
  }

  /** How many volumes have a renewal time (csi-lib counts volumes with a nextIssuanceTime). */
  count(): number {
    let count = 0;
    for (const { next } of this.volumes.values()) if (next !== undefined) count++;
    return count;
  }

  /** Renewal times in Unix seconds by volume-id hash (the label a request carries). */
  renewalByVolumeHash(): Map<string, number> {
    const byHash = new Map<string, number>();
    for (const { hash, next } of this.volumes.values()) {
      if (next !== undefined) byHash.set(hash, next);
    }
    return byHash;
  }
}

function seconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
