import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { quoted } from '../../api/echoed-value.js';
import { parseEndpoint } from '../../driver/endpoint.js';
import { DEFAULT_CLUSTER_RESOURCE_NAMESPACE } from '../../issuer/stack-config.js';
import { createLogger, isLogLevel, LOG_LEVELS } from '../../observability/logger.js';
import { formatGoDuration } from '../../pki/duration.js';
import { createMounter } from '../../volume/create-mounter.js';
import {
  DATA_ROOT_MEDIA,
  DEFAULT_DATA_ROOT_MEDIUM,
  isDataRootMedium,
} from '../../volume/data-root-medium.js';
import { DEFAULT_SETTINGS, volumeManagerSettings } from '../../volume-manager/settings.js';
import { flagDuration, positiveInteger } from '../common/flag-values.js';
import { KUBE_CLIENT_HELP, KUBE_CLIENT_OPTIONS, kubeClientFlags } from '../common/kube-flags.js';
import {
  OBSERVABILITY_HELP,
  OBSERVABILITY_OPTIONS,
  observabilityAddresses,
} from '../common/observability-flags.js';
import { packageVersion } from '../common/package-version.js';
import { terminationSignal } from '../common/termination.js';
import { CONTROLLERS_HELP, controllerSelection } from '../controller/controller-names.js';
import { startEmbeddedPlugin } from './embedded-plugin.js';
import { loadManifests } from './load-manifests.js';
import { type ObservedPlugin, startNodeObservability } from './node-observability.js';
import { READINESS_HELP, READINESS_OPTIONS, readinessOptions } from './readiness-flags.js';

export const NODE_DEFAULTS = {
  mode: 'embedded',
  endpoint: 'unix:///run/cert-csi/csi.sock',
  driverName: 'csi.cert-manager.io',
  dataRoot: '/var/lib/cert-csi/volumes',
  stateDir: '/var/lib/cert-csi/state',
  logLevel: 'info',
  mountMode: 'auto',
  dataRootMedium: DEFAULT_DATA_ROOT_MEDIUM,
  // The volume manager's settings as flag values: its defaults are the one source.
  maxConcurrentIssuances: String(DEFAULT_SETTINGS.maxConcurrentIssuances),
  renewalJitter: formatGoDuration(DEFAULT_SETTINGS.renewalJitterMs),
  backoffInitial: formatGoDuration(DEFAULT_SETTINGS.backoff.initialMs),
  backoffMax: formatGoDuration(DEFAULT_SETTINGS.backoff.capMs),
  backoffFactor: String(DEFAULT_SETTINGS.backoff.factor),
} as const;

export const NODE_HELP = `Usage: cert-csi node [flags]

Runs the CSI node plugin.

  --mode embedded (default): an in-process store persisted under --state-dir and the
  CA/SelfSigned issuer stack in the same process, with ClusterIssuers "embedded-ca"
  and "self-signed" created on first start.
  --mode kubernetes: CertificateRequests in the cluster API, signed by cert-manager or
  by "cert-csi controller"; this node watches only its own requests.

Flags:
  --mode embedded|kubernetes     where requests live and who signs them (default ${NODE_DEFAULTS.mode})
  --endpoint URL                 CSI socket, unix://PATH or tcp://HOST:PORT
                                 (default ${NODE_DEFAULTS.endpoint})
  --node-id ID                   this node's id, hashed into request labels
                                 (default: the hostname)
  --driver-name NAME             CSI driver name (default ${NODE_DEFAULTS.driverName})
  --data-root DIR                per-volume directories, on a tmpfs in bind mode (see
                                 --data-root-medium) (default ${NODE_DEFAULTS.dataRoot})
  --state-dir DIR                where the embedded store persists its objects
                                 (default ${NODE_DEFAULTS.stateDir})
  --manifests DIR                load Issuer, ClusterIssuer, Certificate, Secret, ConfigMap YAML
                                 files at start
  --accept-new-ca                when the CA Secret of embedded-ca or of any CA Issuer or
                                 ClusterIssuer is missing or unusable while volumes or
                                 Secrets it signed exist, accept a new CA (embedded-ca is
                                 replaced, a bootstrap CA re-issued by its Certificate; the
                                 volumes are renewed) instead of refusing to start
  --cluster-resource-namespace NS  namespace of ClusterIssuer Secrets
                                 (default ${DEFAULT_CLUSTER_RESOURCE_NAMESPACE})
${CONTROLLERS_HELP}  --mount-mode auto|bind|direct  bind: tmpfs + read-only bind mounts (needs root);
                                 direct: files written into the target directory;
                                 auto: bind when root on Linux (default ${NODE_DEFAULTS.mountMode})
  --data-root-medium tmpfs|disk  bind mode: where private keys are kept. tmpfs: a tmpfs is
                                 mounted over --data-root, also over a mounted dir (a
                                 hostPath), and reused after a restart; a node reboot loses
                                 the keys and volumes are issued again. disk: no tmpfs, keys
                                 on the data root's filesystem (a warning at start). Not
                                 accepted in direct mode (default ${NODE_DEFAULTS.dataRootMedium})
  --max-concurrent-issuances N   issuances (first or renewal) creating their request at
                                 once; more wait their turn; waiting for the signature
                                 takes no slot (default ${NODE_DEFAULTS.maxConcurrentIssuances})
  --renewal-jitter DURATION      spread each renewal over a random delay of at most this
                                 after its renewal time (default ${NODE_DEFAULTS.renewalJitter})
  --backoff-initial DURATION     first retry delay after a failed renewal (default ${NODE_DEFAULTS.backoffInitial})
  --backoff-max DURATION         longest retry delay (default ${NODE_DEFAULTS.backoffMax})
  --backoff-factor N             delay multiplier per failure (default ${NODE_DEFAULTS.backoffFactor});
                                 each delay is stretched by up to 50 % at random
${OBSERVABILITY_HELP}  --log-level LEVEL              ${LOG_LEVELS.join(', ')} (default ${NODE_DEFAULTS.logLevel})
${READINESS_HELP}  -h, --help                     show this help

Kubernetes mode:
${KUBE_CLIENT_HELP}  --use-token-request            create each CertificateRequest with the pod's own
                                 service-account token (CSIDriver tokenRequests with
                                 audience ""); the token is never logged or stored
`;

/** Where `cert-csi node` keeps requests and who signs them. */
export const NODE_MODES = ['embedded', 'kubernetes'] as const;

function isNodeMode(value: string): value is (typeof NODE_MODES)[number] {
  return (NODE_MODES as readonly string[]).includes(value);
}

/** The flags of `cert-csi node`, as node:util parseArgs options (the manifests test reads them). */
export const NODE_OPTIONS = {
  mode: { type: 'string', default: NODE_DEFAULTS.mode },
  ...KUBE_CLIENT_OPTIONS,
  'use-token-request': { type: 'boolean', default: false },
  endpoint: { type: 'string', default: NODE_DEFAULTS.endpoint },
  'node-id': { type: 'string' },
  'driver-name': { type: 'string', default: NODE_DEFAULTS.driverName },
  'data-root': { type: 'string', default: NODE_DEFAULTS.dataRoot },
  'state-dir': { type: 'string', default: NODE_DEFAULTS.stateDir },
  manifests: { type: 'string' },
  'accept-new-ca': { type: 'boolean', default: false },
  'cluster-resource-namespace': { type: 'string', default: DEFAULT_CLUSTER_RESOURCE_NAMESPACE },
  controllers: { type: 'string', multiple: true },
  'mount-mode': { type: 'string', default: NODE_DEFAULTS.mountMode },
  'data-root-medium': { type: 'string', default: NODE_DEFAULTS.dataRootMedium },
  'max-concurrent-issuances': { type: 'string', default: NODE_DEFAULTS.maxConcurrentIssuances },
  'renewal-jitter': { type: 'string', default: NODE_DEFAULTS.renewalJitter },
  'backoff-initial': { type: 'string', default: NODE_DEFAULTS.backoffInitial },
  'backoff-max': { type: 'string', default: NODE_DEFAULTS.backoffMax },
  'backoff-factor': { type: 'string', default: NODE_DEFAULTS.backoffFactor },
  // Metrics and health (issue 14).
  ...OBSERVABILITY_OPTIONS,
  'log-level': { type: 'string', default: NODE_DEFAULTS.logLevel },
  // csi-driver's readiness options (--continue-on-not-ready, --pod-readiness-gate, --gate-backoff-*).
  ...READINESS_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** `cert-csi node`: parses flags and runs the plugin until SIGINT or SIGTERM (or until, in tests). */
export async function runNode(
  args: string[],
  until: () => Promise<unknown> = terminationSignal,
): Promise<number> {
  const { values, tokens } = parseArgs({ args, options: NODE_OPTIONS, tokens: true });
  const explicit = new Set(tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : [])));
  if (values.help) {
    process.stdout.write(NODE_HELP);
    return 0;
  }
  const level = values['log-level'];
  if (!isLogLevel(level)) throw new Error(`--log-level: unknown level ${quoted(level ?? '')}`);
  const mode = values.mode;
  if (!isNodeMode(mode)) {
    throw new Error(`--mode: expected ${NODE_MODES.join(' or ')}, got "${mode}"`);
  }
  const embeddedOnly = [
    'manifests',
    'state-dir',
    'cluster-resource-namespace',
    'accept-new-ca',
    'controllers',
  ] as const;
  const kubernetesOnly = [
    'kubeconfig',
    'context',
    'kube-api-qps',
    'kube-api-burst',
    'kube-api-timeout',
    'use-token-request',
  ] as const;
  for (const flag of mode === 'kubernetes' ? embeddedOnly : kubernetesOnly) {
    if (explicit.has(flag))
      throw new Error(
        `--${flag}: only used with --mode ${mode === 'kubernetes' ? 'embedded' : 'kubernetes'}`,
      );
  }
  const kubeRate = kubeClientFlags(values);
  // Checked here so an unknown name is refused before anything starts.
  if (mode === 'embedded') controllerSelection(values.controllers);
  const mountMode = values['mount-mode'];
  if (mountMode !== 'auto' && mountMode !== 'bind' && mountMode !== 'direct') {
    throw new Error(`--mount-mode: expected auto, bind or direct, got "${mountMode}"`);
  }
  const dataRootMedium = values['data-root-medium'];
  if (!isDataRootMedium(dataRootMedium)) {
    throw new Error(
      `--data-root-medium: expected ${DATA_ROOT_MEDIA.join(' or ')}, got ${quoted(dataRootMedium)}`,
    );
  }
  const maxConcurrentIssuances = positiveInteger(
    '--max-concurrent-issuances',
    values['max-concurrent-issuances'],
  );
  const renewalJitterMs = flagDuration('--renewal-jitter', values['renewal-jitter'], true);
  const backoff = {
    ...DEFAULT_SETTINGS.backoff,
    initialMs: flagDuration('--backoff-initial', values['backoff-initial']),
    capMs: flagDuration('--backoff-max', values['backoff-max']),
    factor: Number(values['backoff-factor']),
  };
  if (!(backoff.factor >= 1))
    throw new Error(`--backoff-factor: must be a number >= 1, got "${values['backoff-factor']}"`);
  if (backoff.capMs < backoff.initialMs)
    throw new Error('--backoff-max: must not be shorter than --backoff-initial');
  const readiness = readinessOptions(values, mode);
  const endpoint = parseEndpoint(values.endpoint);
  const served = observabilityAddresses(values);
  const logger = createLogger(level);
  const mounter = createMounter({ mode: mountMode, dataRootMedium, logger });
  // Direct mode mounts nothing: asking it for a medium would promise what it cannot keep.
  if (mounter.mode === 'direct' && explicit.has('data-root-medium')) {
    throw new Error(
      `--data-root-medium: only used with bind mounts; --mount-mode ${mountMode} runs in direct mode here, which mounts no tmpfs`,
    );
  }
  if (mounter.mode === 'direct') {
    logger.warn(
      { mountMode: mounter.mode },
      'writing certificate files into target directories directly: no tmpfs, no read-only bind mount',
    );
  }
  // The volume manager's settings, built once here and passed on by reference.
  const settings = volumeManagerSettings({
    nodeId: values['node-id'] || hostname(),
    maxConcurrentIssuances,
    renewalJitterMs,
    backoff,
    readiness,
  });
  const common = {
    endpoint,
    driverName: values['driver-name'],
    version: packageVersion(),
    dataRoot: resolve(values['data-root']),
    mounter,
    logger,
    settings,
  };
  const manifests = values.manifests;
  // Metrics and health first: /readyz answers 503 while the plugin starts.
  let running: ObservedPlugin | undefined;
  const observability = await startNodeObservability({
    ...served,
    nodeId: settings.nodeId,
    controllers: mode === 'embedded',
    apiClient: mode === 'kubernetes',
    logger,
    plugin: () => running,
  });
  const plugin = await startPlugin().catch(async (err: unknown) => {
    await observability.close();
    throw err;
  });
  running = plugin;
  async function startPlugin() {
    return mode === 'kubernetes'
      ? await (await import('./kubernetes-plugin.js')).startKubernetesPlugin({
          ...common,
          // Loaded only in this mode: client-node costs ~0.6 s to import.
          kubeConfig: (await import('../../store/kubernetes/kube-config.js')).loadKubeConfig({
            ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
            ...(values.context ? { context: values.context } : {}),
          }),
          ...kubeRate,
          useTokenRequest: values['use-token-request'],
        })
      : await startEmbeddedPlugin({
          ...common,
          stateDir: resolve(values['state-dir']),
          clusterResourceNamespace: values['cluster-resource-namespace'],
          acceptNewCa: values['accept-new-ca'],
          ...(values.controllers ? { controllers: { select: values.controllers } } : {}),
          ...(manifests
            ? {
                beforeIssuers: async (store) => {
                  const count = await loadManifests(store, manifests);
                  logger.info({ dir: manifests, objects: count }, 'loaded manifests');
                },
              }
            : {}),
        });
  }
  logger.info(
    {
      mode,
      endpoint: values.endpoint,
      nodeId: settings.nodeId,
      driverName: values['driver-name'],
      version: packageVersion(),
    },
    'cert-csi node plugin started',
  );
  await until();
  logger.info({}, 'stopping');
  await plugin.stop();
  await observability.close();
  return 0;
}
