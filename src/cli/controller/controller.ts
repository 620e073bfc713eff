import { setTimeout as sleep } from 'node:timers/promises';
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
  /**
   * While a controller is not started because the cluster does not serve its API, how often
   * discovery is asked whether it does now (default API_RECHECK_MS).
   */
  apiRecheckMs?: number;
}

/** How often a cluster that did not serve an optional API is asked again whether it does. */
export const API_RECHECK_MS = 60_000;

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
    logger: logger.child({ source: 'store' }),
  });
  const servedVersion = (kind: Parameters<KubernetesStore['servedVersion']>[0]) =>
    store.servedVersion(kind);
  const recheckMs = options.apiRecheckMs ?? API_RECHECK_MS;
  /**
   * Resolves true once the cluster serves the API of a controller left out of enabled (an
   * API enabled late, or a control plane upgraded to 1.37), so the stack restarts with it;
   * false when signal aborts first.
   */
  const apiAppeared = async (enabled: ReadonlySet<string>, signal: AbortSignal) => {
    if (enabled.size === options.enabled.size) return false;
    for (;;) {
      try {
        await sleep(recheckMs, undefined, { signal });
      } catch {
        return false;
      }
      const now = await servedControllers(servedVersion, options.enabled);
      if (now.size > enabled.size) return true;
    }
  };
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
    for (;;) {
      const restart = await leadOnce(signal);
      if (!restart || signal.aborted) return;
      logger.info({}, 'the cluster serves an API it did not: restarting the controllers');
    }
  };
  // Runs the controllers the cluster serves until signal aborts (false) or until it serves the
  // API of one left out (true).
  const leadOnce = async (signal: AbortSignal): Promise<boolean> => {
    const enabled = await servedControllers(servedVersion, options.enabled, logger);
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
    if (stack === undefined) return false;
    running = stack;
    const appeared = await apiAppeared(enabled, signal);
    if (!appeared && !signal.aborted) {
      // Every optional API is served: only the end of leading stops the controllers.
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    running = undefined;
    await stack.stop();
    await events.flush();
    return appeared;
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
