import type { KubeConfig } from '@kubernetes/client-node';
import { AdmissionWebhookServer } from '../../admission/webhook/admission-server.js';
import {
  CaBundleKeeper,
  type KeptConfiguration,
} from '../../admission/webhook/ca-bundle-keeper.js';
import { certManagerAdmission } from '../../admission/webhook/cert-manager-admission.js';
import {
  type IssuedServingCertificate,
  ServingCertificate,
  serviceDnsNames,
} from '../../admission/webhook/serving-certificate.js';
import { SignerResourceResolver } from '../../admission/webhook/signer-resources.js';
import { WebhookCa } from '../../admission/webhook/webhook-ca.js';
import type { Logger } from '../../api/logger.js';
import {
  MutatingWebhookConfigurationKind,
  ValidatingWebhookConfigurationKind,
} from '../../api/webhook-configuration.js';
import { type Clock, systemClock } from '../../base/clock.js';
import { subjectAccessReviewer } from '../../controller/access-reviewer.js';
import { KubernetesDiscovery } from '../../store/kubernetes/kubernetes-discovery.js';
import { KubernetesStore } from '../../store/kubernetes/kubernetes-store.js';

export interface WebhookOptions {
  kubeConfig: KubeConfig;
  qps: number;
  burst: number;
  /** The limit of one API request (--kube-api-timeout). */
  requestTimeoutMs: number;
  /** HTTPS port; 0 picks a free one. */
  port: number;
  /** Listen address (default: every address). */
  host?: string;
  namespace: string;
  serviceName: string;
  caSecretName: string;
  /** The configurations whose caBundle is kept (none when undefined). */
  validatingWebhookConfiguration?: string | undefined;
  mutatingWebhookConfiguration?: string | undefined;
  logger: Logger;
  clock?: Clock;
}

/** A running `cert-csi webhook`. */
export interface Webhook {
  /** The bound HTTPS port. */
  port: number;
  /** PEM of the CAs clients must trust (the CA Secret's ca.crt). */
  bundlePem(): string | undefined;
  /** Whether /readyz answers 200. */
  ready(): boolean;
  /**
   * Fails /readyz, keeps answering for delayMs (default 0) while the pod leaves the Service's
   * endpoints, then stops serving (requests in flight finish) and every watch and timer.
   */
  stop(delayMs?: number): Promise<void>;
}

const FIELD_MANAGER = 'cert-csi-webhook';

/**
 * The admission webhook against the cluster: its CA (a Secret, created or read back), a
 * serving certificate from it kept renewed, the caBundle of its configurations kept current,
 * and the HTTPS server answering with cert-manager's rules. Ready once its configurations
 * trust the CA of the certificate it serves. Rejects when the CA cannot be read or created.
 */
export async function startWebhook(options: WebhookOptions): Promise<Webhook> {
  const { kubeConfig, logger, namespace } = options;
  const store = new KubernetesStore({
    kubeConfig,
    qps: options.qps,
    burst: options.burst,
    requestTimeoutMs: options.requestTimeoutMs,
    fieldManager: FIELD_MANAGER,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const clock = options.clock ? { clock: options.clock } : {};
  const timers = options.clock ?? systemClock;
  const ca = new WebhookCa({
    store,
    namespace,
    secretName: options.caSecretName,
    logger: logger.child({ source: 'ca' }),
    ...clock,
  });
  const configurations: KeptConfiguration[] = [
    ...(options.validatingWebhookConfiguration
      ? [{ kind: ValidatingWebhookConfigurationKind, name: options.validatingWebhookConfiguration }]
      : []),
    ...(options.mutatingWebhookConfiguration
      ? [{ kind: MutatingWebhookConfigurationKind, name: options.mutatingWebhookConfiguration }]
      : []),
  ];
  const keeper = new CaBundleKeeper({
    store,
    configurations,
    bundlePem: () => ca.bundlePem,
    logger: logger.child({ source: 'ca-bundle' }),
    ...clock,
  });
  ca.onChange(() => keeper.bundleChanged());
  let server: AdmissionWebhookServer | undefined;
  const serving = new ServingCertificate({
    authority: ca,
    dnsNames: serviceDnsNames(options.serviceName, namespace),
    install: (pair) => server?.setCertificate(pair),
    trusted: (caPem, signal) => keeper.waitUntilTrusted(caPem, signal),
    logger: logger.child({ source: 'serving-certificate' }),
    ...clock,
  });
  await serving.start();
  // Defined from now on: start() put the first certificate in service.
  const current = () => serving.current as IssuedServingCertificate;
  ca.start();
  keeper.start();
  let stopping = false;
  const readiness = () => {
    if (stopping) return { ready: false, why: 'shutting down' } as const;
    // With no configuration to keep, nothing to wait for (trusts() holds for none).
    return keeper.trusts(current().caPem)
      ? ({ ready: true } as const)
      : ({
          ready: false,
          why: 'the webhook configurations do not trust the serving certificate yet',
        } as const);
  };
  try {
    server = await AdmissionWebhookServer.start({
      handlers: certManagerAdmission({
        signerResources: new SignerResourceResolver(
          new KubernetesDiscovery(kubeConfig, options.requestTimeoutMs, options.clock),
          options.clock,
        ),
        reviewAccess: subjectAccessReviewer(store),
      }),
      certificate: current(),
      logger: logger.child({ source: 'admission' }),
      port: options.port,
      ...(options.host === undefined ? {} : { host: options.host }),
      readiness,
    });
  } catch (err) {
    serving.stop();
    keeper.stop();
    ca.stop();
    throw err;
  }
  const running = server;
  return {
    port: running.port,
    bundlePem: () => ca.bundlePem,
    ready: () => readiness().ready,
    async stop(delayMs = 0) {
      stopping = true;
      if (delayMs > 0) {
        await new Promise<void>((resolve) => timers.setTimeout(resolve, delayMs));
      }
      serving.stop();
      keeper.stop();
      ca.stop();
      await running.close();
    },
  };
}
