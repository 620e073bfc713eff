import { writeAtomically } from '../../src/fs/atomic-writer.js';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import type { DataRoot } from '../../src/volume/data-root.js';
import { type VolumeMetadata, writeMetadata } from '../../src/volume/metadata.js';

const DAY_MS = 24 * 3600 * 1000;

/** A self-signed certificate valid for days from notBefore (in the past for an expired one). */
export async function certificatePem(days: number, notBefore = new Date()): Promise<string> {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  return createSelfSignedCa({
    key,
    commonName: 'volume',
    durationMs: days * DAY_MS,
    now: notBefore,
  });
}

/** A volume context as kubelet and a pod spec give it. */
export function podContext(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': 'web-0',
    'csi.storage.k8s.io/pod.namespace': 'shop',
    'csi.cert-manager.io/issuer-name': 'embedded-ca',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    ...extra,
  };
}

/** Creates a volume dir with metadata (fields over defaults) and, when given, certificate files. */
export async function makeVolume(
  root: DataRoot,
  id: string,
  fields: Partial<VolumeMetadata> = {},
  files?: Record<string, string>,
): Promise<void> {
  await root.ensureVolume(id);
  await writeMetadata(root, {
    volumeId: id,
    targetPath: `/var/lib/kubelet/pods/x/volumes/${id}/mount`,
    volumeContext: podContext(),
    ...fields,
  });
  if (files !== undefined) {
    const payload: Record<string, Uint8Array> = {};
    for (const [name, text] of Object.entries(files)) payload[name] = Buffer.from(text);
    await writeAtomically(root.dataDir(id), payload);
  }
}
