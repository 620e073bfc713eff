import { type CertificateRequest, CertificateRequestKind } from '../../api/certificate-request.js';
import type { Logger } from '../../api/logger.js';
import type { SharedInformers } from '../../controller/shared-informers.js';
import type { BindAddress } from '../../observability/bind-address.js';
import { registerClientMetrics } from '../../observability/client-metrics.js';
import {
  informerMetricsSources,
  registerControllerMetrics,
} from '../../observability/controller-metrics.js';
import { registerNodeMetrics } from '../../observability/node-metrics.js';
import {
  type MetricsCollector,
  type Observability,
  startObservability,
} from '../../observability/observability.js';

/** The parts of a running node plugin that metrics and readiness read. */
export interface ObservedPlugin {
  informers: SharedInformers;
  manager: { isReady(): boolean };
}

export interface NodeObservabilityOptions {
  metrics: BindAddress | undefined;
  health: BindAddress | undefined;
  nodeId: string;
  /** Embedded mode: the controllers run in this process, so their families are served too. */
  controllers: boolean;
  /** Kubernetes mode: the API client's request families. */
  apiClient: boolean;
  logger: Logger;
  /** The plugin once started; undefined while it starts (not ready, no cached objects). */
  plugin(): ObservedPlugin | undefined;
}

/**
 * Starts the node's metrics (csi-lib's families; cert-manager's too in embedded mode, where
 * the controllers run in the process; the API client's in Kubernetes mode) and health
 * endpoints, before the plugin, so /readyz says 503 while it starts and the metrics see
 * rediscovery. Ready: the plugin started, its informers synced, its volume manager started.
 */
export function startNodeObservability(options: NodeObservabilityOptions): Promise<Observability> {
  const informers = () => options.plugin()?.informers;
  const collectors: MetricsCollector[] = [
    (metrics, onError) =>
      registerNodeMetrics(
        metrics,
        {
          nodeId: options.nodeId,
          requests: () => informers()?.cached<CertificateRequest>(CertificateRequestKind) ?? [],
        },
        onError,
      ),
  ];
  if (options.controllers) {
    collectors.push((metrics, onError) =>
      registerControllerMetrics(metrics, informerMetricsSources(informers), onError),
    );
  }
  if (options.apiClient) collectors.push(registerClientMetrics);
  return startObservability({
    metrics: options.metrics,
    health: options.health,
    collectors,
    checks: [
      { name: 'informers-synced', ready: () => informers()?.hasSynced() ?? false },
      { name: 'volume-manager', ready: () => options.plugin()?.manager.isReady() ?? false },
    ],
    logger: options.logger,
  });
}
