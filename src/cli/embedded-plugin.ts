import { MemoryEventRecorder } from '../controller/memory-event-recorder.js';
import { freeUnixEndpoint } from '../driver/endpoint.js';
import { ensureEmbeddedIssuers } from '../issuer/embedded-issuers.js';
import { type IssuerStackOptions, startIssuerStack } from '../issuer/stack.js';
import type { VolumeManager } from '../renewal/volume-manager.js';
import { MemoryStore } from '../store/memory-store.js';
import { ensureDirDurably } from '../volume/atomic-file.js';
import { DataRoot } from '../volume/data-root.js';
import { claimDataRoot } from '../volume/data-root-lock.js';
import { type HeldLock, lockDirectory } from '../volume/directory-lock.js';
import { StateDirectory } from '../volume/state-directory.js';
import { volumesSignedByEmbeddedCa } from './embedded-ca-volumes.js';
import { type NodePluginOptions, startNodeServices } from './node-services.js';

export interface EmbeddedPluginOptions extends NodePluginOptions {
  /** Persist the store here; in memory only when absent (tests, benchmarks). */
  stateDir?: string;
  clusterResourceNamespace: string;
  /** Replace a lost or unusable embedded CA even when volumes it signed exist (--accept-new-ca). */
  acceptNewCa?: boolean;
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
 * Wires the embedded mode: the data root's and the state dir's locks, the persisted store, the
 * embedded issuers, the controller stack, the volume manager (with renewal and rediscovery), the
 * `cert-csi renew` request watcher and the CSI server. One function so the command, the tests
 * and the benchmarks run the same thing. A failed start stops what it started and releases the
 * locks.
 */
export async function startEmbeddedPlugin(options: EmbeddedPluginOptions): Promise<EmbeddedPlugin> {
  const { logger } = options;
  const dataRoot = new DataRoot(options.dataRoot);
  // Locks first, then the endpoint: a second instance is refused before it touches anything.
  const dataRootLock = await claimDataRoot(dataRoot, options.mounter);
  let stateLock: HeldLock | undefined;
  let store: MemoryStore | undefined;
  let stack: { stop(): Promise<void> } | undefined;
  try {
    if (options.stateDir) {
      await ensureDirDurably(options.stateDir);
      stateLock = await lockDirectory(options.stateDir, `state dir ${options.stateDir}`);
    }
    if (options.endpoint.kind === 'unix') await freeUnixEndpoint(options.endpoint.path, logger);
    const opened = await MemoryStore.open(
      options.stateDir
        ? {
            persistence: new StateDirectory(options.stateDir, {
              onCorrupt: (error, path, movedTo) =>
                logger.error(
                  { path, movedTo, err: error.message },
                  'state file could not be read; moved aside',
                ),
            }),
          }
        : {},
    );
    store = opened;
    await options.beforeIssuers?.(opened);
    const ca = await ensureEmbeddedIssuers(opened, {
      clusterResourceNamespace: options.clusterResourceNamespace,
      logger,
      volumesUsingCa: () => volumesSignedByEmbeddedCa(dataRoot),
      ...(options.acceptNewCa ? { acceptNewCa: true } : {}),
    });
    const events = new MemoryEventRecorder(logger.child({ source: 'events' }));
    let manager: VolumeManager | undefined;
    const started = await startIssuerStack({
      store: opened,
      clusterResourceNamespace: options.clusterResourceNamespace,
      events,
      logger: logger.child({ source: 'controllers' }),
      privateKeyFor: (namespace, name) => manager?.pendingKeyFor(namespace, name),
      ...(options.clock ? { clock: options.clock } : {}),
      ...options.stack,
    });
    stack = started;
    const node = await startNodeServices(options, opened, {
      created: (created) => {
        manager = created;
      },
      dataRootLock,
    });
    if (ca.outcome === 'replaced') renewWithNewCa(node.manager, ca.volumesUsingCa, logger);
    return {
      store: opened,
      manager: node.manager,
      events,
      dataRoot: node.dataRoot,
      async stop() {
        await node.stop();
        await started.stop();
        await opened.close();
        stateLock?.release();
      },
    };
  } catch (err) {
    await stack?.stop();
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
          'renewal with the new embedded CA failed; the volume keeps the old CA until its next renewal',
        );
      }
    }
  });
}
