import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startCsiServer } from '../driver/csi-server.js';
import { parseEndpoint } from '../driver/endpoint.js';
import { pluginCapabilities, pluginInfo, probe } from '../driver/identity-service.js';
import { nodeServiceHandlers } from '../driver/node-service.js';
import { ensureEmbeddedIssuers } from '../issuer/embedded-issuers.js';
import { MemoryEventRecorder } from '../issuer/recorded-events.js';
import { DEFAULT_CLUSTER_RESOURCE_NAMESPACE, startIssuerStack } from '../issuer/stack.js';
import { createLogger, isLogLevel, LOG_LEVELS } from '../observability/logger.js';
import { VolumeManager } from '../renewal/volume-manager.js';
import { MemoryStore } from '../store/memory-store.js';
import { DataRoot } from '../volume/data-root.js';
import { createMounter } from '../volume/mounter.js';
import { loadManifests } from './load-manifests.js';
import { packageVersion } from './package-version.js';

export const NODE_DEFAULTS = {
  endpoint: 'unix:///run/cert-csi/csi.sock',
  driverName: 'csi.cert-manager.io',
  dataRoot: '/var/lib/cert-csi/volumes',
  stateDir: '/var/lib/cert-csi/state',
  logLevel: 'info',
  mountMode: 'auto',
} as const;

export const NODE_HELP = `Usage: cert-csi node [flags]

Runs the CSI node plugin. Embedded mode (the only mode yet): an in-process store
persisted under --state-dir and the CA/SelfSigned issuer stack in the same process,
with ClusterIssuers "embedded-ca" and "self-signed" created on first start.

Flags:
  --endpoint URL                 CSI socket, unix://PATH or tcp://HOST:PORT
                                 (default ${NODE_DEFAULTS.endpoint})
  --node-id ID                   this node's id, hashed into request labels
                                 (default: the hostname)
  --driver-name NAME             CSI driver name (default ${NODE_DEFAULTS.driverName})
  --data-root DIR                per-volume directories; a tmpfs is mounted here when
                                 running as root (default ${NODE_DEFAULTS.dataRoot})
  --state-dir DIR                where the embedded store persists its objects
                                 (default ${NODE_DEFAULTS.stateDir})
  --manifests DIR                load Issuer, ClusterIssuer and Secret YAML files at start
  --cluster-resource-namespace NS  namespace of ClusterIssuer Secrets
                                 (default ${DEFAULT_CLUSTER_RESOURCE_NAMESPACE})
  --mount-mode auto|bind|direct  bind: tmpfs + read-only bind mounts (needs root);
                                 direct: files written into the target directory;
                                 auto: bind when root on Linux (default ${NODE_DEFAULTS.mountMode})
  --log-level LEVEL              ${LOG_LEVELS.join(', ')} (default ${NODE_DEFAULTS.logLevel})
  -h, --help                     show this help
`;

/** `cert-csi node`: wires store, controllers, volume manager and the CSI server. */
export async function runNode(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      endpoint: { type: 'string', default: NODE_DEFAULTS.endpoint },
      'node-id': { type: 'string' },
      'driver-name': { type: 'string', default: NODE_DEFAULTS.driverName },
      'data-root': { type: 'string', default: NODE_DEFAULTS.dataRoot },
      'state-dir': { type: 'string', default: NODE_DEFAULTS.stateDir },
      manifests: { type: 'string' },
      'cluster-resource-namespace': { type: 'string', default: DEFAULT_CLUSTER_RESOURCE_NAMESPACE },
      'mount-mode': { type: 'string', default: NODE_DEFAULTS.mountMode },
      'log-level': { type: 'string', default: NODE_DEFAULTS.logLevel },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(NODE_HELP);
    return 0;
  }
  const level = values['log-level'];
  if (!isLogLevel(level)) throw new Error(`--log-level: unknown level "${level}"`);
  const mountMode = values['mount-mode'];
  if (mountMode !== 'auto' && mountMode !== 'bind' && mountMode !== 'direct') {
    throw new Error(`--mount-mode: expected auto, bind or direct, got "${mountMode}"`);
  }
  const endpoint = parseEndpoint(values.endpoint);
  const logger = createLogger(level);
  const nodeId = values['node-id'] || hostname();
  const clusterResourceNamespace = values['cluster-resource-namespace'];

  const store = await MemoryStore.open({
    stateDir: resolve(values['state-dir']),
    onCorrupt: (error, path, movedTo) =>
      logger.error(
        { path, movedTo, err: error.message },
        'state file could not be read; moved aside',
      ),
  });
  if (values.manifests) {
    const count = await loadManifests(store, values.manifests);
    logger.info({ dir: values.manifests, objects: count }, 'loaded manifests');
  }
  await ensureEmbeddedIssuers(store, { clusterResourceNamespace, logger });

  const mounter = createMounter({ mode: mountMode });
  if (mounter.mode === 'direct') {
    logger.warn(
      { mountMode: mounter.mode },
      'writing certificate files into target directories directly: no tmpfs, no read-only bind mount',
    );
  }
  let manager: VolumeManager | undefined;
  const stack = await startIssuerStack({
    store,
    clusterResourceNamespace,
    events: new MemoryEventRecorder(logger.child({ source: 'events' })),
    logger: logger.child({ source: 'controllers' }),
    privateKeyFor: (namespace, name) => manager?.pendingKeyFor(namespace, name),
  });
  manager = new VolumeManager({
    store,
    nodeId,
    dataRoot: new DataRoot(resolve(values['data-root'])),
    mounter,
    logger: logger.child({ source: 'volumes' }),
  });
  await manager.start();
  const ready = manager;
  const identity = {
    driverName: values['driver-name'],
    version: packageVersion(),
    isReady: () => ready.isReady(),
  };
  const server = await startCsiServer({
    endpoint,
    logger,
    identity: {
      GetPluginInfo: () => pluginInfo(identity),
      GetPluginCapabilities: () => pluginCapabilities(),
      Probe: () => probe(identity),
    },
    node: nodeServiceHandlers({ nodeId, publisher: manager, logger }),
  });
  logger.info(
    {
      endpoint: values.endpoint,
      nodeId,
      driverName: identity.driverName,
      version: identity.version,
    },
    'cert-csi node plugin started',
  );

  await new Promise<void>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal());
    process.once('SIGTERM', () => resolveSignal());
  });
  logger.info({}, 'stopping');
  await server.close();
  manager.stop();
  await stack.stop();
  await store.close();
  return 0;
}
