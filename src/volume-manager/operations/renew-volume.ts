import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { expandPodIPs } from '../../attributes/pod-ip-expansion.js';
import type { Mounter } from '../../volume/mounter.js';
import type { IssuedCertificate } from '../issuance/certificate-files.js';
import type { VolumeIssuance } from '../issuance/volume-issuance.js';
import { reissueDecision } from '../policy/reissue-decision.js';
import type { ReadinessVerdict } from '../readiness/pod-readiness.js';
import { markWaiting, type WaitingVolumeDeps } from '../readiness/waiting-volume.js';
import type { VolumeReloader } from '../reload/volume-reloader.js';
import type { FailureRecorder } from '../state/failure-recorder.js';
import type { RenewalScheduler } from '../state/renewal-scheduler.js';
import { readStoredMetadata, storedKey } from '../state/stored-volume.js';

/** Told after each certificate written (first issuance or renewal), with why it was issued. */
export type IssuedListener = (volumeId: string, issued: IssuedCertificate, reason: string) => void;

/** Told when a publish or renewal fails (not when it was cut short by an unpublish). */
export type FailedListener = (
  volumeId: string,
  volumeContext: Record<string, string>,
  err: unknown,
) => void;

/** What a renewal works with. */
export interface RenewalDeps extends WaitingVolumeDeps {
  mounter: Pick<Mounter, 'refresh'>;
  issuance: Pick<VolumeIssuance, 'issue'>;
  scheduler: RenewalScheduler;
  failures: FailureRecorder;
  /** Told of each renewal written, to tell the application (reload-url, reload-signal). */
  reloader: Pick<VolumeReloader, 'rewritten'>;
  onIssued: IssuedListener;
  onFailed: FailedListener;
}

/**
 * Renews one managed volume now (its timer, a manual request or a pod change); a renewal
 * already running for it answers instead. It works from the spec the volume is managed with
 * (parsed once, at publish or at start). Failures are recorded in metadata.json with the
 * backoff's retry time, so a restart does not burst; resolves undefined when the volume is
 * gone, waits for its pod, or the renewal failed.
 */
export function renewVolume(
  deps: RenewalDeps,
  volumeId: string,
  reason: string,
): Promise<IssuedCertificate | undefined> {
  const running = deps.registry.runningRenewal(volumeId);
  if (running) return running;
  return deps.registry.startRenewal(volumeId, () => renewOnce(deps, volumeId, reason));
}

async function renewOnce(
  deps: RenewalDeps,
  volumeId: string,
  reason: string,
): Promise<IssuedCertificate | undefined> {
  const { dataRoot, mounter, readiness } = deps;
  const managed = deps.registry.managed(volumeId);
  if (!managed) return undefined;
  const metadata = await readStoredMetadata(dataRoot, volumeId);
  if (!metadata) return undefined;
  const { state, spec } = managed;
  const log = deps.logger.child({ volumeId });
  try {
    const applies = readiness.applies(spec);
    const verdict: ReadinessVerdict = applies
      ? readiness.evaluate(spec, metadata.volumeContext)
      : { ready: true };
    const decision = reissueDecision({ event: 'renewal', reason, readiness: verdict });
    if (decision.action === 'wait-for-pod') {
      // A volume whose gates passed at publish was not watched: its pod's next change ends the
      // wait, not only the gate backoff.
      readiness.watch(volumeId, spec.pod);
      await markWaiting(deps, volumeId, metadata, decision.reason);
      return undefined;
    }
    if (applies) {
      readiness.passed(volumeId);
      // Written with the next metadata.json write: the issuance's, or its failure's.
      delete metadata.waiting;
    }
    const issueSpec = withPodIPs(spec, decision.podIPs);
    log.info({ reason: decision.reason }, 'renewing certificate');
    const reuseKey = spec.reusePrivateKey ? await storedKey(dataRoot, volumeId, spec) : undefined;
    const issued = await deps.issuance.issue(volumeId, issueSpec, metadata, state, reuseKey);
    await mounter.refresh(dataRoot.dataDir(volumeId), metadata.targetPath, spec.fsGroup);
    // Detached: a slow endpoint delays neither this renewal nor any other volume.
    deps.reloader.rewritten(volumeId, spec, metadata.volumeContext);
    deps.onIssued(volumeId, issued, decision.reason);
    log.info(
      {
        notAfter: issued.notAfter.toISOString(),
        nextIssuanceTime: issued.nextIssuanceTime.toISOString(),
      },
      'certificate renewed',
    );
    // Stopped or unpublished meanwhile: no timer may outlive the volume or the plugin.
    if (!state.abort.signal.aborted) deps.scheduler.schedule(volumeId, metadata, spec);
    return issued;
  } catch (err) {
    if (state.abort.signal.aborted) return undefined;
    if (await deps.failures.recordRenewalFailure(volumeId, metadata, err)) {
      deps.scheduler.schedule(volumeId, metadata, spec);
    }
    deps.onFailed(volumeId, metadata.volumeContext, err);
    return undefined;
  }
}

/**
 * The spec to issue: the managed one, with ${POD_IP} and ${POD_IPS} expanded to the pod's IPs
 * when it uses them. Throws when the attributes are invalid with those IPs (e.g. a zoned
 * address in ip-sans): a failed renewal, retried after the backoff.
 */
function withPodIPs(
  spec: VolumeCertificateSpec,
  podIPs: readonly string[] | undefined,
): VolumeCertificateSpec {
  if (!podIPs) return spec;
  const expanded = expandPodIPs(spec, podIPs);
  if (!expanded.ok) throw new Error(expanded.message);
  return expanded.spec;
}
