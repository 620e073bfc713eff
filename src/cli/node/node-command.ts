import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { quoted } from '../../api/echoed-value.js';
import { parseEndpoint } from '../../driver/endpoint.js';
import { createLogger, isLogLevel } from '../../observability/logger.js';
import { createMounter } from '../../volume/create-mounter.js';
import { DATA_ROOT_MEDIA, isDataRootMedium } from '../../volume/data-root-medium.js';
import { DEFAULT_SETTINGS, volumeManagerSettings } from '../../volume-manager/settings.js';
import { parseFlags } from '../common/flag-table.js';
import { flagDuration, positiveInteger } from '../common/flag-values.js';
import { KUBE_CLIENT_FLAG_NAMES, kubeClientFlags } from '../common/kube-flags.js';
import { observabilityAddresses } from '../common/observability-flags.js';
import { packageVersion } from '../common/package-version.js';
import { terminationSignal } from '../common/termination.js';
import { controllerSelection } from '../controller/controller-names.js';
import { startEmbeddedPlugin } from './embedded-plugin.js';
import { NODE_FLAGS, NODE_HELP, NODE_MODES } from './node-flags.js';
import { type ObservedPlugin, startNodeObservability } from './node-observability.js';
import { readinessOptions } from './readiness-flags.js';

function isNodeMode(value: string): value is (typeof NODE_MODES)[number] {
  return (NODE_MODES as readonly string[]).includes(value);
}

/** `cert-csi node`: parses flags and runs the plugin until SIGINT or SIGTERM (or until, in tests). */
export async function runNode(
  args: string[],
  until: () => Promise<unknown> = terminationSignal,
): Promise<number> {
  const { values, explicit } = parseFlags(NODE_FLAGS, args);
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
  const kubernetesOnly = [...KUBE_CLIENT_FLAG_NAMES, 'use-token-request', 'reload-signals'];
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
    // Embedded mode signals by PID file whatever this says (embedded-plugin.ts).
    reloadSignals: values['reload-signals'] ? 'pod-processes' : 'off',
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
                  // Loaded only with --manifests: its YAML parser costs ~80 ms to import.
                  const { loadManifests } = await import('./load-manifests.js');
                  const count = await loadManifests(store, manifests);
                  logger.info({ dir: manifests, objects: count }, 'loaded manifests');
                },
              }
            : {}),
        });
  }
  // Listening before the line that says it started: whoever stops the plugin as soon as it
  // reads that line (a supervisor, a test) must not meet SIGTERM's default action, a kill.
  const stopAsked = until();
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
  await stopAsked;
  logger.info({}, 'stopping');
  await plugin.stop();
  await observability.close();
  return 0;
}
