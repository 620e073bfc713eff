import { unpublishScope } from '../volume/target-path.js';
import type { ManagerParts } from './manager-parts.js';

/**
 * Unpublishes: stops work on the volume, unmounts, removes its directory. Only the target
 * recorded for the volume is touched: another target is success with nothing done, and a
 * volume without a dir leaves the target alone. A publish running meanwhile is aborted and
 * waited for; one arriving meanwhile is refused as aborted.
 */
export async function unpublishVolume(
  parts: ManagerParts,
  volumeId: string,
  targetPath: string,
): Promise<void> {
  // Checked before anything is cancelled: a wrong target must not stop the volume's work.
  if ((await unpublishScope(parts.dataRoot, volumeId, targetPath)) === 'elsewhere') {
    logElsewhere(parts, volumeId, targetPath);
    return;
  }
  await parts.registry.whileUnpublishing(volumeId, () =>
    unpublishOnce(parts, volumeId, targetPath),
  );
}

async function unpublishOnce(
  parts: ManagerParts,
  volumeId: string,
  targetPath: string,
): Promise<void> {
  const { dataRoot, mounter, registry } = parts;
  parts.scheduler.cancel(volumeId);
  parts.readiness.forget(volumeId);
  registry.abort(volumeId, new Error('volume unpublished'));
  await registry.runningPublish(volumeId)?.work.catch(() => undefined);
  await registry.runningRenewal(volumeId)?.catch(() => undefined);
  const release = await registry.lock(volumeId);
  try {
    // Again under the lock: a publish may have created the volume or recorded another target.
    const scope = await unpublishScope(dataRoot, volumeId, targetPath);
    if (scope === 'elsewhere') {
      logElsewhere(parts, volumeId, targetPath);
      return;
    }
    if (scope !== 'unknown') {
      await mounter.unpublish(dataRoot.dataDir(volumeId), targetPath, scope === 'recorded');
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
}

function logElsewhere(parts: ManagerParts, volumeId: string, targetPath: string): void {
  parts.logger.warn(
    { volumeId, targetPath: targetPath.slice(0, 200) },
    'unpublish names a target this volume is not published at: nothing done',
  );
}
