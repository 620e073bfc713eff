/**
 * The CSI messages cert-csi reads and writes, as @grpc/proto-loader presents them
 * (keepCase, enums as strings, defaults filled in). Only the fields used are typed.
 */
export interface VolumeCapability {
  block?: Record<string, never> | null;
  mount?: { fs_type: string; mount_flags: string[]; volume_mount_group: string } | null;
  access_mode?: { mode: string } | null;
  access_type?: 'block' | 'mount';
}

export interface NodePublishVolumeRequest {
  volume_id: string;
  target_path: string;
  staging_target_path: string;
  volume_capability?: VolumeCapability | null;
  readonly: boolean;
  volume_context: Record<string, string>;
  publish_context: Record<string, string>;
  secrets: Record<string, string>;
}

export interface NodeUnpublishVolumeRequest {
  volume_id: string;
  target_path: string;
}
