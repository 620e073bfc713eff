import type { VolumeCapabilityRecord } from '../../src/volume/metadata.js';

/** The pod keys kubelet adds to a volume context (CSIDriver podInfoOnMount). */
export function podInfo(pod: {
  name: string;
  namespace: string;
  uid?: string;
  serviceAccount?: string;
}): Record<string, string> {
  return {
    'csi.storage.k8s.io/pod.name': pod.name,
    'csi.storage.k8s.io/pod.namespace': pod.namespace,
    ...(pod.uid ? { 'csi.storage.k8s.io/pod.uid': pod.uid } : {}),
    ...(pod.serviceAccount ? { 'csi.storage.k8s.io/serviceAccount.name': pod.serviceAccount } : {}),
  };
}

/** The capability of inlineVolumeCall as the plugin records it in metadata.json. */
export const INLINE_CAPABILITY: VolumeCapabilityRecord = {
  accessMode: 'SINGLE_NODE_WRITER',
  fsType: '',
  mountFlags: [],
};

/**
 * kubelet's NodePublishVolume for a pod's inline CSI volume: ephemeral, read-only unless
 * told otherwise, the pod's fsGroup as volume_mount_group. volumeContext holds the pod
 * info and the volume attributes (and may override the ephemeral key).
 */
export function inlineVolumeCall(
  volumeId: string,
  targetPath: string,
  volumeContext: Record<string, string>,
  options: { fsGroup?: string; readonly?: boolean } = {},
) {
  return {
    volume_id: volumeId,
    target_path: targetPath,
    readonly: options.readonly ?? true,
    volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', ...volumeContext },
    volume_capability: {
      mount: { fs_type: '', mount_flags: [], volume_mount_group: options.fsGroup ?? '' },
      access_mode: { mode: 'SINGLE_NODE_WRITER' },
    },
  };
}
