import type { Logger } from '../../api/logger.js';
import type { Clock } from '../../base/clock.js';
import { startCsiServer } from '../../driver/csi-server.js';
import { type Endpoint, freeUnixEndpoint } from '../../driver/endpoint.js';
import { pluginCapabilities, pluginInfo, probe } from '../../driver/identity-service.js';
import { nodeServiceHandlers } from '../../driver/node-service.js';
import type { HeldLock } from '../../fs/directory-lock.js';
import { DataRoot } from '../../volume/data-root.js';
import { claimDataRoot } from '../../volume/data-root-lock.js';
import type { Mounter } from '../../volume/mounter.js';
import type {
  CertificateRenewHandler,
  RequestDecisionHandler,
} from '../../volume-manager/control/control-connection.js';
import { type ControlServer, serveControl } from '../../volume-manager/control/control-server.js';
import type { VolumeManagerSettings } from '../../volume-manager/settings.js';
import { VolumeManager, type VolumeManagerOptions } from '../../volume-manager/volume-manager.js';

/** What every mode of the node plugin is configured with. */
export interface NodePluginOptions {
  endpoint: Endpoint;
  driverName: string;
  version: string;
  dataRoot: string;
  mounter: Mounter;
  logger: Logger;
  /** The volume manager's settings (the node id among them), built once from the flags. */
  settings: VolumeManagerSettings;
  clock?: Clock;
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
 * Starts what both modes share over a store: the data root's lock (unless the caller holds it),
 * the volume manager (rediscovery, renewal), the control socket (`cert-csi renew` and `status`)
 * and the CSI server, in that order, so the sockets answer only once every volume on disk is
 * managed again.
 * A failed start stops what it started and releases the lock.
 */
export async function startNodeServices(
  options: NodePluginOptions,
  parts: Pick<
    VolumeManagerOptions,
    | 'store'
    | 'informers'
    | 'pendingKeys'
    | 'onFailed'
    | 'requestCreator'
    | 'podSource'
    | 'issuanceCheck'
    | 'localIssuer'
    | 'onEvent'
    | 'reloadHttp'
    | 'procRoot'
  > & {
    /** The data root's lock when the caller already claimed it (claimDataRoot); released at stop. */
    dataRootLock?: HeldLock;
    /** Serves `cert-csi renew --certificate` (embedded mode, whose store holds the Certificates). */
    renewCertificate?: CertificateRenewHandler;
    /** Serves `cert-csi approve` and `deny` (embedded mode, whose store holds the requests). */
    decideRequest?: RequestDecisionHandler;
  },
): Promise<NodeServices> {
  const { dataRootLock, renewCertificate, decideRequest, ...managerOptions } = parts;
  const { logger } = options;
  const dataRoot = new DataRoot(options.dataRoot);
  // The data root first: a second instance is refused before it touches the first one's socket.
  const lock = dataRootLock ?? (await claimDataRoot(dataRoot, options.mounter));
  let manager: VolumeManager | undefined;
  let control: ControlServer | undefined;
  try {
    // Checked again right before listening; refusing here spares a rediscovery of every volume.
    if (options.endpoint.kind === 'unix') await freeUnixEndpoint(options.endpoint.path, logger);
    const running = new VolumeManager({
      settings: options.settings,
      dataRoot,
      mounter: options.mounter,
      logger: logger.child({ source: 'volumes' }),
      clock: options.clock,
      onIssued: options.onIssued,
      ...managerOptions,
    });
    manager = running;
    await running.start(options.signal);
    const served = await serveControl(
      dataRoot,
      {
        renew: (target, progress) => running.renewNow(target, progress),
        unsavedFailures: () => running.unsavedFailures(),
        renewalsAsked: () => running.renewalsAsked(),
        renewCertificate,
        decideRequest,
      },
      logger,
    );
    control = served;
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
      node: nodeServiceHandlers({
        nodeId: options.settings.nodeId,
        publisher: running,
        logger,
      }),
    });
    return {
      manager: running,
      dataRoot,
      async stop() {
        await server.close();
        await served.close();
        await running.stop();
        lock.release();
      },
    };
  } catch (err) {
    await control?.close();
    await manager?.stop();
    lock.release();
    throw err;
  }
}
