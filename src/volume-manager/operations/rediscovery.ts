import { lstat, rename } from 'node:fs/promises';
import pLimit from 'p-limit';
import type { Logger } from '../../api/logger.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import type { Clock } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import type { DataRoot } from '../../volume/data-root.js';
import { readMetadata, type VolumeMetadata } from '../../volume/metadata.js';
import type { Mounter } from '../../volume/mounter.js';
import type { PodReadiness } from '../readiness/pod-readiness.js';
import { watchPod } from '../readiness/waiting-volume.js';
import type { RenewalScheduler } from '../state/renewal-scheduler.js';
import { storedSpec } from '../state/stored-volume.js';
import type { VolumeRegistry } from '../state/volume-registry.js';
import type { VolumeTelemetry } from '../telemetry/volume-telemetry.js';
import type { TrustBundleVolumes } from '../trust-bundles/trust-bundle-volumes.js';

/** What rediscovery found on the data root. */
export interface RediscoveryCounts {
  /** Volumes taken back under management. */
  managed: number;
  /** Volumes whose metadata.json did not parse and was moved aside. */
  corrupt: number;
}

/** What rediscovery works with: it issues nothing itself, it only arms timers. */
export interface RediscoveryDeps {
  dataRoot: DataRoot;
  mounter: Pick<Mounter, 'refresh'>;
  logger: Logger;
  clock: Clock;
  registry: VolumeRegistry;
  scheduler: RenewalScheduler;
  trustBundles: Pick<TrustBundleVolumes, 'track'>;
  telemetry: Pick<VolumeTelemetry, 'managed'>;
  readiness: PodReadiness;
}

// How many metadata.json files are read at once at start.
const READ_CONCURRENCY = 32;

/**
 * Takes back every volume on disk: valid ones wait for their renewal time, overdue ones
 * renew now (spread by jitter, queued by the concurrency limit), a pending request is
 * resumed. An unparsable metadata.json is moved aside; directories that are not volumes
 * are left alone. Nothing here is fatal.
 */
export async function rediscoverVolumes(deps: RediscoveryDeps): Promise<RediscoveryCounts> {
  const { dataRoot, logger } = deps;
  const counts: RediscoveryCounts = { managed: 0, corrupt: 0 };
  const ids = await dataRoot.listVolumeIds();
  const readAll = pLimit(READ_CONCURRENCY);
  await Promise.all(
    ids.map((volumeId) =>
      readAll(async () => {
        const outcome = await takeBack(deps, volumeId);
        if (outcome !== 'skipped') counts[outcome]++;
      }),
    ),
  );
  logger.info({ ...counts, dirs: ids.length }, 'volumes taken back under management');
  return counts;
}

/** Takes back one volume dir; says whether it is managed now, was corrupt, or was skipped. */
async function takeBack(
  deps: RediscoveryDeps,
  volumeId: string,
): Promise<'managed' | 'corrupt' | 'skipped'> {
  const { dataRoot, logger: log } = deps;
  let metadata: VolumeMetadata;
  try {
    metadata = await readMetadata(dataRoot, volumeId);
  } catch (err) {
    if (!(await exists(dataRoot.metadataPath(volumeId)))) {
      log.debug({ dir: dataRoot.volumeDir(volumeId) }, 'not a volume: left alone');
      return 'skipped';
    }
    const aside = `${dataRoot.metadataPath(volumeId)}.corrupt-${fileStamp(deps.clock.now())}`;
    await rename(dataRoot.metadataPath(volumeId), aside).catch(() => undefined);
    log.error(
      { volumeId, movedTo: aside, err: errorMessage(err) },
      'unreadable metadata.json moved aside',
    );
    return 'corrupt';
  }
  let spec: VolumeCertificateSpec;
  try {
    spec = await storedSpec(dataRoot, volumeId, metadata);
  } catch (err) {
    log.error(
      { volumeId, err: errorMessage(err) },
      'stored volume attributes are invalid: not managed',
    );
    return 'skipped';
  }
  // A volume published empty (waiting for its pod) was reported mounted: kubelet will not
  // publish it again, so it is taken back like an issued one; due ones renew at once.
  const plan = deps.scheduler.plan('restart', metadata, spec);
  if (plan.action === 'leave-to-kubelet') {
    // The first publish never got a certificate; kubelet's retry will publish again.
    log.info({ volumeId }, 'volume never issued: waiting for kubelet to publish it');
    return 'skipped';
  }
  // A crash after a renewal wrote data/ and before it mirrored it (direct mode) leaves
  // the target path with the previous certificate until the next renewal, which may be
  // after that certificate expires: mirror again now, before any timer can write.
  await deps.mounter
    .refresh(dataRoot.dataDir(volumeId), metadata.targetPath, spec.fsGroup)
    .catch((err: unknown) => {
      log.warn(
        { volumeId, err: errorMessage(err) },
        'cannot refresh the target path; the next renewal tries again',
      );
    });
  // Parsed once, here: its renewals and pod changes work from it.
  deps.registry.manage(volumeId, spec);
  // A trust bundle changed while the plugin was down reaches this volume once its source has
  // listed (at once when another volume's watch of it already has).
  deps.trustBundles.track(volumeId, spec, metadata.targetPath);
  deps.scheduler.arm(volumeId, plan);
  deps.telemetry.managed(volumeId, metadata.nextIssuanceTime);
  // Its pod may have become ready, or changed IPs, while the plugin was down.
  if (metadata.waiting || spec.podIPs !== undefined) watchPod(deps.readiness, volumeId, spec.pod);
  return 'managed';
}

function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, '-');
}

// lstat: an entry at the name counts, a dangling link included (it is set aside, not followed).
async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
