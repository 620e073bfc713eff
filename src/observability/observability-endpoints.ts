import type { Logger } from '../api/logger.js';
import type { BindAddress } from './bind-address.js';
import type { ComponentMetrics } from './component-metrics.js';
import { healthRoutes, type ReadinessCheck } from './health-routes.js';
import { type HttpEndpoint, type RouteAnswer, startHttpEndpoint } from './http-endpoint.js';
import { metricsRoutes } from './metrics-routes.js';

export interface ObservabilityEndpointsOptions {
  /** `/metrics` here; not served when undefined (`--metrics-bind-address=0`). */
  metrics: BindAddress | undefined;
  /** `/livez` and `/readyz` here; not served when undefined. */
  health: BindAddress | undefined;
  component: ComponentMetrics;
  checks: readonly ReadinessCheck[];
  logger: Logger;
}

/** The endpoints serving metrics and health. */
export interface ObservabilityEndpoints {
  metrics: HttpEndpoint | undefined;
  health: HttpEndpoint | undefined;
  close(): Promise<void>;
}

/**
 * Starts the metrics and health endpoints that are enabled; both on one server when they name
 * the same fixed address. A failed start closes what it opened.
 */
export async function startObservabilityEndpoints(
  options: ObservabilityEndpointsOptions,
): Promise<ObservabilityEndpoints> {
  const { metrics, health, logger } = options;
  const metricsPaths = metricsRoutes(options.component);
  const healthPaths = healthRoutes(options.checks);
  if (metrics && health && sameFixedAddress(metrics, health)) {
    const both = await startHttpEndpoint(
      'metrics and health',
      metrics,
      new Map<string, () => RouteAnswer | Promise<RouteAnswer>>([...metricsPaths, ...healthPaths]),
      logger,
    );
    return { metrics: both, health: both, close: () => both.close() };
  }
  const metricsEndpoint = metrics
    ? await startHttpEndpoint('metrics', metrics, metricsPaths, logger)
    : undefined;
  let healthEndpoint: HttpEndpoint | undefined;
  try {
    healthEndpoint = health
      ? await startHttpEndpoint('health', health, healthPaths, logger)
      : undefined;
  } catch (err) {
    await metricsEndpoint?.close();
    throw err;
  }
  return {
    metrics: metricsEndpoint,
    health: healthEndpoint,
    async close() {
      await metricsEndpoint?.close();
      await healthEndpoint?.close();
    },
  };
}

function sameFixedAddress(a: BindAddress, b: BindAddress): boolean {
  return a.port !== 0 && a.port === b.port && a.host === b.host;
}
