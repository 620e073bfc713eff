import { errorMessage } from '../../base/error-message.js';
import { reissueDecision } from '../policy/reissue-decision.js';
import { markWaiting, type WaitingVolumeDeps } from '../readiness/waiting-volume.js';
import { readStoredMetadata } from '../state/stored-volume.js';

/** What a pod change works with: what marking a volume waiting does (renewals go through renew). */
export type PodChangeDeps = WaitingVolumeDeps;

/** Renews a volume now for a reason (the volume manager's renew). */
export type RenewFunction = (volumeId: string, reason: string) => Promise<unknown>;

/**
 * A watched volume's pod changed (or its gate retry is due): a waiting volume whose pod is
 * ready now is issued; an issued one whose pod IPs differ from those of its certificate is
 * re-issued (the reissue decision says which). Runs after the volume's publish or renewal
 * under way, so no change is missed. Never rejects (it runs from an informer event, where a
 * rejection would stop the process): a failure is logged, and the pod's next change or the
 * gate retry looks again.
 */
export async function podChanged(
  deps: PodChangeDeps,
  volumeId: string,
  renew: RenewFunction,
): Promise<void> {
  try {
    await lookAtPod(deps, volumeId, renew);
  } catch (err) {
    deps.logger.error(
      { volumeId, err: errorMessage(err) },
      'cannot act on the change of the volume pod; its next change or gate retry looks again',
    );
  }
}

async function lookAtPod(
  deps: PodChangeDeps,
  volumeId: string,
  renew: RenewFunction,
): Promise<void> {
  const { registry } = deps;
  await registry.runningPublish(volumeId)?.work.catch(() => undefined);
  await registry.runningRenewal(volumeId)?.catch(() => undefined);
  // Its spec was parsed once, at its publish or at start: the pod's change asks for no parse.
  const managed = registry.managed(volumeId);
  if (!managed) return;
  const metadata = await readStoredMetadata(deps.dataRoot, volumeId);
  if (!metadata) return;
  const decision = reissueDecision({
    event: 'pod-change',
    record: metadata,
    readiness: deps.readiness.evaluate(managed.spec, metadata.volumeContext),
  });
  if (decision.action === 'wait-for-pod') {
    await markWaiting(deps, volumeId, metadata, decision.reason);
  } else if (decision.action === 'issue') {
    await renew(volumeId, decision.reason);
  }
}
