import { subscribeFacts } from '../base/telemetry.js';
import type { ComponentMetrics } from './component-metrics.js';
import { promClient } from './prom-client.js';

/** client-go's buckets of rest_client_request_duration_seconds. */
const REQUEST_DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/**
 * client-go's Kubernetes client families, fed by the store's `apiRequest` facts:
 * `rest_client_requests_total{code,host,method}` and
 * `rest_client_request_duration_seconds{verb,host}`. Every label is bounded: the methods the
 * store uses, the HTTP codes the server answers, one host per kubeconfig. Returns the
 * unsubscription.
 */
export function registerClientMetrics(
  metrics: ComponentMetrics,
  onError: (err: unknown) => void,
): () => void {
  const { Counter, Histogram } = promClient();
  const requests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'host', 'method'],
    registers: [metrics.registry],
  });
  const duration = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [metrics.registry],
  });
  return subscribeFacts(
    'apiRequest',
    (fact) => {
      requests.inc({ code: fact.code, host: fact.host, method: fact.method });
      duration.observe({ verb: fact.method, host: fact.host }, fact.durationSeconds);
    },
    onError,
  );
}
