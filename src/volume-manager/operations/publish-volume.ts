import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { specFromVolumeContext } from '../../attributes/stored-spec.js';
import { errorMessage } from '../../base/error-message.js';
import { type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import { checkPublishTarget } from '../../volume/target/publish-scope.js';
import {
  readJksPassword,
  readPkcs12Password,
  writeJksPassword,
  writePkcs12Password,
} from '../../volume/volume-secrets.js';
import { IssuanceError } from '../issuance/obtain-certificate.js';
import type { ManagerParts } from '../manager-parts.js';
import {
  type PublishedVolume,
  RepublishConflictError,
  republishDifferences,
} from '../policy/republish-check.js';
import { markWaiting, watchPod } from '../readiness/waiting-volume.js';
import { readStoredMetadata } from '../state/stored-volume.js';
import type { VolumeState } from '../state/volume-registry.js';
import type { PublishRequest, PublishResult } from '../volume-publisher.js';

/**
 * Publishes a volume; concurrent calls for one volume share one issuance. A publish with
 * other attributes, another volume capability or another target than the published volume is
 * refused (RepublishConflictError); one that meets an unpublish of the volume is aborted. A
 * refused publish leaves nothing behind, in memory or on disk: every refusal comes before the
 * volume is registered (registerVolume), and a volume published before keeps what it had.
 */
export function publishVolume(
  parts: ManagerParts,
  request: PublishRequest,
): Promise<PublishResult> {
  const { registry } = parts;
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
  return registry.startPublish(request, () => publishOnce(parts, request));
}

async function publishOnce(parts: ManagerParts, request: PublishRequest): Promise<PublishResult> {
  const { dataRoot, mounter } = parts;
  const { volumeId, targetPath } = request;
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
  // A first publish, before anything is written: what the node can check of the issuer.
  const refusal = existing ? undefined : parts.issuanceCheck?.(request);
  if (refusal !== undefined) throw new IssuanceError(refusal, 'denied');
  await checkPublishTarget(dataRoot, mounter, volumeId, targetPath, existing);
  // No await from here to registerVolume: what the checks saw still holds there.
  const waitingAlready = existing?.waiting !== undefined && parts.readiness.isWatching(volumeId);
  if (existing && (isUsable(existing, parts.clock.now()) || waitingAlready)) {
    const state = registerVolume(parts, request);
    return ensureMounted(parts, request, existing, state, waitingAlready);
  }
  // A pod that can never become ready is refused.
  const ready = readiness(parts, request);
  const state = registerVolume(parts, request);
  return issueAndMount(parts, request, existing, state, ready);
}

/**
 * Registers a publish that passed its checks: the volume's state and the pod's tokens, and its
 * trust bundle followed. An unpublish that began meanwhile waits for this publish: it ends
 * here, aborted, with nothing registered.
 */
function registerVolume(parts: ManagerParts, request: PublishRequest): VolumeState {
  const { registry } = parts;
  if (registry.isUnpublishing(request.volumeId)) throw unpublishingError();
  const state = registry.registerPublish(request.volumeId);
  parts.trustBundles.track(request.volumeId, request.spec, request.targetPath);
  return state;
}

/** Republish of a volume ready already (kubelet republishes often): only makes sure of the mount. */
async function ensureMounted(
  parts: ManagerParts,
  request: PublishRequest,
  existing: VolumeMetadata,
  state: VolumeState,
  waitingAlready: boolean,
): Promise<PublishResult> {
  const { dataRoot, mounter } = parts;
  const { volumeId, targetPath, spec } = request;
  await mounter.publish(dataRoot.dataDir(volumeId), targetPath);
  throwIfUnpublished(state);
  await mounter.refresh(dataRoot.dataDir(volumeId), targetPath, spec.fsGroup);
  throwIfUnpublished(state);
  if (!parts.scheduler.has(volumeId) && !waitingAlready) {
    parts.scheduler.schedule(volumeId, existing, spec);
  }
  return {
    issued: false,
    ...times(existing),
    ...(waitingAlready && existing.waiting ? { waiting: existing.waiting.reason } : {}),
  };
}

/**
 * Writes the volume's record, issues its certificate (or marks it waiting for its pod) and
 * mounts it. On failure, a volume that had nothing worth keeping is removed and forgotten.
 */
async function issueAndMount(
  parts: ManagerParts,
  request: PublishRequest,
  existing: VolumeMetadata | undefined,
  state: VolumeState,
  ready: ReturnType<typeof readiness>,
): Promise<PublishResult> {
  const { dataRoot, mounter } = parts;
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
    if (!ready.ready) {
      // --continue-on-not-ready (or ${POD_IP}): mounted empty now, issued once the pod is ready.
      // Watched from now on: a change during the steps below is looked at after the publish.
      parts.readiness.watch(volumeId, spec.pod);
      await markWaiting(parts, volumeId, metadata, ready.reason);
      await mounter.publish(dataRoot.dataDir(volumeId), targetPath);
      throwIfUnpublished(state);
      await mounter.refresh(dataRoot.dataDir(volumeId), targetPath, spec.fsGroup);
      throwIfUnpublished(state);
      return { issued: false, waiting: ready.reason };
    }
    const issued = await parts.issuance.issue(volumeId, ready.spec, metadata, state);
    parts.onIssued(volumeId, issued, 'publish');
    // Each step that an unpublish overtook ends the publish as aborted, not as its own error.
    throwIfUnpublished(state);
    await mounter.publish(dataRoot.dataDir(volumeId), targetPath);
    throwIfUnpublished(state);
    await mounter.refresh(dataRoot.dataDir(volumeId), targetPath, spec.fsGroup);
    throwIfUnpublished(state);
    parts.scheduler.schedule(volumeId, metadata, spec);
    // Re-issued when the pod IPs its SANs name change.
    if (ready.spec.podIPs) watchPod(parts, volumeId, spec.pod);
    return { issued: true, notAfter: issued.notAfter, nextIssuanceTime: issued.nextIssuanceTime };
  } catch (err) {
    const outcome = await parts.failures.recordPublishFailure(volumeId, metadata, state, err);
    // Nothing left on disk, nothing left in memory: kubelet's retry starts afresh.
    if (outcome === 'removed') forgetFollowers(parts, volumeId);
    if (state.abort.signal.aborted) throw abortedError(state, err);
    parts.onFailed(volumeId, metadata.volumeContext, err);
    throw err;
  }
}

/** Stops following a volume removed after its failed first publish (the registry forgot it). */
function forgetFollowers(parts: ManagerParts, volumeId: string): void {
  parts.trustBundles.untrack(volumeId);
  parts.readiness.forget(volumeId);
  parts.scheduler.cancel(volumeId);
  parts.failures.forget(volumeId);
}

/**
 * Whether the publish may issue now, with the spec to issue (expanded with the pod's IPs when
 * it uses them), or why it waits. A pod that can never change (embedded mode) and is not
 * ready is refused: waiting would wait forever.
 */
function readiness(
  parts: ManagerParts,
  request: PublishRequest,
): { ready: true; spec: VolumeCertificateSpec } | { ready: false; reason: string } {
  const { spec } = request;
  if (!parts.readiness.applies(spec)) return { ready: true, spec };
  const verdict = parts.readiness.evaluate(spec, request.volumeContext);
  if (!verdict.ready) {
    if (parts.readiness.canWait) return verdict;
    throw new IssuanceError(
      `the pod is not ready for issuance: ${verdict.reason} (in embedded mode the pod is described by the volume context alone: give its IPs with cert-csi publish --pod-ip)`,
      'failed',
    );
  }
  if (!verdict.podIPs) return { ready: true, spec };
  try {
    return {
      ready: true,
      spec: specFromVolumeContext(request.volumeContext, request.volumeMountGroup, verdict.podIPs),
    };
  } catch (err) {
    throw new IssuanceError(
      `the volume attributes are invalid with the pod's IPs ${verdict.podIPs.join(',')}: ${errorMessage(err)}`,
      'failed',
    );
  }
}

/** A publish request as the side of a republish comparison (a running publish counts as issued). */
function asPublished(request: PublishRequest): PublishedVolume {
  return {
    targetPath: request.targetPath,
    volumeContext: request.volumeContext,
    volumeMountGroup: request.volumeMountGroup,
    volumeCapability: request.capability,
    pkcs12Password: request.spec.files.pkcs12?.password,
    jksPassword: request.spec.files.jks?.password,
    issued: true,
  };
}

/** A publish that met an unpublish of its volume (kubelet retries it if the pod still wants it). */
function unpublishingError(): IssuanceError {
  return new IssuanceError('publish aborted: the volume is being unpublished', 'aborted');
}

/** Ends a publish whose volume was unpublished (or the plugin stopped) before this step. */
function throwIfUnpublished(state: VolumeState): void {
  if (state.abort.signal.aborted) throw abortedError(state);
}

// The issuance's own abort error says what it was waiting for; keep it.
function abortedError(state: VolumeState, cause?: unknown): IssuanceError {
  if (cause instanceof IssuanceError && cause.reason === 'aborted') return cause;
  return new IssuanceError(
    `publish aborted: ${errorMessage(state.abort.signal.reason)}`,
    'aborted',
  );
}

/** A volume whose certificate is on disk and not yet expired. */
function isUsable(metadata: VolumeMetadata, now: number): boolean {
  if (!metadata.nextIssuanceTime || !metadata.notAfter) return false;
  return Date.parse(metadata.notAfter) > now;
}

function times(metadata: VolumeMetadata): { notAfter?: Date; nextIssuanceTime?: Date } {
  return {
    ...(metadata.notAfter ? { notAfter: new Date(metadata.notAfter) } : {}),
    ...(metadata.nextIssuanceTime ? { nextIssuanceTime: new Date(metadata.nextIssuanceTime) } : {}),
  };
}
