import type { RenewOutcome, RenewTarget, UnsavedFailure } from './control/control-protocol.js';
import type { IssuedCertificate } from './issuance/certificate-files.js';
import {
  type VolumeManagerOptions,
  type VolumeManagerWiring,
  wireVolumeManager,
} from './manager-wiring.js';
import { renewNow } from './operations/manual-renewal.js';
import { publishVolume } from './operations/publish-volume.js';
import { type RediscoveryCounts, rediscoverVolumes } from './operations/rediscovery.js';
import { unpublishVolume } from './operations/unpublish-volume.js';
import type { TrustBundleSources } from './trust-bundles/trust-bundle-sources.js';
import type {
  PublishRequest,
  PublishResult,
  UnpublishOutcome,
  VolumePublisher,
} from './volume-publisher.js';

export type { VolumeManagerOptions } from './manager-wiring.js';

/**
 * Publishes, renews and unpublishes volumes. First issuance runs inside NodePublishVolume;
 * afterwards one timer per volume fires at its renewal time (no polling). Every issuance,
 * first or renewal, ends at its deadline, creates its request under one global concurrency
 * limit (the wait for the signature holds no slot), is single-flight per volume, resumes a
 * request persisted in the volume dir, and never writes after an unpublish. The work itself
 * lives in one module per operation (publish-volume, renew-volume, manual-renewal,
 * unpublish-volume, rediscovery, pod-change), each given the dependencies it declares
 * (manager-wiring.ts builds them once); what each does and when is the reissue decision's.
 */
export class VolumeManager implements VolumePublisher {
  private readonly parts: VolumeManagerWiring;
  private stopRequested = false;
  private started = false;

  constructor(options: VolumeManagerOptions) {
    this.parts = wireVolumeManager(options);
  }

  /** The trust bundles the volumes follow: what each source resolves to now (status, tests). */
  get trustBundleSources(): TrustBundleSources {
    return this.parts.trustBundleSources;
  }

  /**
   * Watches this node's requests and takes back every volume on disk. The data root must be
   * claimed and prepared first (claimDataRoot): one process manages it.
   */
  async start(signal?: AbortSignal): Promise<RediscoveryCounts> {
    if (this.stopRequested) throw new Error('volume manager stopped before it started');
    await this.parts.tracker.start(signal);
    await this.parts.readiness.start(signal);
    const counts = await rediscoverVolumes(this.parts.rediscovery);
    this.started = true;
    return counts;
  }

  /**
   * Stops timers and watches, aborts what waits, and resolves once the trust-bundle rewrites
   * already running have finished and every reload notification (a POST, a retry wait) is
   * cancelled, so nothing writes or POSTs after it (the node releases the data
   * root's lock then). Files and mounts stay for the next start. The informers belong to
   * whoever created them (they may serve the controllers too) and are stopped by them.
   */
  async stop(): Promise<void> {
    this.stopRequested = true;
    this.started = false;
    this.parts.scheduler.clear();
    this.parts.readiness.stop();
    this.parts.registry.abortAll(new Error('plugin stopping'));
    this.parts.trustBundleSources.stop();
    await this.parts.trustBundles.settled();
    // After the rewrites: one finishing now would otherwise start a POST no one cancels.
    await this.parts.reloader.stop();
  }

  /** True once start() finished. */
  isReady(): boolean {
    return this.started;
  }

  /** How many renewal timers are armed (for status and benchmarks). */
  get scheduledRenewals(): number {
    return this.parts.scheduler.size;
  }

  /** The last failure of each volume whose metadata.json could not record it, by volume id. */
  unsavedFailures(): UnsavedFailure[] {
    return this.parts.failures.unsavedFailures();
  }

  /** The volumes whose renewal on request (renewNow) is asked for and not finished yet. */
  renewalsAsked(): string[] {
    return this.parts.manual.asked.volumeIds();
  }

  /**
   * Publishes a volume; concurrent calls for one volume share one issuance. A publish with
   * other attributes, another volume capability or another target than the published volume
   * is refused (RepublishConflictError); one that meets an unpublish of the volume is aborted.
   * A refused publish leaves nothing behind, in memory or on disk.
   */
  publish(request: PublishRequest): Promise<PublishResult> {
    return publishVolume(this.parts.publish, request);
  }

  /**
   * Renews one managed volume now (the timer's callback, or a manual request); resolves
   * undefined when the volume is gone or the renewal failed (recorded for the backoff).
   */
  renew(volumeId: string, reason: string): Promise<IssuedCertificate | undefined> {
    return this.parts.renew(volumeId, reason);
  }

  /**
   * Renews on request (`cert-csi renew`), whatever the renewal time and backoff say; progress
   * gets the outcome so far each time a volume is done.
   */
  renewNow(
    target: RenewTarget,
    progress: (soFar: RenewOutcome) => void = () => {},
  ): Promise<RenewOutcome> {
    return renewNow(this.parts.manual, target, progress);
  }

  /**
   * Unpublishes: stops work on the volume, unmounts, removes its directory; only the target
   * recorded for the volume is touched. A publish running meanwhile is aborted and waited for.
   * Resolves with what was done (nothing, for another target or an unknown volume).
   */
  unpublish(volumeId: string, targetPath: string): Promise<UnpublishOutcome> {
    return unpublishVolume(this.parts.unpublish, volumeId, targetPath);
  }
}
