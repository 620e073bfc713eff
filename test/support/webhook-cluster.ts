import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import type { Logger } from '../../src/api/logger.js';
import { silentLogger } from '../../src/api/logger.js';
import type { KubeObject } from '../../src/api/meta.js';
import {
  MutatingWebhookConfigurationKind,
  ValidatingWebhookConfigurationKind,
} from '../../src/api/webhook-configuration.js';
import type { Clock } from '../../src/base/clock.js';
import { startWebhook, type Webhook } from '../../src/cli/webhook/webhook.js';
import {
  WEBHOOK_OPTIONS,
  type WebhookSettings,
  webhookSettings,
} from '../../src/cli/webhook/webhook-flags.js';
import { CustomObjectsApi, KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { serviceAccountUser } from '../fake-api-server/fake-api-server.js';
import { loadRbacObjects, type RbacAuthorizer } from '../fake-api-server/rbac-authorizer.js';
import { type Cluster, DEPLOY_DIR, startCluster } from './cluster-harness.js';
import { until } from './eventually.js';

export const WEBHOOK_TOKEN = 'webhook-service-account-token';
export const WEBHOOK_USER = 'system:serviceaccount:cert-csi:cert-csi-webhook';

/** The objects of a deploy/manifests file. */
export async function deployObjects(file: string): Promise<KubeObject[]> {
  const text = await readFile(join(DEPLOY_DIR, file), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

/** Every object of deploy/manifests plus extra objects (test users' roles), as one RBAC. */
export async function deployRbacWith(extra: readonly unknown[]): Promise<RbacAuthorizer> {
  const files = (await readdir(DEPLOY_DIR)).filter((f) => /\.ya?ml$/.test(f));
  const objects = (await Promise.all(files.map((f) => deployObjects(f)))).flat();
  return loadRbacObjects([...objects, ...extra]);
}

/** What the Deployment in webhook.yaml asks `cert-csi webhook` for (POD_NAMESPACE: its namespace). */
export async function manifestSettings(): Promise<WebhookSettings> {
  const objects = await deployObjects('webhook.yaml');
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
    metadata: { namespace: string };
    spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
  };
  const [, ...args] = deployment.spec.template.spec.containers[0]?.args ?? [];
  const { values } = parseArgs({ args, options: WEBHOOK_OPTIONS });
  return webhookSettings(
    { ...values, namespace: deployment.metadata.namespace },
    { POD_NAMESPACE: deployment.metadata.namespace },
  );
}

/** A fake API server with the manifests' webhook configurations and RBAC, and `cert-csi webhook` for it. */
export interface WebhookCluster {
  cluster: Cluster;
  settings: WebhookSettings;
  /** The webhook running now (after start). */
  webhook: Webhook;
  /** Starts a webhook as its ServiceAccount and routes the Service to it; resolves when ready. */
  start(options?: {
    logger?: Logger;
    waitReady?: boolean;
    signal?: AbortSignal;
    clock?: Clock;
  }): Promise<Webhook>;
  /** Stops the running webhook (its port then refuses connections). */
  stop(): Promise<void>;
  /** client-node's API for custom resources, authenticated with token. */
  api(token: string): CustomObjectsApi;
  /** A KubernetesStore authenticated with token. */
  store(token: string): KubernetesStore;
}

/**
 * Starts a cluster (deploy/manifests's RBAC plus extraRbac, unless rbac is given) whose
 * API server holds webhook.yaml's two configurations (caBundle empty), and a token for the
 * webhook's ServiceAccount; the webhook itself is started with start().
 */
export async function startWebhookCluster(
  t: Test,
  options: { extraRbac?: readonly unknown[]; rbac?: RbacAuthorizer } = {},
): Promise<WebhookCluster> {
  const cluster = await startCluster(t);
  cluster.server.rbac = options.rbac ?? (await deployRbacWith(options.extraRbac ?? []));
  cluster.server.addToken(WEBHOOK_TOKEN, serviceAccountUser('cert-csi', 'cert-csi-webhook'));
  const settings = await manifestSettings();
  const admin = cluster.kubeConfig(cluster.server.adminToken);
  const adminStore = new KubernetesStore({ kubeConfig: admin, qps: 1000, burst: 1000 });
  for (const object of await deployObjects('webhook.yaml')) {
    if (object.kind === ValidatingWebhookConfigurationKind.kind) {
      await adminStore.create(ValidatingWebhookConfigurationKind, object);
    } else if (object.kind === MutatingWebhookConfigurationKind.kind) {
      await adminStore.create(MutatingWebhookConfigurationKind, object);
    }
  }
  let current: Webhook | undefined;
  const result: WebhookCluster = {
    cluster,
    settings,
    get webhook(): Webhook {
      if (!current) throw new Error('the webhook is not running');
      return current;
    },
    async start(startOptions = {}) {
      const webhook = await startWebhook({
        kubeConfig: cluster.kubeConfig(WEBHOOK_TOKEN),
        qps: 1000,
        burst: 1000,
        requestTimeoutMs: settings.requestTimeoutMs,
        port: 0,
        host: '127.0.0.1',
        namespace: settings.namespace,
        serviceName: settings.serviceName,
        caSecretName: settings.caSecretName,
        validatingWebhookConfiguration: settings.validatingWebhookConfiguration,
        mutatingWebhookConfiguration: settings.mutatingWebhookConfiguration,
        logger: startOptions.logger ?? silentLogger,
        ...(startOptions.clock ? { clock: startOptions.clock } : {}),
      });
      current = webhook;
      t.teardown(() => webhook.stop());
      cluster.server.setServiceEndpoint(settings.namespace, settings.serviceName, 443, {
        host: '127.0.0.1',
        port: webhook.port,
      });
      if (startOptions.waitReady !== false) {
        await until(() => webhook.ready(), {
          what: 'the webhook to be ready',
          timeoutMs: 20_000,
          ...(startOptions.signal ? { signal: startOptions.signal } : {}),
        });
      }
      return webhook;
    },
    async stop() {
      await current?.stop();
      current = undefined;
    },
    api(token) {
      const config = new KubeConfig();
      config.loadFromOptions(cluster.server.kubeConfig(token));
      return config.makeApiClient(CustomObjectsApi);
    },
    store(token) {
      return new KubernetesStore({ kubeConfig: cluster.kubeConfig(token), qps: 1000, burst: 1000 });
    },
  };
  return result;
}
