import { DEFAULT_CLUSTER_RESOURCE_NAMESPACE } from '../../issuer/stack-config.js';
import { LOG_LEVELS } from '../../observability/logger.js';
import { formatGoDuration } from '../../pki/duration.js';
import { DEFAULT_DATA_ROOT_MEDIUM } from '../../volume/data-root-medium.js';
import { DEFAULT_SETTINGS } from '../../volume-manager/settings.js';
import { type FlagTable, flagList, flagOptions, HELP_FLAG, inGroup } from '../common/flag-table.js';
import { KUBE_CLIENT_FLAGS } from '../common/kube-flags.js';
import { OBSERVABILITY_FLAGS } from '../common/observability-flags.js';
import { CONTROLLERS_FLAG } from '../controller/controller-names.js';
import { READINESS_FLAGS } from './readiness-flags.js';

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

/** Where `cert-csi node` keeps requests and who signs them. */
export const NODE_MODES = ['embedded', 'kubernetes'] as const;

/** The flags of `cert-csi node`, in the order its help lists them. */
export const NODE_FLAGS = {
  mode: {
    type: 'string',
    value: 'embedded|kubernetes',
    default: NODE_DEFAULTS.mode,
    description: `where requests live and who signs them (default ${NODE_DEFAULTS.mode})`,
  },
  endpoint: {
    type: 'string',
    value: 'URL',
    default: NODE_DEFAULTS.endpoint,
    description: [
      'CSI socket, unix://PATH or tcp://HOST:PORT',
      `(default ${NODE_DEFAULTS.endpoint})`,
    ],
  },
  'node-id': {
    type: 'string',
    value: 'ID',
    description: ["this node's id, hashed into request labels", '(default: the hostname)'],
  },
  'driver-name': {
    type: 'string',
    value: 'NAME',
    default: NODE_DEFAULTS.driverName,
    description: `CSI driver name (default ${NODE_DEFAULTS.driverName})`,
  },
  'data-root': {
    type: 'string',
    value: 'DIR',
    default: NODE_DEFAULTS.dataRoot,
    description: [
      'per-volume directories, on a tmpfs in bind mode (see',
      `--data-root-medium) (default ${NODE_DEFAULTS.dataRoot})`,
    ],
  },
  'state-dir': {
    type: 'string',
    value: 'DIR',
    default: NODE_DEFAULTS.stateDir,
    description: [
      'where the embedded store persists its objects',
      `(default ${NODE_DEFAULTS.stateDir})`,
    ],
  },
  manifests: {
    type: 'string',
    value: 'DIR',
    description: [
      'load Issuer, ClusterIssuer, Certificate, Secret, ConfigMap YAML',
      'files at start',
    ],
  },
  'accept-new-ca': {
    type: 'boolean',
    default: false,
    description: [
      'when the CA Secret of embedded-ca or of any CA Issuer or',
      'ClusterIssuer is missing or unusable while volumes or',
      'Secrets it signed exist, accept a new CA (embedded-ca is',
      'replaced, a bootstrap CA re-issued by its Certificate; the',
      'volumes are renewed) instead of refusing to start',
    ],
  },
  'cluster-resource-namespace': {
    type: 'string',
    value: 'NS',
    default: DEFAULT_CLUSTER_RESOURCE_NAMESPACE,
    description: `namespace of ClusterIssuer Secrets (default ${DEFAULT_CLUSTER_RESOURCE_NAMESPACE})`,
  },
  ...CONTROLLERS_FLAG,
  'mount-mode': {
    type: 'string',
    value: 'auto|bind|direct',
    default: NODE_DEFAULTS.mountMode,
    description: [
      'bind: tmpfs + read-only bind mounts (needs root);',
      'direct: files written into the target directory;',
      `auto: bind when root on Linux (default ${NODE_DEFAULTS.mountMode})`,
    ],
  },
  'data-root-medium': {
    type: 'string',
    value: 'tmpfs|disk',
    default: NODE_DEFAULTS.dataRootMedium,
    description: [
      'bind mode: where private keys are kept. tmpfs: a tmpfs is',
      'mounted over --data-root, also over a mounted dir (a',
      'hostPath), and reused after a restart; a node reboot loses',
      'the keys and volumes are issued again. disk: no tmpfs, keys',
      "on the data root's filesystem (a warning at start). Not",
      `accepted in direct mode (default ${NODE_DEFAULTS.dataRootMedium})`,
    ],
  },
  'max-concurrent-issuances': {
    type: 'string',
    value: 'N',
    default: NODE_DEFAULTS.maxConcurrentIssuances,
    description: [
      'issuances (first or renewal) creating their request at',
      'once; more wait their turn; waiting for the signature',
      `takes no slot (default ${NODE_DEFAULTS.maxConcurrentIssuances})`,
    ],
  },
  'renewal-jitter': {
    type: 'string',
    value: 'DURATION',
    default: NODE_DEFAULTS.renewalJitter,
    description: [
      'spread each renewal over a random delay of at most this',
      `after its renewal time (default ${NODE_DEFAULTS.renewalJitter})`,
    ],
  },
  'backoff-initial': {
    type: 'string',
    value: 'DURATION',
    default: NODE_DEFAULTS.backoffInitial,
    description: `first retry delay after a failed renewal (default ${NODE_DEFAULTS.backoffInitial})`,
  },
  'backoff-max': {
    type: 'string',
    value: 'DURATION',
    default: NODE_DEFAULTS.backoffMax,
    description: `longest retry delay (default ${NODE_DEFAULTS.backoffMax})`,
  },
  'backoff-factor': {
    type: 'string',
    value: 'N',
    default: NODE_DEFAULTS.backoffFactor,
    description: [
      `delay multiplier per failure (default ${NODE_DEFAULTS.backoffFactor});`,
      'each delay is stretched by up to 50 % at random',
    ],
  },
  // Metrics and health (issue 14).
  ...OBSERVABILITY_FLAGS,
  'log-level': {
    type: 'string',
    value: 'LEVEL',
    default: NODE_DEFAULTS.logLevel,
    description: `${LOG_LEVELS.join(', ')} (default ${NODE_DEFAULTS.logLevel})`,
  },
  // csi-driver's readiness options (--continue-on-not-ready, --pod-readiness-gate, --gate-backoff-*).
  ...READINESS_FLAGS,
  ...HELP_FLAG,
  ...inGroup('Kubernetes mode', {
    ...KUBE_CLIENT_FLAGS,
    'use-token-request': {
      type: 'boolean',
      default: false,
      description: [
        "create each CertificateRequest with the pod's own",
        'service-account token (CSIDriver tokenRequests with',
        'audience ""); the token is never logged or stored',
      ],
    },
    'reload-signals': {
      type: 'boolean',
      default: false,
      description: [
        'serve the reload-signal volume attribute: signal the',
        "init process of the pod's container after each rewrite,",
        'found through /proc (needs hostPID: true); without it a',
        'volume asking for a signal is refused',
      ],
    },
  }),
} as const satisfies FlagTable;

/** The flags of `cert-csi node`, as node:util parseArgs options (the manifests test reads them). */
export const NODE_OPTIONS = flagOptions(NODE_FLAGS);

export const NODE_HELP = `Usage: cert-csi node [flags]

Runs the CSI node plugin.

  --mode embedded (default): an in-process store persisted under --state-dir and the
  CA/SelfSigned issuer stack in the same process, with ClusterIssuers "embedded-ca"
  and "self-signed" created on first start.
  --mode kubernetes: CertificateRequests in the cluster API, signed by cert-manager or
  by "cert-csi controller"; this node watches only its own requests.

${flagList(NODE_FLAGS)}`;
