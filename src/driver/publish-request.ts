import { SERVICE_ACCOUNT_TOKENS_KEY } from '../attributes/attribute-keys.js';
import { formatAttributeErrors, parseVolumeAttributes } from '../attributes/volume-attributes.js';
import { errorMessage } from '../base/error-message.js';
import type { PublishRequest } from '../renewal/volume-publisher.js';
import { validateVolumeId } from '../volume/volume-id.js';
import { invalidArgument } from './csi-error.js';
import type { NodePublishVolumeRequest } from './csi-messages.js';
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
      ...(serviceAccountTokens !== undefined ? { serviceAccountTokens } : {}),
    },
    deprecatedKeys: parsed.deprecatedKeys,
  };
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
