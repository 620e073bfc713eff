import type { Logger } from '../../api/logger.js';
import type { DataRoot } from '../../volume/data-root.js';
import type { Mounter } from '../../volume/mounter.js';
import { type UnpublishScope, unpublishScope } from '../../volume/target/publish-scope.js';
import type { VolumeIssuance } from '../issuance/volume-issuance.js';
import type { PodReadiness } from '../readiness/pod-readiness.js';
import type { FailureRecorder } from '../state/failure-recorder.js';
import type { RenewalScheduler } from '../state/renewal-scheduler.js';
import type { VolumeRegistry } from '../state/volume-registry.js';
import type { VolumeTelemetry } from '../telemetry/volume-telemetry.js';
import type { TrustBundleVolumes } from '../trust-bundles/trust-bundle-volumes.js';
import type { UnpublishOutcome } from '../volume-publisher.js';

/** What an unpublish works with: every part that follows a volume lets go of it. */
export interface UnpublishDeps {
  dataRoot: DataRoot;
  mounter: Pick<Mounter, 'unpublish'>;
  logger: Logger;
  registry: VolumeRegistry;
  scheduler: Pick<RenewalScheduler, 'cancel'>;
  readiness: Pick<PodReadiness, 'forget'>;
  trustBundles: Pick<TrustBundleVolumes, 'untrack'>;
  failures: Pick<FailureRecorder, 'forget'>;
  telemetry: Pick<VolumeTelemetry, 'unmanaged'>;
  issuance: Pick<VolumeIssuance, 'deleteRequests'>;
}

/**
 * Unpublishes: stops work on the volume, unmounts, removes its directory. Only the target
 * recorded for the volume is touched: another target is success with nothing done, and a
 * volume without a dir leaves the target alone. A publish running meanwhile is aborted and
 * waited for; one arriving meanwhile is refused as aborted. Resolves with what was done, for
 * the CLI: kubelet gets success either way (CSI: unpublish is idempotent).
 */
export async function unpublishVolume(
  deps: UnpublishDeps,
  volumeId: string,
  targetPath: string,
): Promise<UnpublishOutcome> {
  // Checked before anything is cancelled: a wrong target must not stop the volume's work.
  const scope = await unpublishScope(deps.dataRoot, volumeId, targetPath);
  if (scope.kind === 'elsewhere') return elsewhere(deps, volumeId, targetPath, scope);
  return deps.registry.whileUnpublishing(volumeId, () => unpublishOnce(deps, volumeId, targetPath));
}

async function unpublishOnce(
  deps: UnpublishDeps,
  volumeId: string,
  targetPath: string,
): Promise<UnpublishOutcome> {
  const { dataRoot, mounter, registry } = deps;
  // A publish under way (or a volume registered without a dir yet) is stopped: that is work done.
  const managed =
    registry.runningPublish(volumeId) !== undefined || registry.liveState(volumeId) !== undefined;
  deps.scheduler.cancel(volumeId);
  deps.readiness.forget(volumeId);
  registry.abort(volumeId, new Error('volume unpublished'));
  await registry.runningPublish(volumeId)?.work.catch(() => undefined);
  await registry.runningRenewal(volumeId)?.catch(() => undefined);
  const release = await registry.lock(volumeId);
  let scope: UnpublishScope;
  try {
    // Again under the lock: a publish may have created the volume or recorded another target.
    scope = await unpublishScope(dataRoot, volumeId, targetPath);
    if (scope.kind === 'elsewhere') return elsewhere(deps, volumeId, targetPath, scope);
    if (scope.kind !== 'unknown') {
      await mounter.unpublish(dataRoot.dataDir(volumeId), targetPath, scope.kind === 'recorded');
    }
    await dataRoot.removeVolume(volumeId);
    registry.forget(volumeId);
    deps.trustBundles.untrack(volumeId);
    deps.failures.forget(volumeId);
    deps.telemetry.unmanaged(volumeId);
  } finally {
    release();
  }
  // Nothing garbage-collects requests in embedded mode; the pod's certificate is gone.
  await deps.issuance.deleteRequests(volumeId);
  return scope.kind === 'unknown' && !managed ? { kind: 'not-published' } : { kind: 'unpublished' };
}

function elsewhere(
  deps: UnpublishDeps,
  volumeId: string,
  targetPath: string,
  scope: { recordedTarget: string },
): UnpublishOutcome {
  deps.logger.warn(
    { volumeId, targetPath: targetPath.slice(0, 200) },
    'unpublish names a target this volume is not published at: nothing done',
  );
  return { kind: 'elsewhere', recordedTarget: scope.recordedTarget };
}
