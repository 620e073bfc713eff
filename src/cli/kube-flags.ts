import type { ParseArgsConfig } from 'node:util';

/** Defaults of the Kubernetes client flags; client-go's defaults are 5 QPS, burst 10. */
export const KUBE_CLIENT_DEFAULTS = { qps: '20', burst: '40' } as const;

/** Flags that say how to reach the cluster API, shared by `node --mode kubernetes` and `controller`. */
export const KUBE_CLIENT_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'kube-api-qps': { type: 'string', default: KUBE_CLIENT_DEFAULTS.qps },
  'kube-api-burst': { type: 'string', default: KUBE_CLIENT_DEFAULTS.burst },
} as const satisfies ParseArgsConfig['options'];

/** The help lines of KUBE_CLIENT_OPTIONS. */
export const KUBE_CLIENT_HELP = `  --kubeconfig PATH              kubeconfig file (default: in-cluster service account,
                                 else $KUBECONFIG, else ~/.kube/config)
  --context NAME                 kubeconfig context (default: its current-context)
  --kube-api-qps N               API requests per second, sustained (default ${KUBE_CLIENT_DEFAULTS.qps})
  --kube-api-burst N             API requests allowed in a burst (default ${KUBE_CLIENT_DEFAULTS.burst})
`;

/** Parses --kube-api-qps and --kube-api-burst. */
export function kubeRateFlags(values: { 'kube-api-qps': string; 'kube-api-burst': string }): {
  qps: number;
  burst: number;
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
  return { qps, burst };
}
