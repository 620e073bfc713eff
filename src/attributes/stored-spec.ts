import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import { formatAttributeErrors, parseVolumeAttributes } from './volume-attributes.js';

/**
 * The spec of a volume from its stored volume context, for renewals after a restart.
 * Throws naming every bad key, e.g. when a newer version validates more strictly.
 */
export function specFromVolumeContext(
  volumeContext: Record<string, string>,
  volumeMountGroup: string | undefined,
  /** The pod's IPs for ${POD_IP} and ${POD_IPS}, when known. */
  podIPs?: readonly string[],
): VolumeCertificateSpec {
  const parsed = parseVolumeAttributes(volumeContext, {
    ...(volumeMountGroup ? { volumeMountGroup } : {}),
    ...(podIPs ? { podIPs } : {}),
  });
  if (!parsed.ok) throw new Error(formatAttributeErrors(parsed.errors));
  return parsed.spec;
}
