import type { Logger } from '../api/logger.js';
import type { Clock } from '../base/clock.js';
import type { DataRoot } from '../volume/data-root.js';
import type { Mounter } from '../volume/mounter.js';
import type { FailureRecorder } from './failure-recorder.js';
import type { IssuedCertificate } from './issuance.js';
import type { IssuanceCheck } from './issuance-check.js';
import type { PodReadiness } from './pod-readiness.js';
import type { RenewalScheduler } from './renewal-scheduler.js';
import type { TrustBundleVolumes } from './trust-bundle-volumes.js';
import type { VolumeIssuance } from './volume-issuance.js';
import type { VolumeRegistry } from './volume-registry.js';
import type { VolumeTelemetry } from './volume-telemetry.js';

/**
 * What the volume manager's operations (publish, renewal, manual renewal, unpublish,
 * rediscovery) share: one of each per manager.
 */
export interface ManagerParts {
  dataRoot: DataRoot;
  mounter: Mounter;
  logger: Logger;
  clock: Clock;
  registry: VolumeRegistry;
  scheduler: RenewalScheduler;
  issuance: VolumeIssuance;
  failures: FailureRecorder;
  /** The volumes whose CA file follows a trust bundle. */
  trustBundles: TrustBundleVolumes;
  /** Told which volumes are managed (rediscovery) and given up (unpublish). */
  telemetry: VolumeTelemetry;
  /** Readiness gates and the pod IPs of ${POD_IP}: whether a volume may be issued now. */
  readiness: PodReadiness;
  /** What a first publish must pass besides its attributes (embedded mode); none when absent. */
  issuanceCheck?: IssuanceCheck;
  /** Told after each certificate written (first issuance or renewal). */
  onIssued: (volumeId: string, issued: IssuedCertificate, reason: string) => void;
  /** Told when a publish or renewal fails (not when it was cut short by an unpublish). */
  onFailed: (volumeId: string, volumeContext: Record<string, string>, err: unknown) => void;
}
