import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import { formatAttributeErrors, parseVolumeAttributes } from './volume-attributes.js';

/**
 * The spec of a volume from its stored volume context, parsed once at start for the volumes
 * taken back. Throws naming every bad key, e.g. when a newer version validates more strictly.
 */
export function specFromVolumeContext(
  volumeContext: Record<string, string>,
  volumeMountGroup: string | undefined,
): VolumeCertificateSpec {
  const parsed = parseVolumeAttributes(volumeContext, { volumeMountGroup });
  if (!parsed.ok) throw new Error(formatAttributeErrors(parsed.errors));
  return parsed.spec;
}
