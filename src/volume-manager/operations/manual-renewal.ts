import type { RenewOutcome, RenewTarget } from '../control/control-protocol.js';
import type { ManagerParts } from '../manager-parts.js';
import { readStoredMetadata } from '../state/stored-volume.js';
import { renewVolume } from './renew-volume.js';

/**
 * Renews on request (`cert-csi renew`), whatever the renewal time and backoff say; progress
 * gets the outcome so far each time a volume is done.
 */
export async function renewNow(
  parts: ManagerParts,
  target: RenewTarget,
  progress: (soFar: RenewOutcome) => void,
): Promise<RenewOutcome> {
  const ids = 'all' in target ? parts.registry.volumeIds() : [target.volumeId];
  const outcome: RenewOutcome = { renewed: [], failed: [] };
  await Promise.all(
    ids.map(async (volumeId) => {
      const refusal = await notRenewable(parts, volumeId);
      if (refusal) {
        outcome.failed.push({ volumeId, error: refusal });
        progress(outcome);
        return;
      }
      // A renewal already running answers for the time before this request: wait for it,
      // then renew again.
      await parts.registry.runningRenewal(volumeId)?.catch(() => undefined);
      const issued = await renewVolume(parts, volumeId, 'manual request');
      if (issued) {
        outcome.renewed.push({
          volumeId,
          notAfter: issued.notAfter.toISOString(),
          nextIssuanceTime: issued.nextIssuanceTime.toISOString(),
        });
        progress(outcome);
      } else {
        const metadata = await readStoredMetadata(parts.dataRoot, volumeId);
        outcome.failed.push({
          volumeId,
          error:
            parts.failures.unsavedError(volumeId) ??
            (metadata?.waiting && `waiting for the pod: ${metadata.waiting.reason}`) ??
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
async function notRenewable(parts: ManagerParts, volumeId: string): Promise<string | undefined> {
  if (!parts.registry.has(volumeId)) return 'not a volume managed by this plugin';
  if (
    parts.registry.runningPublish(volumeId) &&
    !(await readStoredMetadata(parts.dataRoot, volumeId))?.nextIssuanceTime
  ) {
    return 'its first publish is still in progress: no certificate to renew yet';
  }
  return undefined;
}
