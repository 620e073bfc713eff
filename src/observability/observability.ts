import type { Logger } from '../api/logger.js';
import { errorMessage } from '../base/error-message.js';
import type { BindAddress } from './bind-address.js';
import { ComponentMetrics } from './component-metrics.js';
import type { ReadinessCheck } from './health-routes.js';
import {
  type ObservabilityEndpoints,
  startObservabilityEndpoints,
} from './observability-endpoints.js';

/** Registers families in a component's metrics; returns what stops feeding them. */
export type MetricsCollector = (
  metrics: ComponentMetrics,
  onError: (err: unknown) => void,
) => () => void;

export interface ObservabilityOptions {
  /** `/metrics` here; undefined: not served, and no collector is registered (no cost). */
  metrics: BindAddress | undefined;
  /** `/livez` and `/readyz` here; undefined: not served. */
  health: BindAddress | undefined;
  collectors: readonly MetricsCollector[];
  checks: readonly ReadinessCheck[];
  logger: Logger;
}

/** A component's metrics registry and its endpoints. */
export interface Observability extends ObservabilityEndpoints {
  component: ComponentMetrics;
}

/**
 * One process component's observability: its own registry (never prom-client's global one, so
 * two components in one process stay apart) with the collectors registered, and the metrics
 * and health endpoints serving it. A failed start undoes itself.
 */
export async function startObservability(options: ObservabilityOptions): Promise<Observability> {
  const { logger } = options;
  const component = new ComponentMetrics();
  const onError = (err: unknown) =>
    logger.warn({ err: errorMessage(err) }, 'a metrics listener failed');
  const unsubscribe = options.metrics
    ? options.collectors.map((collector) => collector(component, onError))
    : [];
  const stopListening = () => {
    for (const stop of unsubscribe) stop();
  };
  let endpoints: ObservabilityEndpoints;
  try {
    endpoints = await startObservabilityEndpoints({
      metrics: options.metrics,
      health: options.health,
      component,
      checks: options.checks,
      logger,
    });
  } catch (err) {
    stopListening();
    throw err;
  }
  return {
    ...endpoints,
    component,
    async close() {
      stopListening();
      await endpoints.close();
    },
  };
}
