import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { expandPodIPs } from '../../attributes/pod-ip-expansion.js';
import { type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import type { Mounter } from '../../volume/mounter.js';
import { checkPublishTarget } from '../../volume/target/publish-scope.js';
import {
  readJksPassword,
  readPkcs12Password,
  writeJksPassword,
  writePkcs12Password,
} from '../../volume/volume-secrets.js';
import type { IssuanceCheck } from '../issuance/issuance-check.js';
import { IssuanceError } from '../issuance/issuance-error.js';
import type { VolumeIssuance } from '../issuance/volume-issuance.js';
import { reissueDecision } from '../policy/reissue-decision.js';
import {
  asPublished,
  type PublishedVolume,
  RepublishConflictError,
  republishDifferences,
} from '../policy/republish-check.js';
import { markWaiting, type WaitingVolumeDeps, watchPod } from '../readiness/waiting-volume.js';
import {
  ReloadRefusedError,
  type ReloadSignalMode,
  reloadRefusal,
} from '../reload/volume-reloader.js';
import type { FailureRecorder } from '../state/failure-recorder.js';
import type { RenewalScheduler } from '../state/renewal-scheduler.js';
import { readStoredMetadata } from '../state/stored-volume.js';
import type { VolumeState } from '../state/volume-registry.js';
import type { VolumeTelemetry } from '../telemetry/volume-telemetry.js';
import type { TrustBundleVolumes } from '../trust-bundles/trust-bundle-volumes.js';
import type { PublishRequest, PublishResult } from '../volume-publisher.js';
import { abortedError, throwIfUnpublished, unpublishingError } from './publish-aborts.js';
import type { FailedListener, IssuedListener } from './renew-volume.js';

/** What a publish works with. */
export interface PublishDeps extends WaitingVolumeDeps {
  mounter: Mounter;
  trustBundles: Pick<TrustBundleVolumes, 'track' | 'untrack'>;
  scheduler: RenewalScheduler;
  issuance: Pick<VolumeIssuance, 'issue'>;
  failures: FailureRecorder;
  /** What a first publish must pass besides its attributes (embedded mode); none when absent. */
  issuanceCheck?: IssuanceCheck | undefined;
  /** Whether this node serves reload-signal (a volume asking for what it does not is refused). */
  reloadSignals: ReloadSignalMode;
  /** Told of each certificate kept at a volume's first publish since the start (a re-issue avoided). */
  telemetry: Pick<VolumeTelemetry, 'kept'>;
  onIssued: IssuedListener;
  onFailed: FailedListener;
}

/**
 * Publishes a volume; concurrent calls for one volume share one issuance. A publish with
 * other attributes, another volume capability or another target than the published volume is
 * refused (RepublishConflictError); one that meets an unpublish of the volume is aborted. A
 * refused publish leaves nothing behind, in memory or on disk: every refusal comes before the
 * volume is registered (registerVolume), and a volume published before keeps what it had.
 */
export function publishVolume(deps: PublishDeps, request: PublishRequest): Promise<PublishResult> {
  const { registry } = deps;
  const { volumeId } = request;
  if (registry.isUnpublishing(volumeId)) return Promise.reject(unpublishingError());
  const running = registry.runningPublish(volumeId);
  if (running) {
    const differences = republishDifferences(asPublished(running.request), asPublished(request));
    if (differences.length > 0) {
      return Promise.reject(new RepublishConflictError(volumeId, differences));
    }
    return registry.joinPublish(running, request);
  }
  return registry.startPublish(request, () => publishOnce(deps, request));
}

async function publishOnce(deps: PublishDeps, request: PublishRequest): Promise<PublishResult> {
  const { dataRoot, mounter, readiness } = deps;
  const { volumeId, targetPath, spec } = request;
  // The checks: each refuses before anything is registered or written.
  const existing = await readStoredMetadata(dataRoot, volumeId);
  if (existing) {
    // Attributes are immutable: the certificate on disk was issued for the published ones.
    const published: PublishedVolume = {
      ...existing,
      pkcs12Password: await readPkcs12Password(dataRoot, volumeId),
      jksPassword: await readJksPassword(dataRoot, volumeId),
      issued: existing.nextIssuanceTime !== undefined,
    };
    const differences = republishDifferences(published, asPublished(request));
    if (differences.length > 0) throw new RepublishConflictError(volumeId, differences);
  }
  const reloadProblem = reloadRefusal(spec.reload, deps.reloadSignals);
  if (reloadProblem !== undefined) throw new ReloadRefusedError(reloadProblem);
  // A first publish, before anything is written: what the node can check of the issuer.
  const refusal = existing ? undefined : deps.issuanceCheck?.(request);
  if (refusal !== undefined) throw new IssuanceError(refusal.message, refusal.reason);
  await checkPublishTarget(dataRoot, mounter, volumeId, targetPath, existing);
  // No await from here to registerVolume: what the checks saw still holds there.
  const decision = reissueDecision({
    event: 'publish',
    record: existing,
    podWatched: readiness.isWatching(volumeId),
    readiness: readiness.verdict(spec, request.volumeContext),
    canWait: readiness.canWait,
    now: deps.clock.now(),
  });
  switch (decision.action) {
    case 'mount-only':
    case 'keep-waiting': {
      // Read before registerVolume records this publish.
      const firstHere = !deps.registry.wasPublishedHere(volumeId);
      const state = registerVolume(deps, request);
      // Only a volume on disk (existing) is mounted without an issuance.
      return ensureMounted(deps, request, existing as VolumeMetadata, state, decision, firstHere);
    }
    case 'refuse':
      throw new IssuanceError(
        `the pod is not ready for issuance: ${decision.reason} (in embedded mode the pod is described by the volume context alone: give its IPs with cert-csi publish --pod-ip)`,
        'failed',
      );
    case 'wait-for-pod': {
      const state = registerVolume(deps, request);
      return issueAndMount(deps, request, existing, state, { waitingFor: decision.reason });
    }
    case 'issue': {
      // Before anything is registered: attributes invalid with the pod's IPs refuse the publish.
      const issueSpec = withPodIPs(spec, decision.podIPs);
      return issueAndMount(deps, request, existing, registerVolume(deps, request), { issueSpec });
    }
  }
}

/**
 * Registers a publish that passed its checks: the volume's state and spec and the pod's tokens,
 * and its trust bundle followed. An unpublish that began meanwhile waits for this publish: it
 * ends here, aborted, with nothing registered.
 */
function registerVolume(deps: PublishDeps, request: PublishRequest): VolumeState {
  const { registry } = deps;
  if (registry.isUnpublishing(request.volumeId)) throw unpublishingError();
  const state = registry.registerPublish(request.volumeId);
  deps.trustBundles.track(request.volumeId, request.spec, request.targetPath);
  return state;
}

/**
 * Republish of a volume ready already (kubelet republishes often), or waiting for its pod:
 * only makes sure of the mount (and of the timer of a ready one). A ready one's first publish
 * since the start (firstHere: after a restart or a reboot) kept its certificate: told.
 */
async function ensureMounted(
  deps: PublishDeps,
  request: PublishRequest,
  existing: VolumeMetadata,
  state: VolumeState,
  decision: { action: 'mount-only' } | { action: 'keep-waiting'; reason: string },
  firstHere: boolean,
): Promise<PublishResult> {
  const { volumeId, spec } = request;
  await mount(deps, request, state);
  if (firstHere && decision.action === 'mount-only') deps.telemetry.kept(volumeId);
  if (decision.action === 'keep-waiting') {
    return { issued: false, ...times(existing), waiting: decision.reason };
  }
  if (!deps.scheduler.has(volumeId)) deps.scheduler.schedule(volumeId, existing, spec);
  return { issued: false, ...times(existing) };
}

/**
 * Writes the volume's record, issues its certificate (or marks it waiting for its pod) and
 * mounts it. On failure, a volume that had nothing worth keeping is removed and forgotten.
 */
async function issueAndMount(
  deps: PublishDeps,
  request: PublishRequest,
  existing: VolumeMetadata | undefined,
  state: VolumeState,
  /** Wait for the pod, or issue with this spec. */
  work: { waitingFor: string } | { issueSpec: VolumeCertificateSpec },
): Promise<PublishResult> {
  const { dataRoot } = deps;
  const { volumeId, targetPath, spec } = request;
  const metadata: VolumeMetadata = {
    ...existing,
    volumeId,
    targetPath,
    volumeContext: request.volumeContext,
    ...(request.volumeMountGroup ? { volumeMountGroup: request.volumeMountGroup } : {}),
    volumeCapability: request.capability,
  };
  try {
    await dataRoot.ensureVolume(volumeId, spec.fsGroup);
    await writeMetadata(dataRoot, metadata);
    if (spec.files.pkcs12) {
      // Kept beside the key, not in metadata.json, for renewals after a restart.
      await writePkcs12Password(dataRoot, volumeId, spec.files.pkcs12.password);
    }
    if (spec.files.jks) await writeJksPassword(dataRoot, volumeId, spec.files.jks.password);
    if ('waitingFor' in work) {
      // --continue-on-not-ready (or ${POD_IP}): mounted empty now, issued once the pod is ready.
      // Watched from now on: a change during the steps below is looked at after the publish.
      deps.readiness.watch(volumeId, spec.pod);
      await markWaiting(deps, volumeId, metadata, work.waitingFor);
      await mount(deps, request, state);
      return { issued: false, waiting: work.waitingFor };
    }
    const issued = await deps.issuance.issue(volumeId, work.issueSpec, metadata, state);
    deps.onIssued(volumeId, issued, 'publish');
    // Each step that an unpublish overtook ends the publish as aborted, not as its own error.
    throwIfUnpublished(state);
    await mount(deps, request, state);
    deps.scheduler.schedule(volumeId, metadata, spec);
    // Re-issued when the pod IPs its SANs name change.
    if (work.issueSpec.podIPs) watchPod(deps.readiness, volumeId, spec.pod);
    return { issued: true, notAfter: issued.notAfter, nextIssuanceTime: issued.nextIssuanceTime };
  } catch (err) {
    const outcome = await deps.failures.recordPublishFailure(volumeId, metadata, state, err);
    // Nothing left on disk, nothing left in memory: kubelet's retry starts afresh.
    if (outcome === 'removed') forgetFollowers(deps, volumeId);
    if (state.abort.signal.aborted) throw abortedError(state, err);
    deps.onFailed(volumeId, metadata.volumeContext, err);
    throw err;
  }
}

/**
 * Mounts the data dir at the target (in direct mode: mirrors its current files there, which is
 * all a refresh would do again); an unpublish overtaking it ends the publish.
 */
async function mount(deps: PublishDeps, request: PublishRequest, state: VolumeState) {
  const { dataRoot, mounter } = deps;
  await mounter.publish(dataRoot.dataDir(request.volumeId), request.targetPath);
  throwIfUnpublished(state);
}

/** Stops following a volume removed after its failed first publish (the registry forgot it). */
function forgetFollowers(deps: PublishDeps, volumeId: string): void {
  deps.trustBundles.untrack(volumeId);
  deps.readiness.forget(volumeId);
  deps.scheduler.cancel(volumeId);
  deps.failures.forget(volumeId);
}

/**
 * The spec to issue: as published, or with ${POD_IP} and ${POD_IPS} expanded to the pod's IPs
 * when it uses them. Attributes invalid with those IPs refuse the publish.
 */
function withPodIPs(
  spec: VolumeCertificateSpec,
  podIPs: readonly string[] | undefined,
): VolumeCertificateSpec {
  if (!podIPs) return spec;
  const expanded = expandPodIPs(spec, podIPs);
  if (expanded.ok) return expanded.spec;
  throw new IssuanceError(
    `the volume attributes are invalid with the pod's IPs ${podIPs.join(',')}: ${expanded.message}`,
    'failed',
  );
}

function times(metadata: VolumeMetadata): { notAfter?: Date; nextIssuanceTime?: Date } {
  return {
    ...(metadata.notAfter ? { notAfter: new Date(metadata.notAfter) } : {}),
    ...(metadata.nextIssuanceTime ? { nextIssuanceTime: new Date(metadata.nextIssuanceTime) } : {}),
  };
}
