import type { DataRoot } from '../../volume/data-root.js';
import type { RenewOutcome, RenewTarget } from '../control/control-protocol.js';
import type { IssuedCertificate } from '../issuance/certificate-files.js';
import { reissueDecision } from '../policy/reissue-decision.js';
import type { FailureRecorder } from '../state/failure-recorder.js';
import type { RenewalsAsked } from '../state/renewals-asked.js';
import { readStoredMetadata } from '../state/stored-volume.js';
import type { VolumeRegistry } from '../state/volume-registry.js';

/** What a manual renewal works with. */
export interface ManualRenewalDeps {
  registry: VolumeRegistry;
  dataRoot: DataRoot;
  failures: Pick<FailureRecorder, 'unsavedError'>;
  /** Where each volume asked for is held until it is done (`cert-csi status` shows them). */
  asked: RenewalsAsked;
  /** Renews one volume now for a reason (the volume manager's renew). */
  renew: (volumeId: string, reason: string) => Promise<IssuedCertificate | undefined>;
}

/**
 * Renews on request (`cert-csi renew`), whatever the renewal time and backoff say; progress
 * gets the outcome so far each time a volume is done. Each volume is held in deps.asked from
 * the call until its outcome is in.
 */
export async function renewNow(
  deps: ManualRenewalDeps,
  target: RenewTarget,
  progress: (soFar: RenewOutcome) => void,
): Promise<RenewOutcome> {
  const ids = 'all' in target ? deps.registry.volumeIds() : [target.volumeId];
  const outcome: RenewOutcome = { renewed: [], failed: [] };
  // At once, before any wait: from the moment the request is taken, status shows it.
  deps.asked.ask(ids);
  await Promise.all(
    ids.map(async (volumeId) => {
      try {
        await renewOne(deps, volumeId, outcome);
      } finally {
        deps.asked.done(volumeId);
      }
      // Told after the volume left deps.asked: whoever hears it is done sees it so in status.
      progress(outcome);
    }),
  );
  return outcome;
}

// Renews one volume of a request and adds what came of it to outcome.
async function renewOne(
  deps: ManualRenewalDeps,
  volumeId: string,
  outcome: RenewOutcome,
): Promise<void> {
  const decision = reissueDecision({
    event: 'manual',
    managed: deps.registry.has(volumeId),
    publishRunning: deps.registry.runningPublish(volumeId) !== undefined,
    record: await readStoredMetadata(deps.dataRoot, volumeId),
  });
  if (decision.action === 'refuse') {
    outcome.failed.push({ volumeId, error: decision.reason });
    return;
  }
  // A renewal already running answers for the time before this request: wait for it,
  // then renew again.
  await deps.registry.runningRenewal(volumeId)?.catch(() => undefined);
  const issued = await deps.renew(volumeId, decision.reason);
  if (issued) {
    outcome.renewed.push({
      volumeId,
      notAfter: issued.notAfter.toISOString(),
      nextIssuanceTime: issued.nextIssuanceTime.toISOString(),
    });
    return;
  }
  const metadata = await readStoredMetadata(deps.dataRoot, volumeId);
  outcome.failed.push({
    volumeId,
    error:
      deps.failures.unsavedError(volumeId) ??
      (metadata?.waiting && `waiting for the pod: ${metadata.waiting.reason}`) ??
      metadata?.lastError?.message ??
      'the volume was unpublished',
  });
}
