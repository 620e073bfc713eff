import type { ComponentMetrics } from './component-metrics.js';
import type { RouteAnswer } from './http-endpoint.js';

/** The `/metrics` route: a component's metrics in Prometheus' text exposition format. */
export function metricsRoutes(metrics: ComponentMetrics): Map<string, () => Promise<RouteAnswer>> {
  return new Map([
    [
      '/metrics',
      async () => ({
        status: 200,
        contentType: metrics.contentType,
        body: await metrics.exposition(),
      }),
    ],
  ]);
}
