import type { Logger } from '../../api/logger.js';
import type { Clock } from '../../base/clock.js';
import type { DataRoot } from '../../volume/data-root.js';
import { type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import { countFailedAttempt } from '../policy/renewal-policy.js';
import type { VolumeRegistry } from '../state/volume-registry.js';
import type { PodReadiness } from './pod-readiness.js';

// The volume manager's side of readiness gates and ${POD_IP}: a volume whose pod is not ready
// is published empty and marked waiting in metadata.json (status shows why); the pod source's
// changes, or the gate backoff, bring it back (operations/pod-change.ts); it is issued once
// the gates pass, and re-issued when the pod IPs its SANs use change.

/** What marking a volume waiting works with. */
export interface WaitingVolumeDeps {
  readiness: PodReadiness;
  registry: VolumeRegistry;
  dataRoot: DataRoot;
  clock: Clock;
  logger: Logger;
}

/**
 * Records in metadata.json (under the volume's lock) that the volume waits for its pod, and
 * arms its gate retry. A gate wait starts the issuance backoff afresh (csi-lib's class
 * reset): the failure count and its retry time go, the last error stays for status. Nothing
 * is written when the reason is the one already recorded and no failure count was cleared.
 */
export async function markWaiting(
  deps: WaitingVolumeDeps,
  volumeId: string,
  metadata: VolumeMetadata,
  reason: string,
): Promise<void> {
  deps.readiness.retryLater(volumeId);
  const failures = metadata.failures ?? 0;
  const { issuance } = countFailedAttempt({ gate: 0, issuance: failures }, 'gate');
  const cleared = issuance !== failures;
  if (cleared) {
    delete metadata.failures;
    delete metadata.nextRetryTime;
  }
  if (metadata.waiting?.reason === reason && !cleared) return;
  if (metadata.waiting?.reason !== reason)
    metadata.waiting = { reason, since: new Date(deps.clock.now()).toISOString() };
  const release = await deps.registry.lock(volumeId);
  try {
    // Unpublished meanwhile: its dir is gone, do not recreate it.
    if (deps.registry.liveState(volumeId)) await writeMetadata(deps.dataRoot, metadata);
  } finally {
    release();
  }
  deps.logger.info({ volumeId, reason }, 'volume waits for its pod before issuance');
}

/**
 * Watches the volume's pod from now on, and looks at it once at once (a change may have
 * happened before the watch: during the first issuance, or while the plugin was down).
 */
export function watchPod(
  readiness: PodReadiness,
  volumeId: string,
  pod: { namespace: string; name: string },
): void {
  readiness.watch(volumeId, pod);
  readiness.look(volumeId);
}
