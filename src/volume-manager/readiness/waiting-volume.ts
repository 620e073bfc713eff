import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { errorMessage } from '../../base/error-message.js';
import { type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import type { ManagerParts } from '../manager-parts.js';
import { readStoredMetadata, storedSpec } from '../state/stored-volume.js';

// The volume manager's side of readiness gates and ${POD_IP}: a volume whose pod is not ready
// is published empty and marked waiting in metadata.json (status shows why); the pod source's
// changes, or the gate backoff, bring it back here; it is issued once the gates pass, and
// re-issued when the pod IPs its SANs use change.

/** Renews a volume now for a reason (the volume manager's renew). */
export type RenewFunction = (volumeId: string, reason: string) => Promise<unknown>;

/**
 * Records in metadata.json (under the volume's lock) that the volume waits for its pod, and
 * arms its gate retry; nothing is written when the reason is the one already recorded.
 */
export async function markWaiting(
  parts: ManagerParts,
  volumeId: string,
  metadata: VolumeMetadata,
  reason: string,
): Promise<void> {
  parts.readiness.retryLater(volumeId);
  if (metadata.waiting?.reason === reason) return;
  metadata.waiting = { reason, since: new Date(parts.clock.now()).toISOString() };
  const release = await parts.registry.lock(volumeId);
  try {
    // Unpublished meanwhile: its dir is gone, do not recreate it.
    if (parts.registry.liveState(volumeId)) await writeMetadata(parts.dataRoot, metadata);
  } finally {
    release();
  }
  parts.logger.info({ volumeId, reason }, 'volume waits for its pod before issuance');
}

/**
 * The spec to issue the volume with now: as stored, or expanded with the pod's current IPs;
 * undefined when the pod is not ready (the volume is then marked waiting). Throws when the
 * attributes are invalid with the pod's IPs (e.g. an IPv6 address in a DNS name).
 */
export async function specWhenReady(
  parts: ManagerParts,
  volumeId: string,
  metadata: VolumeMetadata,
  spec: VolumeCertificateSpec,
): Promise<VolumeCertificateSpec | undefined> {
  if (!parts.readiness.applies(spec)) return spec;
  const verdict = parts.readiness.evaluate(spec, metadata.volumeContext);
  if (!verdict.ready) {
    // A volume whose gates passed at publish was not watched: its pod's next change ends
    // the wait, not only the gate backoff.
    parts.readiness.watch(volumeId, spec.pod);
    await markWaiting(parts, volumeId, metadata, verdict.reason);
    return undefined;
  }
  parts.readiness.passed(volumeId);
  // Written with the next metadata.json write: the issuance's, or its failure's.
  delete metadata.waiting;
  if (!verdict.podIPs) return spec;
  return storedSpec(parts.dataRoot, volumeId, metadata, verdict.podIPs);
}

/**
 * Watches the volume's pod from now on, and looks at it once at once (a change may have
 * happened before the watch: during the first issuance, or while the plugin was down).
 */
export function watchPod(
  parts: Pick<ManagerParts, 'readiness'>,
  volumeId: string,
  pod: { namespace: string; name: string },
): void {
  parts.readiness.watch(volumeId, pod);
  parts.readiness.look(volumeId);
}

/**
 * A watched volume's pod changed (or its gate retry is due): a waiting volume whose pod is
 * ready now is issued; an issued one whose pod IPs differ from those of its certificate is
 * re-issued. Runs after the volume's publish or renewal under way, so no change is missed.
 * Never rejects (it runs from an informer event, where a rejection would stop the process):
 * a failure is logged, and the pod's next change or the gate retry looks again.
 */
export async function podChanged(
  parts: ManagerParts,
  volumeId: string,
  renew: RenewFunction,
): Promise<void> {
  try {
    await lookAtPod(parts, volumeId, renew);
  } catch (err) {
    parts.logger.error(
      { volumeId, err: errorMessage(err) },
      'cannot act on the change of the volume pod; its next change or gate retry looks again',
    );
  }
}

async function lookAtPod(
  parts: ManagerParts,
  volumeId: string,
  renew: RenewFunction,
): Promise<void> {
  const { registry } = parts;
  await registry.runningPublish(volumeId)?.work.catch(() => undefined);
  await registry.runningRenewal(volumeId)?.catch(() => undefined);
  if (!registry.liveState(volumeId)) return;
  const metadata = await readStoredMetadata(parts.dataRoot, volumeId);
  if (!metadata) return;
  let spec: VolumeCertificateSpec;
  try {
    spec = await storedSpec(parts.dataRoot, volumeId, metadata);
  } catch (err) {
    // Rediscovery and renewal log it; nothing to issue.
    parts.logger.debug({ volumeId, err: errorMessage(err) }, 'pod change of an invalid volume');
    return;
  }
  const verdict = parts.readiness.evaluate(spec, metadata.volumeContext);
  if (metadata.waiting) {
    if (!verdict.ready) {
      await markWaiting(parts, volumeId, metadata, verdict.reason);
      return;
    }
    await renew(volumeId, 'pod ready');
    return;
  }
  if (verdict.ready && verdict.podIPs && !sameList(verdict.podIPs, metadata.podIPs ?? [])) {
    await renew(volumeId, 'pod IPs changed');
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
