import { describeTrustBundleSource } from '../api/trust-bundle-source.js';
import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import { errorMessage } from '../base/error-message.js';
import { readAtomically, writeAtomically } from '../volume/atomic-writer.js';
import { IssuanceError } from './issuance.js';
import type { ManagerParts } from './manager-parts.js';
import type { TrustBundleSources } from './trust-bundle-sources.js';

/** What TrustBundleVolumes works with. */
export type TrustBundleVolumesParts = Pick<
  ManagerParts,
  'dataRoot' | 'mounter' | 'logger' | 'registry'
>;

interface TrackedVolume {
  spec: VolumeCertificateSpec;
  targetPath: string;
}

/**
 * The volumes whose CA file follows a trust bundle (the trust-bundle attribute). When a source
 * changes, each volume using it gets a new generation through the atomic writer, under the
 * volume's lock, holding its current files with only the CA file replaced: no
 * CertificateRequest, no new key. An issuance writes the bundle under the same lock, so
 * whichever write comes last holds both the newest certificate and the newest bundle. A
 * volume unpublished (its state aborted) is never written.
 */
export class TrustBundleVolumes {
  private readonly volumes = new Map<string, TrackedVolume>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(
    private readonly parts: TrustBundleVolumesParts,
    private readonly sources: TrustBundleSources,
  ) {}

  /** Follows the volume's source (none: forgets it); idempotent. */
  track(volumeId: string, spec: VolumeCertificateSpec, targetPath: string): void {
    if (!spec.trustBundle) {
      this.untrack(volumeId);
      return;
    }
    this.volumes.set(volumeId, { spec, targetPath });
    this.sources.use(volumeId, spec.trustBundle);
  }

  /** Stops following the volume's source. */
  untrack(volumeId: string): void {
    this.volumes.delete(volumeId);
    this.sources.release(volumeId);
  }

  /** Rewrites the CA file of each volume, one write at a time per volume (later changes coalesce). */
  changed(volumeIds: readonly string[]): void {
    for (const volumeId of volumeIds) this.schedule(volumeId);
  }

  /**
   * Waits, before a first issuance, until the volume's source yields a bundle; throws an
   * IssuanceError (timeout) naming the source and its problem when signal ends the wait.
   */
  async waitForFirstBundle(spec: VolumeCertificateSpec, signal: AbortSignal): Promise<void> {
    if (!spec.trustBundle) return;
    try {
      await this.sources.waitUsable(spec.trustBundle, signal);
    } catch (err) {
      throw new IssuanceError(`trust bundle not available: ${errorMessage(err)}`, 'timeout');
    }
  }

  /**
   * The files an issuance writes, with the CA file from the volume's source; while the source
   * is unusable the CA file on disk stays (an error is logged). The caller holds the lock.
   */
  async withBundle(
    volumeId: string,
    spec: VolumeCertificateSpec,
    files: Map<string, Uint8Array>,
  ): Promise<Map<string, Uint8Array>> {
    if (!spec.trustBundle) return files;
    const resolved = this.sources.resolve(spec.trustBundle);
    const out = new Map(files);
    if (resolved.ok) {
      out.set(spec.files.ca, Buffer.from(resolved.pem));
      return out;
    }
    const current = (await readAtomically(this.parts.dataRoot.dataDir(volumeId)))?.get(
      spec.files.ca,
    );
    const source = describeTrustBundleSource(spec.trustBundle);
    if (current === undefined) {
      throw new IssuanceError(
        `trust bundle ${source} not available: ${resolved.problem}`,
        'failed',
      );
    }
    this.parts.logger.error(
      { volumeId, source, problem: resolved.problem },
      'trust bundle unusable: the volume keeps its previous CA file',
    );
    out.set(spec.files.ca, current);
    return out;
  }

  private schedule(volumeId: string): void {
    if (this.running.has(volumeId)) {
      this.again.add(volumeId);
      return;
    }
    const run = (async () => {
      do {
        this.again.delete(volumeId);
        await this.rewrite(volumeId).catch((err: unknown) => {
          this.parts.logger.error(
            { volumeId, err: errorMessage(err) },
            'cannot write the new trust bundle; the next change tries again',
          );
        });
      } while (this.again.has(volumeId));
    })().finally(() => this.running.delete(volumeId));
    this.running.set(volumeId, run);
  }

  private async rewrite(volumeId: string): Promise<void> {
    const { dataRoot, mounter, registry, logger } = this.parts;
    const release = await registry.lock(volumeId);
    try {
      // Unpublished (or never published by this process): not ours to write.
      const tracked = this.volumes.get(volumeId);
      if (!tracked?.spec.trustBundle || !registry.liveState(volumeId)) return;
      const { spec, targetPath } = tracked;
      const source = describeTrustBundleSource(tracked.spec.trustBundle);
      const resolved = this.sources.resolve(tracked.spec.trustBundle);
      if (!resolved.ok) {
        logger.error(
          { volumeId, source, problem: resolved.problem },
          'trust bundle unusable: the volume keeps its previous CA file',
        );
        return;
      }
      const dataDir = dataRoot.dataDir(volumeId);
      const current = await readAtomically(dataDir);
      // Nothing issued yet: the issuance writes the bundle with the certificate.
      if (!current?.has(spec.files.ca)) return;
      const pem = Buffer.from(resolved.pem);
      if (pem.equals(current.get(spec.files.ca) as Buffer)) return;
      current.set(spec.files.ca, pem);
      await writeAtomically(
        dataDir,
        current,
        spec.fsGroup !== undefined ? { gid: spec.fsGroup } : {},
      );
      await mounter.refresh(dataDir, targetPath, spec.fsGroup);
      logger.info({ volumeId, source }, 'trust bundle written');
    } finally {
      release();
    }
  }
}
