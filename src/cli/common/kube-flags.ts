import type { FlagTable } from './flag-table.js';
import { flagTimeout } from './flag-values.js';

/**
 * Defaults of the Kubernetes client flags; client-go's defaults are 5 QPS, burst 10 and no
 * request timeout. The timeout is KubernetesStore's DEFAULT_REQUEST_TIMEOUT_MS, spelled here
 * so that this module does not load client-node.
 */
export const KUBE_CLIENT_DEFAULTS = { qps: '20', burst: '40', timeout: '30s' } as const;

/**
 * Flags that say how to reach the cluster API (`node --mode kubernetes`, `controller`,
 * `webhook`, and the `--certificate`/`--requests` forms of `renew` and `status`), for a
 * command whose --kube-api-timeout defaults to timeout.
 */
export function kubeClientFlagTable(timeout: string = KUBE_CLIENT_DEFAULTS.timeout) {
  return {
    kubeconfig: {
      type: 'string',
      value: 'PATH',
      description: [
        'kubeconfig file (default: in-cluster service account,',
        'else $KUBECONFIG, else ~/.kube/config)',
      ],
    },
    context: {
      type: 'string',
      value: 'NAME',
      description: 'kubeconfig context (default: its current-context)',
    },
    'kube-api-qps': {
      type: 'string',
      value: 'N',
      default: KUBE_CLIENT_DEFAULTS.qps,
      description: `API requests per second, sustained (default ${KUBE_CLIENT_DEFAULTS.qps})`,
    },
    'kube-api-burst': {
      type: 'string',
      value: 'N',
      default: KUBE_CLIENT_DEFAULTS.burst,
      description: `API requests allowed in a burst (default ${KUBE_CLIENT_DEFAULTS.burst})`,
    },
    'kube-api-timeout': {
      type: 'string',
      value: 'DURATION',
      default: timeout,
      description: [
        'how long one API request may take before it is cancelled',
        `and retried (default ${timeout})`,
      ],
    },
  } as const satisfies FlagTable;
}

/** The Kubernetes client flags with their usual defaults. */
export const KUBE_CLIENT_FLAGS = kubeClientFlagTable();

/** The long names of the Kubernetes client flags: a command refuses them where no cluster is used. */
export const KUBE_CLIENT_FLAG_NAMES: readonly string[] = Object.keys(KUBE_CLIENT_FLAGS);

/** Parses --kube-api-qps, --kube-api-burst and --kube-api-timeout. */
export function kubeClientFlags(values: {
  'kube-api-qps': string;
  'kube-api-burst': string;
  'kube-api-timeout': string;
}): {
  qps: number;
  burst: number;
  requestTimeoutMs: number;
} {
  const qps = Number(values['kube-api-qps']);
  if (!(qps > 0)) {
    throw new Error(`--kube-api-qps: must be a number > 0, got "${values['kube-api-qps']}"`);
  }
  const burst = Number(values['kube-api-burst']);
  if (!Number.isInteger(burst) || burst < 1) {
    throw new Error(
      `--kube-api-burst: must be a whole number >= 1, got "${values['kube-api-burst']}"`,
    );
  }
  const requestTimeoutMs = flagTimeout('--kube-api-timeout', values['kube-api-timeout']);
  return { qps, burst, requestTimeoutMs };
}
