import type { KeyObject } from 'node:crypto';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from '../../api/logger.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { GENERATION_FILENAME } from '../../attributes/filename-rules.js';
import type { Clock } from '../../base/clock.js';
import { Deadline } from '../../base/deadline.js';
import { writeAtomically } from '../../fs/atomic-writer.js';
import type { LocalIssuer } from '../../issuer/certificaterequests/local-issuance.js';
import type { ResourceStore } from '../../store/resource-store.js';
import type { DataRoot } from '../../volume/data-root.js';
import { type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import { removePendingKey } from '../../volume/volume-secrets.js';
import type { VolumeManagerSettings } from '../settings.js';
import type { FailureRecorder } from '../state/failure-recorder.js';
import type { VolumeRegistry, VolumeState } from '../state/volume-registry.js';
import type { VolumeTelemetry } from '../telemetry/volume-telemetry.js';
import type { TrustBundleVolumes } from '../trust-bundles/trust-bundle-volumes.js';
import type { IssuedCertificate } from './certificate-files.js';
import { currentGenerationCounter, generationFile } from './generation-file.js';
import { IssuanceError } from './issuance-error.js';
import { obtainCertificate } from './obtain-certificate.js';
import type { RequestTracker } from './request-tracker.js';
import { deleteRequestsOfVolume } from './volume-requests.js';

/** What a volume's issuance works with. */
export interface VolumeIssuanceDeps {
  store: ResourceStore;
  tracker: RequestTracker;
  /** Keys of this node's requests in flight by `namespace/name` (read by a SelfSigned signer). */
  pendingKeys: Map<string, KeyObject>;
  settings: Pick<VolumeManagerSettings, 'nodeId' | 'attemptTimeoutMs' | 'maxConcurrentIssuances'>;
  dataRoot: DataRoot;
  registry: VolumeRegistry;
  failures: FailureRecorder;
  /** Writes the CA file of volumes that follow a trust bundle. */
  trustBundles: TrustBundleVolumes;
  logger: Logger;
  clock: Clock;
  /** The store that creates a volume's request, from the pod's latest tokens. */
  requestCreator: (serviceAccountTokens: string | undefined) => ResourceStore;
  /** Told when each issuance starts and how it ends. */
  telemetry: VolumeTelemetry;
  /** Signs a new request as it is created when its issuer is this process's own (embedded mode). */
  localIssuer?: LocalIssuer | undefined;
  /**
   * Each new generation is copied to the target right after it is written (direct mode): its
   * files are handed to that copy (writeAtomically's handOff) instead of read back.
   */
  copiedToTarget?: boolean;
}

/**
 * Issues a volume's certificate, first or renewal: obtains it, then writes it under the
 * volume's lock unless the volume was unpublished meanwhile. Each attempt ends at its
 * deadline whatever it waits for; only creating the request takes one of the node's
 * concurrency slots, not the wait for the signature.
 */
export class VolumeIssuance {
  private readonly limit: LimitFunction;

  constructor(private readonly deps: VolumeIssuanceDeps) {
    this.limit = pLimit(deps.settings.maxConcurrentIssuances);
  }

  /** Obtains and writes the volume's certificate, updating metadata (and metadata.json). */
  async issue(
    volumeId: string,
    spec: VolumeCertificateSpec,
    metadata: VolumeMetadata,
    state: VolumeState,
    /** The key to reuse (reuse-private-key); a new one is generated when absent. */
    reuseKey?: KeyObject,
  ): Promise<IssuedCertificate> {
    const { clock, settings } = this.deps;
    const deadline = new Deadline(clock, settings.attemptTimeoutMs, state.abort.signal);
    try {
      return await this.deps.telemetry.issuance(volumeId, () =>
        this.obtainAndWrite(volumeId, spec, metadata, state, deadline.signal, reuseKey),
      );
    } finally {
      deadline.clear();
    }
  }

  /** Deletes the volume's CertificateRequests; already-gone ones are fine. */
  deleteRequests(volumeId: string): Promise<void> {
    return deleteRequestsOfVolume(this.deps, volumeId);
  }

  private async obtainAndWrite(
    volumeId: string,
    spec: VolumeCertificateSpec,
    metadata: VolumeMetadata,
    state: VolumeState,
    signal: AbortSignal,
    reuseKey: KeyObject | undefined,
  ): Promise<IssuedCertificate> {
    const { dataRoot, registry, requestCreator, trustBundles } = this.deps;
    trustBundles.track(volumeId, spec, metadata.targetPath);
    // A first issuance waits for its trust bundle before asking for a certificate.
    if (metadata.nextIssuanceTime === undefined)
      await trustBundles.waitForFirstBundle(spec, signal);
    const issued = await obtainCertificate(
      {
        ...this.deps,
        creator: requestCreator(registry.tokensOf(volumeId)),
        slot: (work) => this.limit(work),
      },
      volumeId,
      spec,
      metadata,
      signal,
      reuseKey,
    );
    const release = await registry.lock(volumeId);
    try {
      // Unpublished while the request was signed: write nothing, recreate nothing.
      if (state.abort.signal.aborted) {
        throw new IssuanceError('issuance aborted: the volume was unpublished', 'aborted');
      }
      const dataDir = dataRoot.dataDir(volumeId);
      // Under the lock: the bundle is the newest the watch has seen.
      const files = await trustBundles.withBundle(volumeId, spec, issued.files);
      // A volume with a certificate on record is renewed; after a reboot on tmpfs (no
      // metadata.json left) it is issued anew. The counter goes on from the one on disk.
      const reason = metadata.notAfter === undefined ? 'issued' : 'renewed';
      const written = new Map(files);
      written.set(
        GENERATION_FILENAME,
        generationFile(await currentGenerationCounter(dataDir), issued.facts, reason),
      );
      // A new certificate: never what the current generation holds.
      await writeAtomically(dataDir, written, {
        knownNew: true,
        handOff: this.deps.copiedToTarget === true,
        ...(spec.fsGroup !== undefined ? { gid: spec.fsGroup } : {}),
      });
      metadata.nextIssuanceTime = issued.nextIssuanceTime.toISOString();
      metadata.notAfter = issued.notAfter.toISOString();
      // The pending record of an asynchronous request; one signed as it was created has none.
      const askedAt = metadata.pendingRequest
        ? Date.parse(metadata.pendingRequest.createdAt)
        : (issued.askedAt ?? this.deps.clock.now());
      delete metadata.pendingRequest;
      // The pod IPs this certificate names: a restart compares them with the pod's.
      delete metadata.waiting;
      if (spec.podIPs) metadata.podIPs = [...spec.podIPs];
      this.deps.failures.recordIssuance(volumeId, metadata, issued, askedAt);
      await writeMetadata(dataRoot, metadata);
      this.deps.failures.forget(volumeId);
      await removePendingKey(dataRoot, volumeId);
    } finally {
      release();
    }
    await deleteRequestsOfVolume(this.deps, volumeId, issued.request.metadata.name);
    return issued;
  }
}
