import type { KeyObject } from 'node:crypto';
import { relative } from 'node:path';
import { SecretKind } from '../../api/secret.js';
import { systemClock } from '../../base/clock.js';
import { triggerManualIssuance } from '../../certificates/manual-trigger.js';
import { allowEveryone } from '../../controller/access-reviewer.js';
import type { RetryPolicy } from '../../controller/controller-definition.js';
import { type RunningControllers, startControllers } from '../../controller/controller-manager.js';
import { MemoryEventRecorder } from '../../controller/memory-event-recorder.js';
import { SharedInformers } from '../../controller/shared-informers.js';
import { freeUnixEndpoint } from '../../driver/endpoint.js';
import { ensureDirDurably } from '../../fs/atomic-file.js';
import { type HeldLock, lockDirectory } from '../../fs/directory-lock.js';
import { localIssuer } from '../../issuer/certificaterequests/local-issuance.js';
import { ensureEmbeddedIssuers } from '../../issuer/embedded-issuers.js';
import { issuerCaches } from '../../issuer/issuer-lookup.js';
import { decideRequest } from '../../issuer/request-decision.js';
import { MemoryStore } from '../../store/memory-store.js';
import { StateDirectory } from '../../store/state-directory/state-directory.js';
import { DataRoot } from '../../volume/data-root.js';
import { claimDataRoot } from '../../volume/data-root-lock.js';
import {
  allChecks,
  issuerExistsCheck,
  volumeCaCheck,
} from '../../volume-manager/issuance/issuance-check.js';
import type { HttpReloadOptions } from '../../volume-manager/reload/http-reload.js';
import type { VolumeManager } from '../../volume-manager/volume-manager.js';
import { controllerSelection } from '../controller/controller-names.js';
import {
  type StackConfig,
  stackConfig,
  stackControllers,
} from '../controller/stack-controllers.js';
import { embeddedAdmission } from './embedded-admission.js';
import { type NodePluginOptions, startNodeServices } from './node-services.js';
import { signedVolumes } from './signed-volumes.js';

export interface EmbeddedPluginOptions extends NodePluginOptions {
  /** Persist the store here; in memory only when absent (tests, benchmarks). */
  stateDir?: string;
  clusterResourceNamespace: string;
  /**
   * Replace a lost or unusable CA of any CA issuer even when what it signed exists
   * (--accept-new-ca): embedded-ca's here, a bootstrap CA by its Certificate.
   */
  acceptNewCa?: boolean;
  /** Runs after the store opens and before the issuers are ensured (e.g. --manifests). */
  beforeIssuers?: (store: MemoryStore) => Promise<void>;
  /** The embedded controller stack: which controllers run and how. */
  controllers?: EmbeddedControllersOptions;
  /** How reload POSTs are tried; the node's defaults when absent (tests shorten them). */
  reloadHttp?: HttpReloadOptions;
}

/** The embedded controllers' selection and settings. */
export interface EmbeddedControllersOptions {
  /** `--controllers` values, cert-manager's syntax (`*`, `name`, `-name`); default `*`. */
  select?: readonly string[];
  /** Replaces every controller's retry backoff (tests use milliseconds). */
  retry?: Partial<RetryPolicy>;
  /** Overrides of the stack configuration (e.g. another approval policy). */
  config?: Partial<StackConfig>;
}

/** A running embedded plugin and the parts tests and benchmarks look at. */
export interface EmbeddedPlugin {
  store: MemoryStore;
  manager: VolumeManager;
  events: MemoryEventRecorder;
  controllers: RunningControllers;
  /** The process's informers: what the controllers and the node plugin have seen. */
  informers: SharedInformers;
  dataRoot: DataRoot;
  stop(): Promise<void>;
}

/**
 * Wires the embedded mode: the data root's and the state dir's locks, the persisted store, the
 * embedded issuers, the controller stack, the volume manager (with renewal and rediscovery), the
 * `cert-csi renew` request watcher and the CSI server. One function so the command, the tests
 * and the benchmarks run the same thing. A failed start stops what it started and releases the
 * locks.
 */
export async function startEmbeddedPlugin(options: EmbeddedPluginOptions): Promise<EmbeddedPlugin> {
  const { logger } = options;
  const clock = options.clock ?? systemClock;
  const dataRoot = new DataRoot(options.dataRoot);
  // Locks first, then the endpoint: a second instance is refused before it touches anything.
  const dataRootLock = await claimDataRoot(dataRoot, options.mounter);
  let stateLock: HeldLock | undefined;
  let store: MemoryStore | undefined;
  let controllers: RunningControllers | undefined;
  let informers: SharedInformers | undefined;
  try {
    const enabled = controllerSelection(options.controllers?.select);
    if (options.stateDir) {
      await ensureDirDurably(options.stateDir);
      stateLock = await lockDirectory(options.stateDir, `state dir ${options.stateDir}`);
    }
    if (options.endpoint.kind === 'unix') await freeUnixEndpoint(options.endpoint.path, logger);
    const stateDir = options.stateDir;
    const persistence = stateDir
      ? new StateDirectory(stateDir, {
          onCorrupt: (error, path, movedTo) =>
            logger.error(
              { path, movedTo, err: error.message },
              'state file could not be read; moved aside',
            ),
        })
      : undefined;
    // The store refuses what a cluster's webhook would (an invalid Certificate).
    const opened = await MemoryStore.open({
      admit: embeddedAdmission,
      ...(persistence ? { persistence } : {}),
    });
    store = opened;
    await options.beforeIssuers?.(opened);
    // Before any controller runs: a Certificate controller would otherwise re-issue a lost CA.
    const ca = await ensureEmbeddedIssuers(opened, {
      clusterResourceNamespace: options.clusterResourceNamespace,
      logger,
      signedVolumes: () => signedVolumes(dataRoot),
      secretFile: (secret) =>
        stateDir && persistence
          ? relative(
              stateDir,
              persistence.objectPath({ group: '', plural: SecretKind.plural, ...secret }),
            )
          : undefined,
      ...(options.acceptNewCa ? { acceptNewCa: true } : {}),
    });
    const events = new MemoryEventRecorder(logger.child({ source: 'events' }));
    // One informer per kind for the controllers and the node plugin alike.
    const shared = new SharedInformers(opened, { clock });
    informers = shared;
    // The node's keys of requests in flight, which the in-process SelfSigned signer signs with.
    const pendingKeys = new Map<string, KeyObject>();
    // Created before the controllers start, so they are synced before the first publish; the
    // approver reads the same caches, so a publish they let through is not denied later.
    const { lookup } = issuerCaches(shared);
    const config = stackConfig({
      clusterResourceNamespace: options.clusterResourceNamespace,
      privateKeyFor: (namespace, name) => pendingKeys.get(`${namespace}/${name}`),
      // One machine, no RBAC: every CSR requester may reference every Issuer (README).
      accessReviewer: allowEveryone,
      ...options.controllers?.config,
    });
    controllers = await startControllers({
      store: opened,
      controllers: stackControllers,
      enabled,
      config,
      informers: shared,
      events,
      logger: logger.child({ source: 'controllers' }),
      clock,
      ...(options.controllers?.retry ? { retry: options.controllers.retry } : {}),
    });
    const running = controllers;
    // One machine: reload-signal names its process by a PID file (no pods, no containers).
    const nodeOptions = {
      ...options,
      settings: { ...options.settings, reloadSignals: 'pid-file' as const },
    };
    const node = await startNodeServices(nodeOptions, {
      onEvent: (event) => events.event(event.pod, event.type, event.reason, event.message),
      ...(options.reloadHttp ? { reloadHttp: options.reloadHttp } : {}),
      store: opened,
      informers: shared,
      pendingKeys,
      dataRootLock,
      // The store is in this process: a volume whose issuer is missing (none can come: the
      // manifests load at start) or whose CA certificate its issuer does not allow is refused
      // at publish, not after its key and a wait.
      issuanceCheck: allChecks(issuerExistsCheck(lookup), volumeCaCheck(lookup)),
      // The approver and the signers run here: a volume's request to their issuers is signed
      // as it is created, with no queue hops and one store write.
      localIssuer: localIssuer({
        store: opened,
        informers: shared,
        config,
        enabled,
        events,
        logger: logger.child({ source: 'controllers' }),
        now: () => new Date(clock.now()),
      }),
      // The plugin owns the store: `cert-csi renew --certificate` asks it through the data root.
      renewCertificate: (ref) => triggerManualIssuance(opened, ref, () => new Date(clock.now())),
      // And `cert-csi approve`/`deny`: the write goes through the store's admission rules.
      decideRequest: (decision) => decideRequest(opened, decision, () => new Date(clock.now())),
    });
    renewWithNewCa(node.manager, ca.volumesToRenew, logger);
    return {
      store: opened,
      manager: node.manager,
      events,
      controllers: running,
      informers: shared,
      dataRoot: node.dataRoot,
      async stop() {
        await node.stop();
        await running.stop();
        shared.stop();
        await opened.close();
        stateLock?.release();
      },
    };
  } catch (err) {
    await controllers?.stop();
    informers?.stop();
    await store?.close();
    stateLock?.release();
    dataRootLock.release();
    throw err;
  }
}

/** Renews the volumes a replaced CA had signed, so their ca.crt and certificate move to the new CA now. */
function renewWithNewCa(
  manager: VolumeManager,
  volumeIds: readonly string[],
  logger: NodePluginOptions['logger'],
): void {
  const renewals = volumeIds.map((volumeId) => manager.renewNow({ volumeId }));
  void Promise.allSettled(renewals).then((results) => {
    for (const result of results) {
      const failures =
        result.status === 'fulfilled'
          ? result.value.failed
          : [{ volumeId: undefined, error: String(result.reason) }];
      for (const failed of failures) {
        logger.error(
          { volumeId: failed.volumeId, err: failed.error },
          'renewal with a new CA failed; the volume keeps the old CA until its next renewal',
        );
      }
    }
  });
}
