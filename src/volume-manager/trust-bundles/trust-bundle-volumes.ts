import type { Logger } from '../../api/logger.js';
import { describeTrustBundleSource } from '../../api/trust-bundle-source.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { GENERATION_FILENAME } from '../../attributes/filename-rules.js';
import type { Clock } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import { readAtomically, writeAtomically } from '../../fs/atomic-writer.js';
import type { DataRoot } from '../../volume/data-root.js';
import type { Mounter } from '../../volume/mounter.js';
import { readJksPassword } from '../../volume/volume-secrets.js';
import { jksFilesForCa } from '../issuance/extra-outputs.js';
import { generationFile, recordedGeneration } from '../issuance/generation-file.js';
import { IssuanceError } from '../issuance/issuance-error.js';
import { reissueDecision } from '../policy/reissue-decision.js';
import type { VolumeRegistry } from '../state/volume-registry.js';
import type { TrustBundleSources } from './trust-bundle-sources.js';

/** What TrustBundleVolumes works with. */
export interface TrustBundleVolumesDeps {
  dataRoot: DataRoot;
  mounter: Pick<Mounter, 'refresh'>;
  logger: Logger;
  registry: Pick<VolumeRegistry, 'lock' | 'liveState'>;
  /** Dates the JKS stores built with a new bundle. */
  clock: Clock;
  /** Told after each rewrite, to tell the application (reload-url, reload-signal). */
  onRewritten?: (volumeId: string, spec: VolumeCertificateSpec) => Promise<void>;
}

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
    private readonly deps: TrustBundleVolumesDeps,
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
   * The files an issuance writes, with the CA file from the volume's source (and the JKS
   * stores trusting it); while the source is unusable the CA file on disk stays (an error is
   * logged). The caller holds the lock.
   */
  async withBundle(
    volumeId: string,
    spec: VolumeCertificateSpec,
    files: Map<string, Uint8Array>,
  ): Promise<Map<string, Uint8Array>> {
    if (!spec.trustBundle) return files;
    const resolved = this.sources.resolve(spec.trustBundle);
    const source = describeTrustBundleSource(spec.trustBundle);
    let ca: Uint8Array;
    if (resolved.ok) {
      ca = Buffer.from(resolved.pem);
    } else {
      const current = (await readAtomically(this.deps.dataRoot.dataDir(volumeId)))?.get(
        spec.files.ca,
      );
      if (current === undefined) {
        throw new IssuanceError(
          `trust bundle ${source} not available: ${resolved.problem}`,
          'failed',
        );
      }
      this.deps.logger.error(
        { volumeId, source, problem: resolved.problem },
        'trust bundle unusable: the volume keeps its previous CA file',
      );
      ca = current;
    }
    const out = new Map(files);
    out.set(spec.files.ca, ca);
    if (spec.files.jks) {
      try {
        const jks = spec.files.jks;
        const caPem = Buffer.from(ca).toString('utf8');
        const stores = jksFilesForCa({
          files: out,
          names: spec.files,
          jks,
          caPem,
          now: new Date(this.deps.clock.now()),
        });
        for (const [name, data] of stores) out.set(name, data);
      } catch (err) {
        throw new IssuanceError(
          `cannot build the JKS stores with trust bundle ${source}: ${errorMessage(err)}`,
          'invalid-certificate',
        );
      }
    }
    return out;
  }

  /** Resolves once no trust-bundle rewrite is running (those already started finish). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
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
          this.deps.logger.error(
            { volumeId, err: errorMessage(err) },
            'cannot write the new trust bundle; the next change tries again',
          );
        });
      } while (this.again.has(volumeId));
    })().finally(() => this.running.delete(volumeId));
    this.running.set(volumeId, run);
  }

  private async rewrite(volumeId: string): Promise<void> {
    const { dataRoot, mounter, registry, logger } = this.deps;
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
      const onDisk = await readAtomically(dataDir);
      const hasCertificate = onDisk?.has(spec.files.ca) === true;
      // Nothing issued yet: the issuance writes the bundle with the certificate.
      if (reissueDecision({ event: 'trust-bundle-change', hasCertificate }).action === 'nothing') {
        return;
      }
      // Holds the CA file, so it was read.
      const current = onDisk as Map<string, Buffer>;
      const pem = Buffer.from(resolved.pem);
      if (pem.equals(current.get(spec.files.ca) as Buffer)) return;
      current.set(spec.files.ca, pem);
      const jks = spec.files.jks;
      if (jks) {
        const stores = await this.jksStores(volumeId, spec, jks, current, resolved.pem);
        if (!stores.ok) {
          // Never a CA file the JKS stores beside it do not trust: nothing is written.
          logger.error(
            { volumeId, source, problem: stores.problem },
            'cannot build the JKS stores with the new trust bundle: the volume keeps its previous files',
          );
          return;
        }
        for (const [name, data] of stores.files) current.set(name, data);
      }
      // Written with the CA file by the same issuance, so it is there too.
      const certificate = current.get(spec.files.certificate) as Buffer;
      const previous = recordedGeneration(current.get(GENERATION_FILENAME));
      current.set(
        GENERATION_FILENAME,
        Buffer.from(generationFile(previous, certificate, 'trust-bundle-changed')),
      );
      await writeAtomically(
        dataDir,
        current,
        spec.fsGroup !== undefined ? { gid: spec.fsGroup } : {},
      );
      await mounter.refresh(dataDir, targetPath, spec.fsGroup);
      logger.info({ volumeId, source }, 'trust bundle written');
      await this.deps.onRewritten?.(volumeId, spec);
    } finally {
      release();
    }
  }

  /**
   * The JKS stores of a rewrite: the key entry from the key and certificate files as on disk,
   * the bundle trusted, under the password of the volume's 0600 secrets file (its record of the
   * password, as a renewal after a restart reads it). The problem never holds the password.
   */
  private async jksStores(
    volumeId: string,
    spec: VolumeCertificateSpec,
    jks: NonNullable<VolumeCertificateSpec['files']['jks']>,
    files: ReadonlyMap<string, Uint8Array>,
    caPem: string,
  ): Promise<{ ok: true; files: Map<string, Buffer> } | { ok: false; problem: string }> {
    try {
      const password = await readJksPassword(this.deps.dataRoot, volumeId);
      if (password === undefined) {
        return {
          ok: false,
          problem: `no JKS password file ${this.deps.dataRoot.jksPasswordPath(volumeId)}`,
        };
      }
      const names = spec.files;
      const now = new Date(this.deps.clock.now());
      return {
        ok: true,
        files: jksFilesForCa({ files, names, jks: { ...jks, password }, caPem, now }),
      };
    } catch (err) {
      return { ok: false, problem: errorMessage(err) };
    }
  }
}
