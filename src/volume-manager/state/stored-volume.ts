import type { KeyObject } from 'node:crypto';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { specFromVolumeContext } from '../../attributes/stored-spec.js';
import { readAtomically } from '../../fs/atomic-writer.js';
import { decodePrivateKey } from '../../pki/keys.js';
import type { DataRoot } from '../../volume/data-root.js';
import { readMetadata, type VolumeMetadata } from '../../volume/metadata.js';
import { readJksPassword, readPkcs12Password } from '../../volume/volume-secrets.js';

// What a volume's dir holds, read back for a republish, a renewal or a restart.

/** The volume's metadata.json; undefined when the volume has no dir or an unreadable one. */
export async function readStoredMetadata(
  dataRoot: DataRoot,
  volumeId: string,
): Promise<VolumeMetadata | undefined> {
  if (!(await dataRoot.hasVolume(volumeId))) return undefined;
  try {
    return await readMetadata(dataRoot, volumeId);
  } catch {
    // A volume dir without readable metadata has nothing worth keeping: start over.
    return undefined;
  }
}

/**
 * The spec the volume was published with: its stored attributes and keystore passwords, parsed
 * once at start (rediscovery); throws naming every bad key.
 */
export async function storedSpec(
  dataRoot: DataRoot,
  volumeId: string,
  metadata: VolumeMetadata,
): Promise<VolumeCertificateSpec> {
  const context = { ...metadata.volumeContext };
  const password = await readPkcs12Password(dataRoot, volumeId);
  if (password !== undefined) context['csi.cert-manager.io/pkcs12-password'] = password;
  const jksPassword = await readJksPassword(dataRoot, volumeId);
  if (jksPassword !== undefined) context['csi.cert-manager.io/jks-password'] = jksPassword;
  return specFromVolumeContext(context, metadata.volumeMountGroup);
}

/** The key on disk, for reuse-private-key; undefined when missing or undecodable. */
export async function storedKey(
  dataRoot: DataRoot,
  volumeId: string,
  spec: VolumeCertificateSpec,
): Promise<KeyObject | undefined> {
  try {
    // Through the current generation, as every reader of a data dir: never through a link
    // at the file's own name, and only a regular file of a volume file's size.
    const pem = (await readAtomically(dataRoot.dataDir(volumeId)))?.get(spec.files.privateKey);
    return pem === undefined ? undefined : decodePrivateKey(pem);
  } catch {
    return undefined;
  }
}
