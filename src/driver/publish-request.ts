import { SERVICE_ACCOUNT_TOKENS_KEY } from '../attributes/attribute-keys.js';
import { formatAttributeErrors, parseVolumeAttributes } from '../attributes/volume-attributes.js';
import { errorMessage } from '../base/error-message.js';
import type { VolumeCapabilityRecord } from '../volume/metadata.js';
import { validateVolumeId } from '../volume/volume-id.js';
import type { PublishRequest } from '../volume-manager/volume-publisher.js';
import { invalidArgument } from './csi-error.js';
import type { NodePublishVolumeRequest, VolumeCapability } from './csi-messages.js';
import { targetPathProblems } from './target-path.js';

/** A checked publish request, and the legacy attribute keys it used. */
export interface CheckedPublish {
  request: PublishRequest;
  deprecatedKeys: string[];
}

/**
 * Checks a NodePublishVolume before anything is written: ids and paths (CSI spec:
 * InvalidArgument when missing), capability, read-only, and every volume attribute.
 * One InvalidArgument names every problem at once.
 */
export function checkPublishRequest(call: NodePublishVolumeRequest): CheckedPublish {
  const problems = volumeAndTargetProblems(call.volume_id, call.target_path);
  const capability = call.volume_capability;
  if (!capability) problems.push('volume_capability: required');
  else if (capability.block) {
    problems.push('volume_capability: block volumes are not supported, use a mount volume');
  }
  const record = capabilityRecord(capability);
  problems.push(...capabilityProblems(record));
  if (!call.readonly) {
    problems.push("readonly: pod.spec.volumes[].csi.readOnly must be set to 'true'");
  }
  const volumeMountGroup = capability?.mount?.volume_mount_group || undefined;
  const parsed = parseVolumeAttributes(
    call.volume_context ?? {},
    volumeMountGroup ? { volumeMountGroup } : {},
  );
  if (!parsed.ok) problems.push(formatAttributeErrors(parsed.errors));
  if (problems.length > 0 || !parsed.ok) {
    throw invalidArgument(problems.join('; '));
  }
  const { [SERVICE_ACCOUNT_TOKENS_KEY]: serviceAccountTokens, ...volumeContext } =
    call.volume_context ?? {};
  return {
    request: {
      volumeId: call.volume_id,
      targetPath: call.target_path,
      spec: parsed.spec,
      volumeContext,
      ...(volumeMountGroup ? { volumeMountGroup } : {}),
      capability: record,
      ...(serviceAccountTokens !== undefined ? { serviceAccountTokens } : {}),
    },
    deprecatedKeys: parsed.deprecatedKeys,
  };
}

// mount(2) copies at most one page of option data, so no longer list could be mounted with.
const MOUNT_FLAGS_MAX_BYTES = 4096;
// NAME_MAX: file system type names are short words (ext4, xfs, tmpfs).
const FS_TYPE_MAX_BYTES = 255;

/** The parts of a volume_capability that a republish must repeat (metadata.json keeps them). */
function capabilityRecord(capability: VolumeCapability | null | undefined): VolumeCapabilityRecord {
  return {
    accessMode: String(capability?.access_mode?.mode ?? ''),
    fsType: capability?.mount?.fs_type ?? '',
    mountFlags: [...(capability?.mount?.mount_flags ?? [])],
  };
}

// The capability is kept in metadata.json: a client must not make it hold megabytes.
function capabilityProblems(record: VolumeCapabilityRecord): string[] {
  const problems: string[] = [];
  const flagBytes = Buffer.byteLength(record.mountFlags.join(','));
  if (flagBytes > MOUNT_FLAGS_MAX_BYTES) {
    problems.push(
      `volume_capability.mount.mount_flags: at most ${MOUNT_FLAGS_MAX_BYTES} bytes joined with commas (one page, what mount(2) takes), got ${flagBytes}`,
    );
  }
  const typeBytes = Buffer.byteLength(record.fsType);
  if (typeBytes > FS_TYPE_MAX_BYTES) {
    problems.push(
      `volume_capability.mount.fs_type: at most ${FS_TYPE_MAX_BYTES} bytes, got ${typeBytes}`,
    );
  }
  return problems;
}

/**
 * What is wrong with the volume_id and target_path of NodePublishVolume or
 * NodeUnpublishVolume (CSI spec: InvalidArgument when missing), each problem prefixed by
 * its field; empty when both are usable.
 */
export function volumeAndTargetProblems(
  volumeId: string | undefined,
  targetPath: string | undefined,
): string[] {
  const problems: string[] = [];
  if (!volumeId) problems.push('volume_id: required');
  else {
    try {
      validateVolumeId(volumeId);
    } catch (err) {
      problems.push(`volume_id: ${errorMessage(err)}`);
    }
  }
  for (const problem of targetPathProblems(targetPath ?? '')) {
    problems.push(`target_path: ${problem}`);
  }
  return problems;
}
