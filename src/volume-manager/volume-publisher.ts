import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import type { VolumeCapabilityRecord } from '../volume/metadata.js';

/** A validated NodePublishVolume, ready for the volume manager. */
export interface PublishRequest {
  volumeId: string;
  targetPath: string;
  spec: VolumeCertificateSpec;
  /** kubelet's volume context without the service-account tokens; stored in metadata.json. */
  volumeContext: Record<string, string>;
  volumeMountGroup?: string;
  /** The volume_capability asked for; recorded at the first publish, compared at republish. */
  capability: VolumeCapabilityRecord;
  /**
   * kubelet's `csi.storage.k8s.io/serviceAccount.tokens` (CSIDriver tokenRequests), kept in
   * memory only: never written to disk, never logged.
   */
  serviceAccountTokens?: string;
}

/** What a publish produced, for logs and the CLI client. */
export interface PublishResult {
  /** False when the volume was already ready and only its mount was ensured. */
  issued: boolean;
  notAfter?: Date;
  nextIssuanceTime?: Date;
  /** Set when the volume was published empty, waiting for its pod: why. */
  waiting?: string;
}

/**
 * What an unpublish did. kubelet gets success in every case (CSI: unpublish is idempotent);
 * a person at the CLI is told when nothing was done.
 */
export type UnpublishOutcome =
  /** The volume was unmounted and removed, or its publish under way was stopped. */
  | { kind: 'unpublished' }
  /** Nothing done: the volume is published at another target, which it keeps. */
  | { kind: 'elsewhere'; recordedTarget: string }
  /** Nothing done: this node has no such volume. */
  | { kind: 'not-published' };

/** The volume manager as the CSI Node service sees it. */
export interface VolumePublisher {
  publish(request: PublishRequest): Promise<PublishResult>;
  unpublish(volumeId: string, targetPath: string): Promise<UnpublishOutcome>;
  /** True once the store, the controllers and the manager are running. */
  isReady(): boolean;
}
