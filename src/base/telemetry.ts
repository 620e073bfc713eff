import diagnostics from 'node:diagnostics_channel';

// The layers that know things (the volume manager, the controller runtime, the Kubernetes
// store) publish facts here; the observability layer subscribes. Nothing below it holds a
// metrics registry, and a process with no subscriber pays one boolean check per fact.

/** Channel names, one per kind of fact; `cert-csi:` keeps them apart from other libraries'. */
export const TELEMETRY_CHANNELS = {
  issuance: 'cert-csi:volume-issuance',
  volume: 'cert-csi:volume-management',
  sync: 'cert-csi:controller-sync',
  apiRequest: 'cert-csi:api-request',
  reload: 'cert-csi:volume-reload',
} as const;

/** Why an IssuanceError ended an issuance without a certificate: the volume manager's reasons. */
export const ISSUANCE_ERROR_REASONS = [
  'denied',
  'failed',
  'timeout',
  'aborted',
  'invalid-certificate',
] as const;

/** One of ISSUANCE_ERROR_REASONS. */
export type IssuanceErrorReason = (typeof ISSUANCE_ERROR_REASONS)[number];

/**
 * Why an issuance ended without a certificate: a closed set, so a label built from it stays
 * bounded. `other` is anything that is not an IssuanceError (disk, store, key generation).
 */
export const ISSUANCE_FAILURE_REASONS = [...ISSUANCE_ERROR_REASONS, 'other'] as const;

/** One of ISSUANCE_FAILURE_REASONS. */
export type IssuanceFailureReason = (typeof ISSUANCE_FAILURE_REASONS)[number];

/** One issuance (first or renewal) of a volume, when it starts and when it ends. */
export type IssuanceFact =
  | { phase: 'started'; nodeId: string; volumeId: string }
  | {
      phase: 'succeeded';
      nodeId: string;
      volumeId: string;
      durationSeconds: number;
      nextIssuanceTime: Date;
    }
  | {
      phase: 'failed';
      nodeId: string;
      volumeId: string;
      durationSeconds: number;
      reason: IssuanceFailureReason;
    };

/**
 * A volume taken under management (it has a certificate and a renewal time; nextIssuanceTime
 * is absent for one that only has a request in flight), given up (unpublished), or kept: its
 * first publish since the plugin started (a restart, or a reboot with the data root on disk)
 * found a usable certificate on disk and mounted it without a new key or request.
 */
export type VolumeFact =
  | { change: 'managed'; nodeId: string; volumeId: string; nextIssuanceTime?: Date }
  | { change: 'unmanaged'; nodeId: string; volumeId: string }
  | { change: 'kept'; nodeId: string; volumeId: string };

/** One sync of one key by a controller; error when it threw (and will be retried). */
export interface SyncFact {
  controller: string;
  error: boolean;
}

/**
 * One request to the API server: its HTTP method, the server's host:port, the HTTP status
 * (`<error>` when no answer came, as client-go says) and how long it took. resource names
 * what was asked (`certificaterequests.cert-manager.io`) for logs and debugging.
 */
export interface ApiRequestFact {
  method: string;
  host: string;
  code: string;
  resource: string;
  durationSeconds: number;
}

/** One reload notification after a rewrite of a volume: how, and whether it reached the app. */
export interface ReloadFact {
  nodeId: string;
  mechanism: 'http' | 'signal';
  outcome: 'sent' | 'failed';
}

interface Facts {
  issuance: IssuanceFact;
  volume: VolumeFact;
  sync: SyncFact;
  apiRequest: ApiRequestFact;
  reload: ReloadFact;
}

/** A kind of fact: a key of TELEMETRY_CHANNELS. */
export type TelemetryKind = keyof Facts;

const channels = {
  issuance: diagnostics.channel(TELEMETRY_CHANNELS.issuance),
  volume: diagnostics.channel(TELEMETRY_CHANNELS.volume),
  sync: diagnostics.channel(TELEMETRY_CHANNELS.sync),
  apiRequest: diagnostics.channel(TELEMETRY_CHANNELS.apiRequest),
  reload: diagnostics.channel(TELEMETRY_CHANNELS.reload),
};

/** True when someone listens to kind: publishers skip building facts nobody reads. */
export function isObserved(kind: TelemetryKind): boolean {
  return channels[kind].hasSubscribers;
}

/** Publishes a fact to its channel's subscribers (synchronously; they must not throw). */
export function publishFact<K extends TelemetryKind>(kind: K, fact: Facts[K]): void {
  if (channels[kind].hasSubscribers) channels[kind].publish(fact);
}

/**
 * Listens to one kind of fact until the returned function is called. A listener that throws
 * would surface as an uncaught exception in the publisher's process (diagnostics_channel's
 * rule), so its errors go to onError instead.
 */
export function subscribeFacts<K extends TelemetryKind>(
  kind: K,
  listener: (fact: Facts[K]) => void,
  onError: (err: unknown) => void,
): () => void {
  const name = TELEMETRY_CHANNELS[kind];
  const handler = (message: unknown) => {
    try {
      listener(message as Facts[K]);
    } catch (err) {
      onError(err);
    }
  };
  diagnostics.subscribe(name, handler);
  return () => {
    diagnostics.unsubscribe(name, handler);
  };
}
