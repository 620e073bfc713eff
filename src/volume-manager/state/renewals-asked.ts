/**
 * The volumes whose renewal on request (`cert-csi renew`, one volume or --all) is asked for
 * and not finished yet, which `cert-csi status` shows as pending. Counted per volume: two
 * requests for one volume overlap, and the volume stays asked until both are done. Holds one
 * entry per volume id asked, never more: the requests for a volume share it.
 */
export class RenewalsAsked {
  private readonly counts = new Map<string, number>();

  /** Marks the volumes asked for; each must be given back to done() once. */
  ask(volumeIds: readonly string[]): void {
    for (const id of volumeIds) this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
  }

  /** One request for the volume is finished (renewed, failed or refused). */
  done(volumeId: string): void {
    const count = this.counts.get(volumeId) ?? 0;
    if (count > 1) this.counts.set(volumeId, count - 1);
    else this.counts.delete(volumeId);
  }

  /** The volumes asked for now, sorted by id. */
  volumeIds(): string[] {
    return [...this.counts.keys()].sort();
  }
}
