import { type BindAddress, parseBindAddress } from '../../observability/bind-address.js';
import type { FlagTable } from './flag-table.js';

/** The metrics and health flags of `cert-csi node` and `cert-csi controller`; `0` disables. */
export const OBSERVABILITY_FLAGS = {
  'metrics-bind-address': {
    type: 'string',
    value: 'ADDR',
    default: '0',
    description: [
      'serve Prometheus metrics at /metrics on host:port',
      '(":9402"); port 0 picks a free port (logged);',
      '0 disables (default 0)',
    ],
  },
  'health-probe-bind-address': {
    type: 'string',
    value: 'ADDR',
    default: '0',
    description: ['serve /livez and /readyz on host:port; 0 disables', '(default 0)'],
  },
} as const satisfies FlagTable;

/** Where metrics and health are served, from the parsed flags (undefined: not served). */
export function observabilityAddresses(values: {
  'metrics-bind-address': string;
  'health-probe-bind-address': string;
}): { metrics: BindAddress | undefined; health: BindAddress | undefined } {
  return {
    metrics: parseBindAddress('--metrics-bind-address', values['metrics-bind-address']),
    health: parseBindAddress('--health-probe-bind-address', values['health-probe-bind-address']),
  };
}
