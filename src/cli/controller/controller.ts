import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../api/logger.js';
import { subjectAccessReviewer } from '../../controller/access-reviewer.js';
import { type RunningControllers, startControllers } from '../../controller/controller-manager.js';
import { EventWriter } from '../../controller/event-writer.js';
import { LeaderElector } from '../../controller/leader-election.js';
import type { SharedInformers } from '../../controller/shared-informers.js';
import { KubernetesStore } from '../../store/kubernetes/kubernetes-store.js';
import { servedControllers } from './served-apis.js';
import { stackConfig, stackControllers } from './stack-controllers.js';

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  qps: number;
  burst: number;
  /** The limit of one API request (KubernetesStore's default when unset). */
  requestTimeoutMs?: number;
  identity: string;
  clusterResourceNamespace: string;
  /** The controllers to run (see selectControllers). */
  enabled: ReadonlySet<string>;
  signingWorkers: number;
  /** SPIFFE trust domain of pod certificates (the stack's default when unset). */
  trustDomain?: string;
  /** Longest pod certificate (the stack's default when unset). */
  podCertificateMaxDurationMs?: number;
  logger: Logger;
  /** Elect a leader on this Lease; without it the controllers run at once. */
  leaderElection?: {
    namespace: string;
    name: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  /** Per-item retry backoff of the controllers (defaults: cert-manager's 5 s to 5 min). */
  retryBaseDelayMs?: number;
}

/** A running `cert-csi controller`. */
export interface Controller {
  /** Resolves when the controller ends: 'lost' when it lost the lease, 'stopped' after stop(). */
  done: Promise<'lost' | 'stopped'>;
  stop(): Promise<void>;
  /** The controllers' informers while they run (this replica leads), else undefined. */
  informers(): SharedInformers | undefined;
  /** False only while this replica leads and its caches are not synced yet; a standby is ready. */
  ready(): boolean;
}

const FIELD_MANAGER = 'cert-csi-controller';

/**
 * The issuer stack against the cluster, for CA and SelfSigned issuers only (cert-manager
 * may run beside it for the others); with leader election only the Lease holder works.
 */
export function startController(options: ControllerOptions): Controller {
  const { kubeConfig, qps, burst, requestTimeoutMs, logger } = options;
  const store = new KubernetesStore({
    kubeConfig,
    qps,
    burst,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    fieldManager: FIELD_MANAGER,
  });
  const events = new EventWriter({
    store,
    component: FIELD_MANAGER,
    host: options.identity,
    logger: logger.child({ source: 'events' }),
  });
  const stopping = new AbortController();
  let leading = false;
  let running: RunningControllers | undefined;

  // Runs the controllers until signal aborts.
  const work = async (signal: AbortSignal) => {
    leading = true;
    try {
      await lead(signal);
    } finally {
      leading = false;
      running = undefined;
    }
  };
  const lead = async (signal: AbortSignal) => {
    const enabled = await servedControllers(store, options.enabled, logger);
    const started = startControllers({
      store,
      controllers: stackControllers,
      enabled,
      config: stackConfig({
        clusterResourceNamespace: options.clusterResourceNamespace,
        signingWorkers: options.signingWorkers,
        ownIssuerTypesOnly: true,
        // The CSR signers' `reference` reviews are the cluster's RBAC decisions.
        accessReviewer: subjectAccessReviewer(store),
        ...(options.trustDomain ? { trustDomain: options.trustDomain } : {}),
        ...(options.podCertificateMaxDurationMs
          ? { podCertificateMaxDurationMs: options.podCertificateMaxDurationMs }
          : {}),
      }),
      events,
      logger: logger.child({ source: 'controllers' }),
      signal,
      ...(options.retryBaseDelayMs ? { retry: { baseDelayMs: options.retryBaseDelayMs } } : {}),
    });
    // Stopped (or no longer leading) while the caches synced: the informers gave up waiting
    // because they were told to, which is the end asked for, not a failure.
    const stack = await started.catch((err: unknown) => {
      if (signal.aborted) return undefined;
      throw err;
    });
    if (stack === undefined) return;
    running = stack;
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await stack.stop();
    await events.flush();
  };

  const observed = {
    informers: () => running?.informers,
    ready: () => !leading || running !== undefined,
  };
  const election = options.leaderElection;
  if (!election) {
    return {
      done: work(stopping.signal).then(() => 'stopped' as const),
      stop: async () => stopping.abort(),
      ...observed,
    };
  }
  const elector = new LeaderElector({
    store,
    ...election,
    identity: options.identity,
    logger,
  });
  const done = elector
    .run(work)
    .then((): 'lost' | 'stopped' => (stopping.signal.aborted ? 'stopped' : 'lost'));
  return {
    done,
    async stop() {
      stopping.abort();
      await elector.stop();
      await done;
    },
    ...observed,
  };
}
