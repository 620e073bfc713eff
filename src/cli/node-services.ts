import type { Logger } from '../api/logger.js';
import { startCsiServer } from '../driver/csi-server.js';
import type { Endpoint } from '../driver/endpoint.js';
import { pluginCapabilities, pluginInfo, probe } from '../driver/identity-service.js';
import { nodeServiceHandlers } from '../driver/node-service.js';
import { specFromVolumeContext } from '../driver/stored-spec.js';
import { watchRenewRequests } from '../renewal/renew-requests.js';
import type { BackoffPolicy } from '../renewal/renewal-policy.js';
import { serveUnsavedFailures } from '../renewal/status-socket.js';
import { VolumeManager, type VolumeManagerOptions } from '../renewal/volume-manager.js';
import type { Clock } from '../store/clock.js';
import type { ResourceStore } from '../store/resource-store.js';
import { DataRoot } from '../volume/data-root.js';
import type { Mounter } from '../volume/mounter.js';

/** What every mode of the node plugin is configured with. */
export interface NodePluginOptions {
  endpoint: Endpoint;
  nodeId: string;
  driverName: string;
  version: string;
  dataRoot: string;
  mounter: Mounter;
  logger: Logger;
  clock?: Clock;
  attemptTimeoutMs?: number;
  maxConcurrentIssuances?: number;
  renewalJitterMs?: number;
  backoff?: BackoffPolicy;
  onIssued?: VolumeManagerOptions['onIssued'];
  /** Aborting it stops a start that cannot finish (e.g. the request informer never syncs). */
  signal?: AbortSignal;
}

/** The node side once running: the volume manager and what serves it. */
export interface NodeServices {
  manager: VolumeManager;
  dataRoot: DataRoot;
  stop(): Promise<void>;
}

/**
 * Starts what both modes share over a store: the volume manager (rediscovery, renewal),
 * the `cert-csi renew` request watcher and the CSI server, in that order, so the socket
 * answers only once every volume on disk is managed again.
 */
export async function startNodeServices(
  options: NodePluginOptions,
  store: ResourceStore,
  extra: Pick<VolumeManagerOptions, 'onFailed' | 'requestCreator'> & {
    /** Called before start (rediscovery may resume requests an in-process signer asks about). */
    created?: (manager: VolumeManager) => void;
  } = {},
): Promise<NodeServices> {
  const { created, ...managerOptions } = extra;
  const { logger } = options;
  const dataRoot = new DataRoot(options.dataRoot);
  const manager = new VolumeManager({
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
    ...managerOptions,
  });
  created?.(manager);
  const giveUp = () => manager.stop();
  options.signal?.addEventListener('abort', giveUp, { once: true });
  try {
    if (options.signal?.aborted) giveUp();
    await manager.start();
  } finally {
    options.signal?.removeEventListener('abort', giveUp);
  }
  const renewWatcher = await watchRenewRequests(
    dataRoot,
    (target, progress) => manager.renewNow(target, progress),
    logger,
  );
  const statusSocket = await serveUnsavedFailures(
    dataRoot,
    () => manager.unsavedFailures(),
    logger,
  );
  const identity = {
    driverName: options.driverName,
    version: options.version,
    isReady: () => manager.isReady(),
  };
  const server = await startCsiServer({
    endpoint: options.endpoint,
    logger,
    identity: {
      GetPluginInfo: () => pluginInfo(identity),
      GetPluginCapabilities: () => pluginCapabilities(),
      Probe: () => probe(identity),
    },
    node: nodeServiceHandlers({ nodeId: options.nodeId, publisher: manager, logger }),
  });
  return {
    manager,
    dataRoot,
    async stop() {
      await server.close();
      renewWatcher.close();
      await statusSocket.close();
      manager.stop();
    },
  };
}
