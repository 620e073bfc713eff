import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { errorMessage } from '../../base/error-message.js';
import type { IssuedCertificate } from '../issuance/obtain-certificate.js';
import type { ManagerParts } from '../manager-parts.js';
import { specWhenReady } from '../readiness/waiting-volume.js';
import { readStoredMetadata, storedKey, storedSpec } from '../state/stored-volume.js';

/**
 * Renews one managed volume now (its timer, or a manual request); a renewal already running
 * for it answers instead. Failures are recorded in metadata.json with the backoff's retry
 * time, so a restart does not burst; resolves undefined when the volume is gone or the
 * renewal failed.
 */
export function renewVolume(
  parts: ManagerParts,
  volumeId: string,
  reason: string,
): Promise<IssuedCertificate | undefined> {
  const running = parts.registry.runningRenewal(volumeId);
  if (running) return running;
  return parts.registry.startRenewal(volumeId, () => renewOnce(parts, volumeId, reason));
}

async function renewOnce(
  parts: ManagerParts,
  volumeId: string,
  reason: string,
): Promise<IssuedCertificate | undefined> {
  const { dataRoot, mounter } = parts;
  const state = parts.registry.liveState(volumeId);
  if (!state) return undefined;
  const metadata = await readStoredMetadata(dataRoot, volumeId);
  if (!metadata) return undefined;
  const log = parts.logger.child({ volumeId });
  let spec: VolumeCertificateSpec;
  try {
    spec = await storedSpec(dataRoot, volumeId, metadata);
  } catch (err) {
    log.error({ err: errorMessage(err) }, 'cannot renew: the stored volume attributes are invalid');
    return undefined;
  }
  try {
    const readySpec = await specWhenReady(parts, volumeId, metadata, spec);
    // Marked waiting: the pod's next change (or the gate backoff) brings it back.
    if (!readySpec) return undefined;
    spec = readySpec;
    log.info({ reason }, 'renewing certificate');
    const reuseKey = spec.reusePrivateKey ? await storedKey(dataRoot, volumeId, spec) : undefined;
    const issued = await parts.issuance.issue(volumeId, spec, metadata, state, reuseKey);
    await mounter.refresh(dataRoot.dataDir(volumeId), metadata.targetPath, spec.fsGroup);
    parts.onIssued(volumeId, issued, reason);
    log.info(
      {
        notAfter: issued.notAfter.toISOString(),
        nextIssuanceTime: issued.nextIssuanceTime.toISOString(),
      },
      'certificate renewed',
    );
    // Stopped or unpublished meanwhile: no timer may outlive the volume or the plugin.
    if (!state.abort.signal.aborted) parts.scheduler.schedule(volumeId, metadata, spec);
    return issued;
  } catch (err) {
    if (state.abort.signal.aborted) return undefined;
    if (await parts.failures.recordRenewalFailure(volumeId, metadata, err)) {
      parts.scheduler.schedule(volumeId, metadata, spec);
    }
    parts.onFailed(volumeId, metadata.volumeContext, err);
    return undefined;
  }
}
