import type { Logger } from '../api/logger.js';
import { startCsiServer } from '../driver/csi-server.js';
import type { Endpoint } from '../driver/endpoint.js';
import { pluginCapabilities, pluginInfo, probe } from '../driver/identity-service.js';
import { nodeServiceHandlers } from '../driver/node-service.js';
import { specFromVolumeContext } from '../driver/stored-spec.js';
import { ensureEmbeddedIssuers } from '../issuer/embedded-issuers.js';
import { MemoryEventRecorder } from '../issuer/recorded-events.js';
import { type IssuerStackOptions, startIssuerStack } from '../issuer/stack.js';
import { watchRenewRequests } from '../renewal/renew-requests.js';
import type { BackoffPolicy } from '../renewal/renewal-policy.js';
import { VolumeManager, type VolumeManagerOptions } from '../renewal/volume-manager.js';
import type { Clock } from '../store/clock.js';
import { MemoryStore } from '../store/memory-store.js';
import { DataRoot } from '../volume/data-root.js';
import type { Mounter } from '../volume/mounter.js';

export interface EmbeddedPluginOptions {
  endpoint: Endpoint;
  nodeId: string;
  driverName: string;
  version: string;
  dataRoot: string;
  /** Persist the store here; in memory only when absent (tests, benchmarks). */
  stateDir?: string;
  mounter: Mounter;
  logger: Logger;
  clusterResourceNamespace: string;
  /** Runs after the store opens and before the issuers are ensured (e.g. --manifests). */
  beforeIssuers?: (store: MemoryStore) => Promise<void>;
  stack?: Partial<IssuerStackOptions>;
  clock?: Clock;
  attemptTimeoutMs?: number;
  maxConcurrentIssuances?: number;
  renewalJitterMs?: number;
  backoff?: BackoffPolicy;
  onIssued?: VolumeManagerOptions['onIssued'];
}

/** A running embedded plugin and the parts tests and benchmarks look at. */
export interface EmbeddedPlugin {
  store: MemoryStore;
  manager: VolumeManager;
  events: MemoryEventRecorder;
  dataRoot: DataRoot;
  stop(): Promise<void>;
}

/**
 * Wires the embedded mode: the persisted store, the embedded issuers, the controller
 * stack, the volume manager (with renewal and rediscovery), the `cert-csi renew` request
 * watcher and the CSI server. One function so the command, the tests and the
 * benchmarks run the same thing.
 */
export async function startEmbeddedPlugin(options: EmbeddedPluginOptions): Promise<EmbeddedPlugin> {
  const { logger } = options;
  const store = await MemoryStore.open({
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
    onCorrupt: (error, path, movedTo) =>
      logger.error(
        { path, movedTo, err: error.message },
        'state file could not be read; moved aside',
      ),
  });
  await options.beforeIssuers?.(store);
  await ensureEmbeddedIssuers(store, {
    clusterResourceNamespace: options.clusterResourceNamespace,
    logger,
  });
  const events = new MemoryEventRecorder(logger.child({ source: 'events' }));
  let manager: VolumeManager | undefined;
  const stack = await startIssuerStack({
    store,
    clusterResourceNamespace: options.clusterResourceNamespace,
    events,
    logger: logger.child({ source: 'controllers' }),
    privateKeyFor: (namespace, name) => manager?.pendingKeyFor(namespace, name),
    ...(options.clock ? { clock: options.clock } : {}),
    ...options.stack,
  });
  const dataRoot = new DataRoot(options.dataRoot);
  const running = new VolumeManager({
    store,
    nodeId: options.nodeId,
    dataRoot,
    mounter: options.mounter,
    logger: logger.child({ source: 'volumes' }),
    specFromContext: specFromVolumeContext,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.attemptTimeoutMs ? { attemptTimeoutMs: options.attemptTimeoutMs } : {}),
    ...(options.maxConcurrentIssuances
      ? { maxConcurrentIssuances: options.maxConcurrentIssuances }
      : {}),
    ...(options.renewalJitterMs ? { renewalJitterMs: options.renewalJitterMs } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.onIssued ? { onIssued: options.onIssued } : {}),
  });
  manager = running;
  await running.start();
  const renewWatcher = await watchRenewRequests(
    dataRoot,
    (target) => running.renewNow(target),
    logger,
  );
  const identity = {
    driverName: options.driverName,
    version: options.version,
    isReady: () => running.isReady(),
  };
  const server = await startCsiServer({
    endpoint: options.endpoint,
    logger,
    identity: {
      GetPluginInfo: () => pluginInfo(identity),
      GetPluginCapabilities: () => pluginCapabilities(),
      Probe: () => probe(identity),
    },
    node: nodeServiceHandlers({ nodeId: options.nodeId, publisher: running, logger }),
  });
  return {
    store,
    manager: running,
    events,
    dataRoot,
    async stop() {
      await server.close();
      renewWatcher.close();
      running.stop();
      await stack.stop();
      await store.close();
    },
  };
}
