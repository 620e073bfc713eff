import type { Logger } from '../api/logger.js';
import type { Clock } from '../base/clock.js';
import type { DataRoot } from '../volume/data-root.js';
import type { Mounter } from '../volume/mounter.js';
import type { IssuanceCheck } from './issuance/issuance-check.js';
import type { IssuedCertificate } from './issuance/obtain-certificate.js';
import type { VolumeIssuance } from './issuance/volume-issuance.js';
import type { PodReadiness } from './readiness/pod-readiness.js';
import type { FailureRecorder } from './state/failure-recorder.js';
import type { RenewalScheduler } from './state/renewal-scheduler.js';
import type { VolumeRegistry } from './state/volume-registry.js';
import type { VolumeTelemetry } from './telemetry/volume-telemetry.js';
import type { TrustBundleVolumes } from './trust-bundles/trust-bundle-volumes.js';

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
