import type { BackoffPolicy } from './policy/renewal-policy.js';
import type { ReadinessOptions } from './readiness/pod-readiness.js';
import type { ReloadSignalMode } from './reload/volume-reloader.js';

/**
 * What the volume manager is configured with: built once where the flags are parsed
 * (volumeManagerSettings), then passed by reference; each part reads the fields it needs.
 */
export interface VolumeManagerSettings {
  /** This node's id, hashed into the labels of its CertificateRequests. */
  nodeId: string;
  /** How long one issuance may wait for its certificate (kubelet's own timeout is 2 min). */
  attemptTimeoutMs: number;
  /** At most this many issuances create their request at once; more wait their turn. */
  maxConcurrentIssuances: number;
  /** Renewals are spread over a random delay of at most this much after the renewal time. */
  renewalJitterMs: number;
  /** The retry delays after failed issuances. */
  backoff: BackoffPolicy;
  /** --continue-on-not-ready, --pod-readiness-gate and --gate-backoff-*. */
  readiness: ReadinessOptions;
  /** Whether reload-signal is served, and how (`cert-csi node --reload-signals`; embedded: PID files). */
  reloadSignals: ReloadSignalMode;
}

/** csi-lib's issuance backoff: 30 s, ×2, +0-50 % jitter, 5 min cap. */
export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 30_000,
  factor: 2,
  capMs: 300_000,
  jitter: 0.5,
};

/** csi-driver's gate backoff: 1 s, ×2, +0-50 % jitter, 10 s cap. */
export const DEFAULT_GATE_BACKOFF: BackoffPolicy = {
  initialMs: 1_000,
  factor: 2,
  capMs: 10_000,
  jitter: 0.5,
};

/** csi-driver's readiness defaults: no gates, a volume whose pod is not ready is refused. */
export const DEFAULT_READINESS: ReadinessOptions = {
  continueOnNotReady: false,
  gates: [],
  gateBackoff: DEFAULT_GATE_BACKOFF,
};

/** Every setting's default, but the node id, which has none. */
export const DEFAULT_SETTINGS: Readonly<Omit<VolumeManagerSettings, 'nodeId'>> = {
  attemptTimeoutMs: 60_000,
  maxConcurrentIssuances: 4,
  renewalJitterMs: 0,
  backoff: DEFAULT_BACKOFF,
  readiness: DEFAULT_READINESS,
  reloadSignals: 'off',
};

/** The settings given, each one left out (or undefined) taking its default. */
export type GivenSettings = Pick<VolumeManagerSettings, 'nodeId'> & {
  [K in keyof typeof DEFAULT_SETTINGS]?: VolumeManagerSettings[K] | undefined;
};

/** The volume manager's settings: the given ones, defaults for the rest (the one place of defaults). */
export function volumeManagerSettings(given: GivenSettings): VolumeManagerSettings {
  return {
    nodeId: given.nodeId,
    attemptTimeoutMs: given.attemptTimeoutMs ?? DEFAULT_SETTINGS.attemptTimeoutMs,
    maxConcurrentIssuances: given.maxConcurrentIssuances ?? DEFAULT_SETTINGS.maxConcurrentIssuances,
    renewalJitterMs: given.renewalJitterMs ?? DEFAULT_SETTINGS.renewalJitterMs,
    backoff: given.backoff ?? DEFAULT_SETTINGS.backoff,
    readiness: given.readiness ?? DEFAULT_SETTINGS.readiness,
    reloadSignals: given.reloadSignals ?? DEFAULT_SETTINGS.reloadSignals,
  };
}
