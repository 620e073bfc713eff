import type { KeyObject } from 'node:crypto';
import { access, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit, { type LimitFunction } from 'p-limit';
import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import type { Logger } from '../api/logger.js';
import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import { specFromVolumeContext } from '../attributes/stored-spec.js';
import { type Clock, systemClock } from '../base/clock.js';
import { Deadline } from '../base/deadline.js';
import { errorMessage } from '../base/error-message.js';
import { KeyedMutex } from '../base/keyed-mutex.js';
import type { SharedInformers } from '../controller/shared-informers.js';
import { decodePrivateKey } from '../pki/keys.js';
import type { ResourceStore } from '../store/resource-store.js';
import { writeAtomically } from '../volume/atomic-writer.js';
import type { DataRoot } from '../volume/data-root.js';
import {
  readMetadata,
  type VolumeFailure,
  type VolumeMetadata,
  writeMetadata,
} from '../volume/metadata.js';
import type { Mounter } from '../volume/mounter.js';
import { checkPublishTarget, unpublishScope } from '../volume/target-path.js';
import {
  readPkcs12Password,
  removePendingKey,
  writePkcs12Password,
} from '../volume/volume-secrets.js';
import {
  deleteRequestsOfVolume,
  IssuanceError,
  type IssuedCertificate,
  obtainCertificate,
} from './issuance.js';
import type { RenewOutcome, RenewTarget } from './renew-requests.js';
import {
  type BackoffPolicy,
  backoffDelay,
  DEFAULT_BACKOFF,
  nextAttempt,
  retryAfterIssuance,
} from './renewal-policy.js';
import {
  type PublishedVolume,
  RepublishConflictError,
  republishDifferences,
} from './republish-check.js';
import { RequestTracker } from './request-tracker.js';
import type { UnsavedFailure } from './status-socket.js';
import { TimerSet } from './timer-set.js';
import type { PublishRequest, PublishResult, VolumePublisher } from './volume-publisher.js';

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
}

/** A volume this process manages. */
interface VolumeState {
  /** Aborted by unpublish: stops any wait and forbids further writes. */
  abort: AbortController;
}

const DEFAULT_ATTEMPT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_CONCURRENT_ISSUANCES = 4;

/**
 * Publishes, renews and unpublishes volumes. First issuance runs inside NodePublishVolume;
 * afterwards one timer per volume fires at its renewal time (no polling). Every issuance,
 * first or renewal, ends at its deadline, creates its request under one global concurrency
 * limit (the wait for the signature holds no slot), is single-flight per volume, resumes a
 * request persisted in the volume dir, and never writes after an unpublish.
 */
export class VolumeManager implements VolumePublisher {
  private readonly tracker: RequestTracker;
  private readonly clock: Clock;
  private readonly timers: TimerSet;
  private readonly limit: LimitFunction;
  private readonly publishing = new Map<
    string,
    { request: PublishRequest; work: Promise<PublishResult> }
  >();
  /** Volumes with an unpublish under way (a count: two unpublishes may overlap). */
  private readonly unpublishing = new Map<string, number>();
  private readonly renewing = new Map<string, Promise<IssuedCertificate | undefined>>();
  private readonly tokens = new Map<string, string>();
  /** Failures metadata.json could not take (a full data root), for `cert-csi status`. */
  private readonly unsaved = new Map<string, UnsavedFailure>();
  private stopRequested = false;
  private readonly states = new Map<string, VolumeState>();
  private readonly locks = new KeyedMutex();
  private readonly pendingKeys: Map<string, KeyObject>;
  private started = false;

  constructor(private readonly options: VolumeManagerOptions) {
    this.clock = options.clock ?? systemClock;
    this.tracker = new RequestTracker(
      options.informers.informer<CertificateRequest>(CertificateRequestKind),
      options.nodeId,
    );
    this.pendingKeys = options.pendingKeys ?? new Map();
    this.timers = new TimerSet(this.clock);
    this.limit = pLimit(options.maxConcurrentIssuances ?? DEFAULT_MAX_CONCURRENT_ISSUANCES);
  }

  /**
   * Watches this node's requests and takes back every volume on disk. The data root must be
   * claimed and prepared first (claimDataRoot): one process manages it.
   */
  async start(signal?: AbortSignal): Promise<{ managed: number; corrupt: number }> {
    if (this.stopRequested) throw new Error('volume manager stopped before it started');
    await this.tracker.start(signal);
    const counts = await this.rediscover();
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
    this.timers.clear();
    for (const state of this.states.values()) state.abort.abort(new Error('plugin stopping'));
  }

  /** True once start() finished. */
  isReady(): boolean {
    return this.started;
  }

  /** How many renewal timers are armed (for status and benchmarks). */
  get scheduledRenewals(): number {
    return this.timers.size;
  }

  /** The last failure of each volume whose metadata.json could not record it, by volume id. */
  unsavedFailures(): UnsavedFailure[] {
    return [...this.unsaved.values()].sort((a, b) => a.volumeId.localeCompare(b.volumeId));
  }

  /**
   * Publishes a volume; concurrent calls for one volume share one issuance. A publish with
   * other attributes or another target than the published volume is refused
   * (RepublishConflictError); one that meets an unpublish of the volume is aborted.
   */
  publish(request: PublishRequest): Promise<PublishResult> {
    const { volumeId } = request;
    if (this.unpublishing.has(volumeId)) return Promise.reject(unpublishingError());
    const running = this.publishing.get(volumeId);
    if (running) {
      const differences = republishDifferences(asPublished(running.request), asPublished(request));
      if (differences.length > 0) {
        return Promise.reject(new RepublishConflictError(volumeId, differences));
      }
      this.keepTokens(request);
      return running.work;
    }
    const work = this.publishOnce(request).finally(() => {
      this.publishing.delete(volumeId);
    });
    this.publishing.set(volumeId, { request, work });
    return work;
  }

  // kubelet refreshes tokens by republishing (requiresRepublish): keep the newest of an
  // accepted publish.
  private keepTokens(request: PublishRequest): void {
    if (request.serviceAccountTokens !== undefined) {
      this.tokens.set(request.volumeId, request.serviceAccountTokens);
    }
  }

  private async publishOnce(request: PublishRequest): Promise<PublishResult> {
    const { dataRoot, mounter } = this.options;
    const { volumeId, targetPath, spec } = request;
    const existing = await this.readExisting(volumeId);
    if (existing) {
      // Attributes are immutable: the certificate on disk was issued for the published ones.
      const published: PublishedVolume = {
        ...existing,
        pkcs12Password: await readPkcs12Password(dataRoot, volumeId),
        issued: existing.nextIssuanceTime !== undefined,
      };
      const differences = republishDifferences(published, asPublished(request));
      if (differences.length > 0) throw new RepublishConflictError(volumeId, differences);
    }
    await checkPublishTarget(dataRoot, mounter, volumeId, targetPath, existing);
    // An unpublish that began meanwhile waits for this publish: end it without a step.
    if (this.unpublishing.has(volumeId)) throw unpublishingError();
    const state = this.stateOf(volumeId);
    this.keepTokens(request);
    if (existing && isUsable(existing, this.clock.now())) {
      // Ready already: only make sure the mount is there (kubelet republishes often).
      await mounter.publish(dataRoot.dataDir(volumeId), targetPath);
      throwIfUnpublished(state);
      await mounter.refresh(dataRoot.dataDir(volumeId), targetPath, spec.fsGroup);
      throwIfUnpublished(state);
      if (!this.timers.has(volumeId)) this.schedule(volumeId, existing, spec);
      return { issued: false, ...times(existing) };
    }

    const metadata: VolumeMetadata = {
      ...existing,
      volumeId,
      targetPath,
      volumeContext: request.volumeContext,
      ...(request.volumeMountGroup ? { volumeMountGroup: request.volumeMountGroup } : {}),
    };
    await dataRoot.ensureVolume(volumeId, spec.fsGroup);
    await writeMetadata(dataRoot, metadata);
    if (spec.files.pkcs12) {
      // Kept beside the key, not in metadata.json, for renewals after a restart.
      await writePkcs12Password(dataRoot, volumeId, spec.files.pkcs12.password);
    }
    try {
      const issued = await this.issue(volumeId, spec, metadata, state);
      this.options.onIssued?.(volumeId, issued, 'publish');
      // Each step that an unpublish overtook ends the publish as aborted, not as its own error.
      throwIfUnpublished(state);
      await mounter.publish(dataRoot.dataDir(volumeId), targetPath);
      throwIfUnpublished(state);
      await mounter.refresh(dataRoot.dataDir(volumeId), targetPath, spec.fsGroup);
      throwIfUnpublished(state);
      this.schedule(volumeId, metadata, spec);
      return { issued: true, notAfter: issued.notAfter, nextIssuanceTime: issued.nextIssuanceTime };
    } catch (err) {
      await this.recordPublishFailure(volumeId, metadata, state, err);
      if (state.abort.signal.aborted) throw abortedError(state, err);
      this.options.onFailed?.(volumeId, metadata.volumeContext, err);
      throw err;
    }
  }

  /**
   * Obtains a certificate and writes it, under the volume's lock, unless the volume was
   * unpublished meanwhile. The attempt ends at its deadline whatever it waits for; only
   * creating the request takes a concurrency slot, not the wait for the signature.
   */
  private async issue(
    volumeId: string,
    spec: VolumeCertificateSpec,
    metadata: VolumeMetadata,
    state: VolumeState,
    reuseKey?: KeyObject,
  ): Promise<IssuedCertificate> {
    const deadline = new Deadline(
      this.clock,
      this.options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
      state.abort.signal,
    );
    try {
      return await this.obtainAndWrite(volumeId, spec, metadata, state, deadline.signal, reuseKey);
    } finally {
      deadline.clear();
    }
  }

  private async obtainAndWrite(
    volumeId: string,
    spec: VolumeCertificateSpec,
    metadata: VolumeMetadata,
    state: VolumeState,
    signal: AbortSignal,
    reuseKey: KeyObject | undefined,
  ): Promise<IssuedCertificate> {
    const { dataRoot } = this.options;
    const issued = await obtainCertificate(
      {
        store: this.options.store,
        tracker: this.tracker,
        dataRoot,
        nodeId: this.options.nodeId,
        logger: this.options.logger,
        pendingKeys: this.pendingKeys,
        slot: (work) => this.limit(work),
        ...(this.options.requestCreator
          ? { creator: this.options.requestCreator(this.tokens.get(volumeId)) }
          : {}),
      },
      volumeId,
      spec,
      metadata,
      signal,
      reuseKey,
    );
    const release = await this.locks.lock(volumeId);
    try {
      // Unpublished while the request was signed: write nothing, recreate nothing.
      if (state.abort.signal.aborted) {
        throw new IssuanceError('issuance aborted: the volume was unpublished', 'aborted');
      }
      await writeAtomically(
        dataRoot.dataDir(volumeId),
        issued.files,
        spec.fsGroup !== undefined ? { gid: spec.fsGroup } : {},
      );
      metadata.nextIssuanceTime = issued.nextIssuanceTime.toISOString();
      metadata.notAfter = issued.notAfter.toISOString();
      // obtainCertificate leaves the request's pending record for every certificate it returns.
      const askedAt = Date.parse(metadata.pendingRequest?.createdAt as string);
      delete metadata.pendingRequest;
      this.recordIssuance(volumeId, metadata, issued, askedAt);
      await writeMetadata(dataRoot, metadata);
      this.unsaved.delete(volumeId);
      await removePendingKey(dataRoot, volumeId);
    } finally {
      release();
    }
    await deleteRequestsOfVolume(
      { store: this.options.store, tracker: this.tracker, logger: this.options.logger },
      volumeId,
      issued.request.metadata.name,
    );
    return issued;
  }

  /**
   * Clears the failure record after a good issuance, or, when the new certificate is due
   * for renewal at once, records a failure with the backoff's retry time, so such a
   * certificate can never renew in a loop (the policy decides; schedule() follows it).
   */
  private recordIssuance(
    volumeId: string,
    metadata: VolumeMetadata,
    issued: IssuedCertificate,
    askedAt: number,
  ) {
    const now = this.clock.now();
    const retry = retryAfterIssuance(
      issued,
      askedAt,
      metadata.failures ?? 0,
      now,
      this.options.backoff ?? DEFAULT_BACKOFF,
    );
    if (!retry) {
      delete metadata.lastError;
      delete metadata.failures;
      delete metadata.nextRetryTime;
      return;
    }
    metadata.failures = retry.failures;
    metadata.nextRetryTime = new Date(retry.at).toISOString();
    metadata.lastError = { message: retry.message, time: new Date(now).toISOString() };
    this.options.logger.warn(
      { volumeId, failures: retry.failures, retryInMs: retry.at - now, err: retry.message },
      'issued certificate is already due for renewal; retrying after backoff',
    );
  }

  /**
   * Renews one managed volume now (the timer's callback, or a manual request). Failures
   * are recorded in metadata.json with the backoff's retry time, so a restart does not
   * burst; resolves undefined when the volume is gone or the renewal failed.
   */
  renew(volumeId: string, reason: string): Promise<IssuedCertificate | undefined> {
    const running = this.renewing.get(volumeId);
    if (running) return running;
    const work = this.renewOnce(volumeId, reason).finally(() => {
      this.renewing.delete(volumeId);
    });
    this.renewing.set(volumeId, work);
    return work;
  }

  private async renewOnce(
    volumeId: string,
    reason: string,
  ): Promise<IssuedCertificate | undefined> {
    const { dataRoot, mounter } = this.options;
    const state = this.states.get(volumeId);
    if (!state || state.abort.signal.aborted) return undefined;
    const metadata = await this.readExisting(volumeId);
    if (!metadata) return undefined;
    const log = this.options.logger.child({ volumeId });
    let spec: VolumeCertificateSpec;
    try {
      spec = await this.specOf(volumeId, metadata);
    } catch (err) {
      log.error(
        { err: errorMessage(err) },
        'cannot renew: the stored volume attributes are invalid',
      );
      return undefined;
    }
    log.info({ reason }, 'renewing certificate');
    try {
      const reuseKey = spec.reusePrivateKey ? await this.currentKey(volumeId, spec) : undefined;
      const issued = await this.issue(volumeId, spec, metadata, state, reuseKey);
      await mounter.refresh(dataRoot.dataDir(volumeId), metadata.targetPath, spec.fsGroup);
      this.options.onIssued?.(volumeId, issued, reason);
      log.info(
        {
          notAfter: issued.notAfter.toISOString(),
          nextIssuanceTime: issued.nextIssuanceTime.toISOString(),
        },
        'certificate renewed',
      );
      this.schedule(volumeId, metadata, spec);
      return issued;
    } catch (err) {
      if (state.abort.signal.aborted) return undefined;
      await this.recordRenewalFailure(volumeId, metadata, spec, err);
      this.options.onFailed?.(volumeId, metadata.volumeContext, err);
      return undefined;
    }
  }

  /**
   * Renews on request (`cert-csi renew`), whatever the renewal time and backoff say; progress
   * gets the outcome so far each time a volume is done.
   */
  async renewNow(
    target: RenewTarget,
    progress: (soFar: RenewOutcome) => void = () => {},
  ): Promise<RenewOutcome> {
    const ids = 'all' in target ? [...this.states.keys()].sort() : [target.volumeId];
    const outcome: RenewOutcome = { renewed: [], failed: [] };
    await Promise.all(
      ids.map(async (volumeId) => {
        const refusal = await this.notRenewable(volumeId);
        if (refusal) {
          outcome.failed.push({ volumeId, error: refusal });
          progress(outcome);
          return;
        }
        // A renewal already running answers for the time before this request: wait for it,
        // then renew again.
        await this.renewing.get(volumeId)?.catch(() => undefined);
        const issued = await this.renew(volumeId, 'manual request');
        if (issued) {
          outcome.renewed.push({
            volumeId,
            notAfter: issued.notAfter.toISOString(),
            nextIssuanceTime: issued.nextIssuanceTime.toISOString(),
          });
          progress(outcome);
        } else {
          const metadata = await this.readExisting(volumeId);
          outcome.failed.push({
            volumeId,
            error:
              this.unsaved.get(volumeId)?.lastError.message ??
              metadata?.lastError?.message ??
              'the volume was unpublished',
          });
          progress(outcome);
        }
      }),
    );
    return outcome;
  }

  /**
   * Why a manual renewal has nothing to do for a volume, or undefined. A first publish still
   * in flight has no certificate to renew: renewing would only wait for the same request (up
   * to its deadline) and hold up `renew --all`.
   */
  private async notRenewable(volumeId: string): Promise<string | undefined> {
    if (!this.states.has(volumeId)) return 'not a volume managed by this plugin';
    if (this.publishing.has(volumeId) && !(await this.readExisting(volumeId))?.nextIssuanceTime) {
      return 'its first publish is still in progress: no certificate to renew yet';
    }
    return undefined;
  }

  /**
   * Unpublishes: stops work on the volume, unmounts, removes its directory. Only the target
   * recorded for the volume is touched: another target is success with nothing done, and a
   * volume without a dir leaves the target alone. A publish running meanwhile is aborted and
   * waited for; one arriving meanwhile is refused as aborted.
   */
  async unpublish(volumeId: string, targetPath: string): Promise<void> {
    // Checked before anything is cancelled: a wrong target must not stop the volume's work.
    if ((await unpublishScope(this.options.dataRoot, volumeId, targetPath)) === 'elsewhere') {
      this.logElsewhere(volumeId, targetPath);
      return;
    }
    this.unpublishing.set(volumeId, (this.unpublishing.get(volumeId) ?? 0) + 1);
    try {
      await this.unpublishOnce(volumeId, targetPath);
    } finally {
      const left = (this.unpublishing.get(volumeId) as number) - 1;
      if (left > 0) this.unpublishing.set(volumeId, left);
      else this.unpublishing.delete(volumeId);
    }
  }

  private async unpublishOnce(volumeId: string, targetPath: string): Promise<void> {
    const { dataRoot, mounter } = this.options;
    this.timers.cancel(volumeId);
    const state = this.states.get(volumeId);
    state?.abort.abort(new Error('volume unpublished'));
    await this.publishing.get(volumeId)?.work.catch(() => undefined);
    await this.renewing.get(volumeId)?.catch(() => undefined);
    const release = await this.locks.lock(volumeId);
    try {
      // Again under the lock: a publish may have created the volume or recorded another target.
      const scope = await unpublishScope(dataRoot, volumeId, targetPath);
      if (scope === 'elsewhere') {
        this.logElsewhere(volumeId, targetPath);
        return;
      }
      if (scope !== 'unknown') {
        await mounter.unpublish(dataRoot.dataDir(volumeId), targetPath, scope === 'recorded');
      }
      await dataRoot.removeVolume(volumeId);
      this.states.delete(volumeId);
      this.tokens.delete(volumeId);
      this.unsaved.delete(volumeId);
    } finally {
      release();
    }
    // Nothing garbage-collects requests in embedded mode; the pod's certificate is gone.
    await deleteRequestsOfVolume(
      { store: this.options.store, tracker: this.tracker, logger: this.options.logger },
      volumeId,
    );
  }

  private logElsewhere(volumeId: string, targetPath: string): void {
    this.options.logger.warn(
      { volumeId, targetPath: targetPath.slice(0, 200) },
      'unpublish names a target this volume is not published at: nothing done',
    );
  }

  /**
   * Takes back every volume on disk: valid ones wait for their renewal time, overdue ones
   * renew now (spread by jitter, queued by the concurrency limit), a pending request is
   * resumed. An unparsable metadata.json is moved aside; directories that are not volumes
   * are left alone. Nothing here is fatal.
   */
  private async rediscover(): Promise<{ managed: number; corrupt: number }> {
    const { dataRoot } = this.options;
    const log = this.options.logger;
    let managed = 0;
    let corrupt = 0;
    const ids = await dataRoot.listVolumeIds();
    const readAll = pLimit(32);
    await Promise.all(
      ids.map((volumeId) =>
        readAll(async () => {
          let metadata: VolumeMetadata;
          try {
            metadata = await readMetadata(dataRoot, volumeId);
          } catch (err) {
            if (!(await exists(dataRoot.metadataPath(volumeId)))) {
              log.debug({ dir: dataRoot.volumeDir(volumeId) }, 'not a volume: left alone');
              return;
            }
            const aside = `${dataRoot.metadataPath(volumeId)}.corrupt-${fileStamp(this.clock.now())}`;
            await rename(dataRoot.metadataPath(volumeId), aside).catch(() => undefined);
            corrupt++;
            log.error(
              { volumeId, movedTo: aside, err: errorMessage(err) },
              'unreadable metadata.json moved aside',
            );
            return;
          }
          let spec: VolumeCertificateSpec;
          try {
            spec = await this.specOf(volumeId, metadata);
          } catch (err) {
            log.error(
              { volumeId, err: errorMessage(err) },
              'stored volume attributes are invalid: not managed',
            );
            return;
          }
          if (!metadata.nextIssuanceTime && !metadata.pendingRequest) {
            // The first publish never got a certificate; kubelet's retry will publish again.
            log.info({ volumeId }, 'volume never issued: waiting for kubelet to publish it');
            return;
          }
          // A crash after a renewal wrote data/ and before it mirrored it (direct mode) leaves
          // the target path with the previous certificate until the next renewal, which may be
          // after that certificate expires: mirror again now, before any timer can write.
          await this.options.mounter
            .refresh(dataRoot.dataDir(volumeId), metadata.targetPath, spec.fsGroup)
            .catch((err: unknown) => {
              log.warn(
                { volumeId, err: errorMessage(err) },
                'cannot refresh the target path; the next renewal tries again',
              );
            });
          this.stateOf(volumeId);
          this.schedule(volumeId, metadata, spec);
          managed++;
        }),
      ),
    );
    log.info({ managed, corrupt, dirs: ids.length }, 'volumes taken back under management');
    return { managed, corrupt };
  }

  /** Arms (or clears) the volume's timer from its metadata: the policy decides when. */
  private schedule(volumeId: string, metadata: VolumeMetadata, spec: VolumeCertificateSpec): void {
    const attempt = nextAttempt(metadata, {
      disableAutoRenew: spec.disableAutoRenew,
      jitterMs: this.options.renewalJitterMs ?? 0,
    });
    if (!attempt) {
      this.timers.cancel(volumeId);
      return;
    }
    this.timers.schedule(volumeId, attempt.at, () => {
      void this.renew(volumeId, attempt.reason);
    });
  }

  private async recordRenewalFailure(
    volumeId: string,
    metadata: VolumeMetadata,
    spec: VolumeCertificateSpec,
    err: unknown,
  ): Promise<void> {
    const failures = (metadata.failures ?? 0) + 1;
    const delay = backoffDelay(failures, this.options.backoff ?? DEFAULT_BACKOFF);
    const now = this.clock.now();
    metadata.failures = failures;
    metadata.nextRetryTime = new Date(now + delay).toISOString();
    metadata.lastError = { message: errorMessage(err), time: new Date(now).toISOString() };
    this.options.logger.warn(
      { volumeId, failures, retryInMs: delay, err: metadata.lastError.message },
      'renewal failed; the certificate on disk stays until a new one is written',
    );
    const release = await this.locks.lock(volumeId);
    try {
      const state = this.states.get(volumeId);
      if (!state || state.abort.signal.aborted) return;
      await this.saveFailure(metadata, metadata.lastError);
    } finally {
      release();
    }
    this.schedule(volumeId, metadata, spec);
  }

  /**
   * Keeps what a retry needs: a volume that worked keeps its files, a pending request
   * stays resumable; a first publish that got nothing leaves no directory behind.
   */
  private async recordPublishFailure(
    volumeId: string,
    metadata: VolumeMetadata,
    state: VolumeState,
    err: unknown,
  ): Promise<void> {
    const { dataRoot } = this.options;
    const release = await this.locks.lock(volumeId);
    try {
      if (state.abort.signal.aborted) return;
      const worked = metadata.nextIssuanceTime !== undefined;
      if (!worked && !metadata.pendingRequest) {
        await dataRoot.removeVolume(volumeId);
        this.states.delete(volumeId);
        return;
      }
      await this.saveFailure(metadata, {
        message: errorMessage(err),
        time: new Date(this.clock.now()).toISOString(),
      });
    } finally {
      release();
    }
  }

  /**
   * Writes a failure to metadata.json; when that fails too (a full data root), keeps it in
   * memory, where `cert-csi status` reads it through the status socket. The caller holds the
   * volume's lock.
   */
  private async saveFailure(metadata: VolumeMetadata, lastError: VolumeFailure): Promise<void> {
    const { volumeId } = metadata;
    metadata.lastError = lastError;
    try {
      // writeMetadata never creates the volume dir, so a removed volume stays removed.
      await writeMetadata(this.options.dataRoot, metadata);
      this.unsaved.delete(volumeId);
    } catch (err) {
      const saveError = errorMessage(err);
      this.unsaved.set(volumeId, { volumeId, lastError, saveError });
      this.options.logger.error(
        { volumeId, err: saveError },
        'cannot record the failure in metadata.json; cert-csi status shows it from memory',
      );
    }
  }

  private async specOf(volumeId: string, metadata: VolumeMetadata): Promise<VolumeCertificateSpec> {
    const context = { ...metadata.volumeContext };
    const password = await readPkcs12Password(this.options.dataRoot, volumeId);
    if (password !== undefined) context['csi.cert-manager.io/pkcs12-password'] = password;
    return specFromVolumeContext(context, metadata.volumeMountGroup);
  }

  /** The key on disk, for reuse-private-key; undefined when missing or undecodable. */
  private async currentKey(
    volumeId: string,
    spec: VolumeCertificateSpec,
  ): Promise<KeyObject | undefined> {
    try {
      const pem = await readFile(
        join(this.options.dataRoot.dataDir(volumeId), spec.files.privateKey),
      );
      return decodePrivateKey(pem);
    } catch {
      return undefined;
    }
  }

  private stateOf(volumeId: string): VolumeState {
    let state = this.states.get(volumeId);
    if (!state || state.abort.signal.aborted) {
      state = { abort: new AbortController() };
      this.states.set(volumeId, state);
    }
    return state;
  }

  private async readExisting(volumeId: string): Promise<VolumeMetadata | undefined> {
    if (!(await this.options.dataRoot.hasVolume(volumeId))) return undefined;
    try {
      return await readMetadata(this.options.dataRoot, volumeId);
    } catch {
      // A volume dir without readable metadata has nothing worth keeping: start over.
      return undefined;
    }
  }
}

/** A publish request as the side of a republish comparison (a running publish counts as issued). */
function asPublished(request: PublishRequest): PublishedVolume {
  return {
    targetPath: request.targetPath,
    volumeContext: request.volumeContext,
    volumeMountGroup: request.volumeMountGroup,
    pkcs12Password: request.spec.files.pkcs12?.password,
    issued: true,
  };
}

/** A publish that met an unpublish of its volume (kubelet retries it if the pod still wants it). */
function unpublishingError(): IssuanceError {
  return new IssuanceError('publish aborted: the volume is being unpublished', 'aborted');
}

/** Ends a publish whose volume was unpublished (or the plugin stopped) before this step. */
function throwIfUnpublished(state: VolumeState): void {
  if (state.abort.signal.aborted) throw abortedError(state);
}

// The issuance's own abort error says what it was waiting for; keep it.
function abortedError(state: VolumeState, cause?: unknown): IssuanceError {
  if (cause instanceof IssuanceError && cause.reason === 'aborted') return cause;
  return new IssuanceError(
    `publish aborted: ${errorMessage(state.abort.signal.reason)}`,
    'aborted',
  );
}

/** A volume whose certificate is on disk and not yet expired. */
function isUsable(metadata: VolumeMetadata, now: number): boolean {
  if (!metadata.nextIssuanceTime || !metadata.notAfter) return false;
  return Date.parse(metadata.notAfter) > now;
}

function times(metadata: VolumeMetadata): { notAfter?: Date; nextIssuanceTime?: Date } {
  return {
    ...(metadata.notAfter ? { notAfter: new Date(metadata.notAfter) } : {}),
    ...(metadata.nextIssuanceTime ? { nextIssuanceTime: new Date(metadata.nextIssuanceTime) } : {}),
  };
}

function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, '-');
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
