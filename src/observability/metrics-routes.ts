import type { Registry } from 'prom-client';
import type { RouteAnswer } from './http-endpoint.js';

/** The `/metrics` route: registry in Prometheus' text exposition format. */
export function metricsRoutes(registry: Registry): Map<string, () => Promise<RouteAnswer>> {
  return new Map([
    [
      '/metrics',
      async () => ({
        status: 200,
        contentType: registry.contentType,
        body: await registry.metrics(),
      }),
    ],
  ]);
}
