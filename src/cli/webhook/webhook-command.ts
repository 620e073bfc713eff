import { createLogger } from '../../observability/logger.js';
import { loadKubeConfig } from '../../store/kubernetes/kube-config.js';
import { parseFlags } from '../common/flag-table.js';
import { terminationSignal } from '../common/termination.js';
import { startWebhook, type Webhook } from './webhook.js';
import { WEBHOOK_FLAGS, WEBHOOK_HELP, webhookSettings } from './webhook-flags.js';

/**
 * `cert-csi webhook`: cert-manager's admission webhook over HTTPS until SIGTERM or SIGINT,
 * then --shutdown-delay of answering with /readyz failing, then a graceful close. Every flag
 * is checked before the kubeconfig is read. `started` sees the running webhook (tests).
 */
export async function runWebhook(
  args: string[],
  until: () => Promise<unknown> = terminationSignal,
  started?: (webhook: Webhook) => void,
): Promise<number> {
  const { values } = parseFlags(WEBHOOK_FLAGS, args);
  if (values.help) {
    process.stdout.write(WEBHOOK_HELP);
    return 0;
  }
  const settings = webhookSettings(values);
  const logger = createLogger(settings.logLevel);
  const kubeConfig = loadKubeConfig({
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
  });
  const webhook = await startWebhook({
    kubeConfig,
    qps: settings.qps,
    burst: settings.burst,
    requestTimeoutMs: settings.requestTimeoutMs,
    port: settings.port,
    namespace: settings.namespace,
    serviceName: settings.serviceName,
    caSecretName: settings.caSecretName,
    validatingWebhookConfiguration: settings.validatingWebhookConfiguration,
    mutatingWebhookConfiguration: settings.mutatingWebhookConfiguration,
    logger,
  });
  // Listening before the line that says it started (see node-command.ts).
  const stopAsked = until();
  logger.info(
    { port: webhook.port, namespace: settings.namespace, service: settings.serviceName },
    'cert-csi webhook started',
  );
  started?.(webhook);
  await stopAsked;
  logger.info({ delayMs: settings.shutdownDelayMs }, 'cert-csi webhook stopping');
  await webhook.stop(settings.shutdownDelayMs);
  return 0;
}
