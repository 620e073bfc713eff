import type { KeyObject } from 'node:crypto';
import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import type { Logger } from '../api/logger.js';
import { type Clock, systemClock } from '../base/clock.js';
import type { SharedInformers } from '../controller/shared-informers.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { DataRoot } from '../volume/data-root.js';
import type { Mounter } from '../volume/mounter.js';
import type { RenewOutcome, RenewTarget, UnsavedFailure } from './control/control-protocol.js';
import type { IssuanceCheck } from './issuance/issuance-check.js';
import type { IssuedCertificate } from './issuance/obtain-certificate.js';
import { RequestTracker } from './issuance/request-tracker.js';
import { VolumeIssuance } from './issuance/volume-issuance.js';
import type { ManagerParts } from './manager-parts.js';
import { renewNow } from './operations/manual-renewal.js';
import { publishVolume } from './operations/publish-volume.js';
import { type RediscoveryCounts, rediscoverVolumes } from './operations/rediscovery.js';
import { renewVolume } from './operations/renew-volume.js';
import { unpublishVolume } from './operations/unpublish-volume.js';
import { type BackoffPolicy, DEFAULT_BACKOFF } from './policy/renewal-policy.js';
import {
  DEFAULT_READINESS,
  PodReadiness,
  type ReadinessOptions,
} from './readiness/pod-readiness.js';
import { contextPodSource, type PodSource } from './readiness/pod-source.js';
import { podChanged } from './readiness/waiting-volume.js';
import { FailureRecorder } from './state/failure-recorder.js';
import { RenewalScheduler } from './state/renewal-scheduler.js';
import { VolumeRegistry } from './state/volume-registry.js';
import { VolumeTelemetry } from './telemetry/volume-telemetry.js';
import { TrustBundleSources } from './trust-bundles/trust-bundle-sources.js';
import { TrustBundleVolumes } from './trust-bundles/trust-bundle-volumes.js';
import type {
  PublishRequest,
  PublishResult,
  UnpublishOutcome,
  VolumePublisher,
} from './volume-publisher.js';

export interface VolumeManagerOptions {
  store: ResourceStore;
  /** The process's informers; the node's CertificateRequests come from its request informer. */
  informers: SharedInformers;
  /**
   * Keys of this node's requests in flight by `namespace/name`, written here and read by an
   * in-process SelfSigned signer (embedded mode); private to the manager when absent.
   */
  pendingKeys?: Map<string, KeyObject>;
  nodeId: string;
  dataRoot: DataRoot;
  mounter: Mounter;
  logger: Logger;
  clock?: Clock;
  /** How long one issuance may wait for its certificate (kubelet's own timeout is 2 min). */
  attemptTimeoutMs?: number;
  /** At most this many issuances at once; more wait their turn instead of flooding the issuer. */
  maxConcurrentIssuances?: number;
  /** Renewals are spread over a random delay of at most this much after the renewal time. */
  renewalJitterMs?: number;
  backoff?: BackoffPolicy;
  /** Told after each certificate written (first issuance or renewal); for metrics and tests. */
  onIssued?: (volumeId: string, issued: IssuedCertificate, reason: string) => void;
  /** Told when a publish or renewal fails (not when it was cut short by an unpublish). */
  onFailed?: (volumeId: string, volumeContext: Record<string, string>, err: unknown) => void;
  /**
   * The store that creates a volume's CertificateRequest, from the pod's service-account
   * tokens of its latest publish (`--use-token-request`); throws when they are unusable.
   * Without it the plugin's own store creates requests.
   */
  requestCreator?: (serviceAccountTokens: string | undefined) => ResourceStore;
  /**
   * Where volumes' pods are read, for readiness gates and ${POD_IP}: the node's pod informer
   * in Kubernetes mode; by default the volume context (embedded mode).
   */
  podSource?: PodSource;
  /** --continue-on-not-ready, --pod-readiness-gate and --gate-backoff-*. */
  readiness?: ReadinessOptions;
  /** What a first publish must pass besides its attributes (embedded mode: the issuer's consent). */
  issuanceCheck?: IssuanceCheck;
}

const DEFAULT_ATTEMPT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_CONCURRENT_ISSUANCES = 4;

/**
 * Publishes, renews and unpublishes volumes. First issuance runs inside NodePublishVolume;
 * afterwards one timer per volume fires at its renewal time (no polling). Every issuance,
 * first or renewal, ends at its deadline, creates its request under one global concurrency
 * limit (the wait for the signature holds no slot), is single-flight per volume, resumes a
 * request persisted in the volume dir, and never writes after an unpublish. The work itself
 * lives in one module per operation (publish-volume, renew-volume, manual-renewal,
 * unpublish-volume, rediscovery) over the parts built here.
 */
export class VolumeManager implements VolumePublisher {
  private readonly tracker: RequestTracker;
  private readonly parts: ManagerParts;
  /** The trust bundles the volumes follow: what each source resolves to now (status, tests). */
  readonly trustBundleSources: TrustBundleSources;
  private stopRequested = false;
  private started = false;

  constructor(options: VolumeManagerOptions) {
    const clock = options.clock ?? systemClock;
    const { dataRoot, logger } = options;
    this.tracker = new RequestTracker(
      options.informers.informer<CertificateRequest>(CertificateRequestKind),
      options.nodeId,
    );
    const registry = new VolumeRegistry();
    let trustBundles: TrustBundleVolumes | undefined;
    // Its own informers, one per watched source, started by the first volume that uses it.
    this.trustBundleSources = new TrustBundleSources(options.store, {
      clock,
      onError: (err) => logger.warn({ err: err.message }, 'trust bundle watch failed; retrying'),
      onChange: (volumeIds) => trustBundles?.changed(volumeIds),
    });
    trustBundles = new TrustBundleVolumes(
      { dataRoot, mounter: options.mounter, logger, registry },
      this.trustBundleSources,
    );
    const telemetry = new VolumeTelemetry(options.nodeId);
    const failures = new FailureRecorder({
      dataRoot,
      registry,
      clock,
      logger,
      backoff: options.backoff ?? DEFAULT_BACKOFF,
    });
    this.parts = {
      dataRoot,
      mounter: options.mounter,
      logger,
      clock,
      registry,
      failures,
      trustBundles,
      telemetry,
      scheduler: new RenewalScheduler(clock, options.renewalJitterMs ?? 0, (volumeId, reason) => {
        void this.renew(volumeId, reason);
      }),
      issuance: new VolumeIssuance({
        store: options.store,
        tracker: this.tracker,
        pendingKeys: options.pendingKeys ?? new Map(),
        nodeId: options.nodeId,
        dataRoot,
        registry,
        failures,
        trustBundles,
        logger,
        clock,
        attemptTimeoutMs: options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
        maxConcurrentIssuances: options.maxConcurrentIssuances ?? DEFAULT_MAX_CONCURRENT_ISSUANCES,
        requestCreator: options.requestCreator,
        telemetry,
      }),
      ...(options.issuanceCheck ? { issuanceCheck: options.issuanceCheck } : {}),
      onIssued: options.onIssued ?? (() => {}),
      onFailed: options.onFailed ?? (() => {}),
      readiness: new PodReadiness(
        options.podSource ?? contextPodSource,
        options.readiness ?? DEFAULT_READINESS,
        clock,
        (volumeId) => {
          void podChanged(this.parts, volumeId, (id, reason) => this.renew(id, reason));
        },
      ),
    };
  }

  /**
   * Watches this node's requests and takes back every volume on disk. The data root must be
   * claimed and prepared first (claimDataRoot): one process manages it.
   */
  async start(signal?: AbortSignal): Promise<RediscoveryCounts> {
    if (this.stopRequested) throw new Error('volume manager stopped before it started');
    await this.tracker.start(signal);
    await this.parts.readiness.start(signal);
    const counts = await rediscoverVolumes(this.parts);
    this.started = true;
    return counts;
  }

  /**
   * Stops timers and waits; files and mounts stay for the next start. The informers belong to
   * whoever created them (they may serve the controllers too) and are stopped by them.
   */
  stop(): void {
    this.stopRequested = true;
    this.started = false;
    this.parts.scheduler.clear();
    this.parts.readiness.stop();
    this.parts.registry.abortAll(new Error('plugin stopping'));
    this.trustBundleSources.stop();
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

  /**
   * Publishes a volume; concurrent calls for one volume share one issuance. A publish with
   * other attributes, another volume capability or another target than the published volume
   * is refused (RepublishConflictError); one that meets an unpublish of the volume is aborted.
   * A refused publish leaves nothing behind, in memory or on disk.
   */
  publish(request: PublishRequest): Promise<PublishResult> {
    return publishVolume(this.parts, request);
  }

  /**
   * Renews one managed volume now (the timer's callback, or a manual request); resolves
   * undefined when the volume is gone or the renewal failed (recorded for the backoff).
   */
  renew(volumeId: string, reason: string): Promise<IssuedCertificate | undefined> {
    return renewVolume(this.parts, volumeId, reason);
  }

  /**
   * Renews on request (`cert-csi renew`), whatever the renewal time and backoff say; progress
   * gets the outcome so far each time a volume is done.
   */
  renewNow(
    target: RenewTarget,
    progress: (soFar: RenewOutcome) => void = () => {},
  ): Promise<RenewOutcome> {
    return renewNow(this.parts, target, progress);
  }

  /**
   * Unpublishes: stops work on the volume, unmounts, removes its directory; only the target
   * recorded for the volume is touched. A publish running meanwhile is aborted and waited for.
   * Resolves with what was done (nothing, for another target or an unknown volume).
   */
  unpublish(volumeId: string, targetPath: string): Promise<UnpublishOutcome> {
    return unpublishVolume(this.parts, volumeId, targetPath);
  }
}
