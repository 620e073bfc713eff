import { ensureEmbeddedIssuers } from '../issuer/embedded-issuers.js';
import { MemoryEventRecorder } from '../issuer/recorded-events.js';
import { type IssuerStackOptions, startIssuerStack } from '../issuer/stack.js';
import type { VolumeManager } from '../renewal/volume-manager.js';
import { MemoryStore } from '../store/memory-store.js';
import type { DataRoot } from '../volume/data-root.js';
import { type NodePluginOptions, startNodeServices } from './node-services.js';

export interface EmbeddedPluginOptions extends NodePluginOptions {
  /** Persist the store here; in memory only when absent (tests, benchmarks). */
  stateDir?: string;
  clusterResourceNamespace: string;
  /** Runs after the store opens and before the issuers are ensured (e.g. --manifests). */
  beforeIssuers?: (store: MemoryStore) => Promise<void>;
  stack?: Partial<IssuerStackOptions>;
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
  const node = await startNodeServices(options, store, {
    created: (created) => {
      manager = created;
    },
  });
  return {
    store,
    manager: node.manager,
    events,
    dataRoot: node.dataRoot,
    async stop() {
      await node.stop();
      await stack.stop();
      await store.close();
    },
  };
}
