import { type UnpublishScope, unpublishScope } from '../../volume/target/publish-scope.js';
import type { ManagerParts } from '../manager-parts.js';
import type { UnpublishOutcome } from '../volume-publisher.js';

/**
 * Unpublishes: stops work on the volume, unmounts, removes its directory. Only the target
 * recorded for the volume is touched: another target is success with nothing done, and a
 * volume without a dir leaves the target alone. A publish running meanwhile is aborted and
 * waited for; one arriving meanwhile is refused as aborted. Resolves with what was done, for
 * the CLI: kubelet gets success either way (CSI: unpublish is idempotent).
 */
export async function unpublishVolume(
  parts: ManagerParts,
  volumeId: string,
  targetPath: string,
): Promise<UnpublishOutcome> {
  // Checked before anything is cancelled: a wrong target must not stop the volume's work.
  const scope = await unpublishScope(parts.dataRoot, volumeId, targetPath);
  if (scope.kind === 'elsewhere') return elsewhere(parts, volumeId, targetPath, scope);
  return parts.registry.whileUnpublishing(volumeId, () =>
    unpublishOnce(parts, volumeId, targetPath),
  );
}

async function unpublishOnce(
  parts: ManagerParts,
  volumeId: string,
  targetPath: string,
): Promise<UnpublishOutcome> {
  const { dataRoot, mounter, registry } = parts;
  // A publish under way (or a volume registered without a dir yet) is stopped: that is work done.
  const managed =
    registry.runningPublish(volumeId) !== undefined || registry.liveState(volumeId) !== undefined;
  parts.scheduler.cancel(volumeId);
  parts.readiness.forget(volumeId);
  registry.abort(volumeId, new Error('volume unpublished'));
  await registry.runningPublish(volumeId)?.work.catch(() => undefined);
  await registry.runningRenewal(volumeId)?.catch(() => undefined);
  const release = await registry.lock(volumeId);
  let scope: UnpublishScope;
  try {
    // Again under the lock: a publish may have created the volume or recorded another target.
    scope = await unpublishScope(dataRoot, volumeId, targetPath);
    if (scope.kind === 'elsewhere') return elsewhere(parts, volumeId, targetPath, scope);
    if (scope.kind !== 'unknown') {
      await mounter.unpublish(dataRoot.dataDir(volumeId), targetPath, scope.kind === 'recorded');
    }
    await dataRoot.removeVolume(volumeId);
    registry.forget(volumeId);
    parts.trustBundles.untrack(volumeId);
    parts.failures.forget(volumeId);
    parts.telemetry.unmanaged(volumeId);
  } finally {
    release();
  }
  // Nothing garbage-collects requests in embedded mode; the pod's certificate is gone.
  await parts.issuance.deleteRequests(volumeId);
  return scope.kind === 'unknown' && !managed ? { kind: 'not-published' } : { kind: 'unpublished' };
}

function elsewhere(
  parts: ManagerParts,
  volumeId: string,
  targetPath: string,
  scope: { recordedTarget: string },
): UnpublishOutcome {
  parts.logger.warn(
    { volumeId, targetPath: targetPath.slice(0, 200) },
    'unpublish names a target this volume is not published at: nothing done',
  );
  return { kind: 'elsewhere', recordedTarget: scope.recordedTarget };
}
