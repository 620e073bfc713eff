import type { Logger } from '../../api/logger.js';
import type { Clock } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import type { DataRoot } from '../../volume/data-root.js';
import { type VolumeFailure, type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import type { UnsavedFailure } from '../control/control-protocol.js';
import type { IssuedCertificate } from '../issuance/certificate-files.js';
import {
  type BackoffPolicy,
  backoffDelay,
  countFailedAttempt,
  retryAfterIssuance,
} from '../policy/renewal-policy.js';
import type { VolumeRegistry, VolumeState } from './volume-registry.js';

/** What the failure recorder works with. */
export interface FailureRecorderDeps {
  dataRoot: DataRoot;
  registry: VolumeRegistry;
  clock: Clock;
  logger: Logger;
  backoff: BackoffPolicy;
}

/**
 * Records the failures of publishes and renewals in metadata.json, with the backoff's retry
 * time, so a restart continues the backoff instead of bursting. When metadata.json cannot be
 * written (a full data root) the failure is held in memory, where `cert-csi status` reads it
 * through the control socket, until the volume's metadata is written again.
 */
export class FailureRecorder {
  /** Failures metadata.json could not take, by volume id. */
  private readonly unsaved = new Map<string, UnsavedFailure>();

  constructor(private readonly deps: FailureRecorderDeps) {}

  /** The last failure of each volume whose metadata.json could not record it, by volume id. */
  unsavedFailures(): UnsavedFailure[] {
    return [...this.unsaved.values()].sort((a, b) => a.volumeId.localeCompare(b.volumeId));
  }

  /** The message of the volume's last failure when only memory holds it. */
  unsavedError(volumeId: string): string | undefined {
    return this.unsaved.get(volumeId)?.lastError.message;
  }

  /** Drops the volume's failure held in memory: its metadata.json was written, or it is gone. */
  forget(volumeId: string): void {
    this.unsaved.delete(volumeId);
  }

  /**
   * Sets the failure fields of a volume's metadata after a certificate was obtained: cleared
   * after a good issuance, or, when the new certificate is due for renewal at once, a failure
   * with the backoff's retry time, so such a certificate can never renew in a loop (the
   * policy decides; the scheduler follows it). The caller writes the metadata.
   */
  recordIssuance(
    volumeId: string,
    metadata: VolumeMetadata,
    issued: IssuedCertificate,
    /** When the request was asked for. */
    askedAt: number,
  ): void {
    const now = this.deps.clock.now();
    const retry = retryAfterIssuance(
      issued,
      askedAt,
      metadata.failures ?? 0,
      now,
      this.deps.backoff,
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
    this.deps.logger.warn(
      { volumeId, failures: retry.failures, retryInMs: retry.at - now, err: retry.message },
      'issued certificate is already due for renewal; retrying after backoff',
    );
  }

  /**
   * Counts a failed renewal and sets its retry time after the backoff; resolves false, with
   * nothing saved, when the volume was unpublished meanwhile (no retry to schedule then).
   */
  async recordRenewalFailure(
    volumeId: string,
    metadata: VolumeMetadata,
    err: unknown,
  ): Promise<boolean> {
    // The gate count starts afresh too: the gates passed before this issuance was tried.
    const failures = countFailedAttempt(
      { gate: 0, issuance: metadata.failures ?? 0 },
      'issuance',
    ).issuance;
    const delay = backoffDelay(failures, this.deps.backoff);
    const now = this.deps.clock.now();
    metadata.failures = failures;
    metadata.nextRetryTime = new Date(now + delay).toISOString();
    metadata.lastError = { message: errorMessage(err), time: new Date(now).toISOString() };
    this.deps.logger.warn(
      { volumeId, failures, retryInMs: delay, err: metadata.lastError.message },
      'renewal failed; the certificate on disk stays until a new one is written',
    );
    const release = await this.deps.registry.lock(volumeId);
    try {
      if (!this.deps.registry.liveState(volumeId)) return false;
      await this.save(metadata, metadata.lastError);
      return true;
    } finally {
      release();
    }
  }

  /**
   * Keeps what a retry of a failed publish needs: a volume that worked keeps its files, a
   * pending request stays resumable (`recorded`); a first publish that got nothing leaves no
   * directory behind and is forgotten by the registry (`removed`: the caller drops the rest of
   * what it held). Nothing is recorded once the publish's state was aborted (`unpublished`).
   */
  async recordPublishFailure(
    volumeId: string,
    metadata: VolumeMetadata,
    state: VolumeState,
    err: unknown,
  ): Promise<'recorded' | 'removed' | 'unpublished'> {
    const release = await this.deps.registry.lock(volumeId);
    try {
      if (state.abort.signal.aborted) return 'unpublished';
      const worked = metadata.nextIssuanceTime !== undefined;
      if (!worked && !metadata.pendingRequest) {
        await this.deps.dataRoot.removeVolume(volumeId);
        this.deps.registry.forget(volumeId);
        return 'removed';
      }
      await this.save(metadata, {
        message: errorMessage(err),
        time: new Date(this.deps.clock.now()).toISOString(),
      });
      return 'recorded';
    } finally {
      release();
    }
  }

  /**
   * Writes a failure to metadata.json; when that fails too (a full data root), keeps it in
   * memory. The caller holds the volume's lock.
   */
  private async save(metadata: VolumeMetadata, lastError: VolumeFailure): Promise<void> {
    const { volumeId } = metadata;
    metadata.lastError = lastError;
    try {
      // writeMetadata never creates the volume dir, so a removed volume stays removed.
      await writeMetadata(this.deps.dataRoot, metadata);
      this.unsaved.delete(volumeId);
    } catch (err) {
      const saveError = errorMessage(err);
      this.unsaved.set(volumeId, { volumeId, lastError, saveError });
      this.deps.logger.error(
        { volumeId, err: saveError },
        'cannot record the failure in metadata.json; cert-csi status shows it from memory',
      );
    }
  }
}
