import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { IssuerKind } from '../../src/api/issuer.js';
import { silentLogger } from '../../src/api/logger.js';
import { SecretKind } from '../../src/api/secret.js';
import {
  type Controller,
  type ControllerOptions,
  startController,
} from '../../src/cli/controller/controller.js';
import { controllerSelection } from '../../src/cli/controller/controller-names.js';
import {
  type KubernetesPlugin,
  startKubernetesPlugin,
} from '../../src/cli/node/kubernetes-plugin.js';
import type { CsiClient } from '../../src/driver/csi-client.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import type { ReadinessOptions } from '../../src/volume-manager/readiness/pod-readiness.js';
import type { ReloadSignalMode } from '../../src/volume-manager/reload/volume-reloader.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import {
  FakeApiServer,
  type FakeApiServerOptions,
  serviceAccountUser,
} from '../fake-api-server/fake-api-server.js';
import { loadRbacFromDirectory, type RbacAuthorizer } from '../fake-api-server/rbac-authorizer.js';
import { issuer, tlsSecret, withNamespace, withSpec } from './builders/index.js';
import {
  HELD_DEADLINE_MS,
  type HeldDeadlinePlugin,
  HeldDeadlines,
  WaitingLog,
} from './held-deadlines.js';
import { makeCA } from './issuer-fixtures.js';
import { connectClient } from './plugin-harness.js';
import { projectPath } from './project-files.js';
import { inlineVolumeCall, podInfo } from './publish-call.js';

export const DEPLOY_DIR = projectPath('deploy', 'manifests');
export const NODE_TOKEN = 'node-service-account-token';
export const CONTROLLER_TOKEN = 'controller-service-account-token';
/** The user the API server sees for CONTROLLER_TOKEN, as request logs and audits name it. */
export const CONTROLLER_USER = 'system:serviceaccount:cert-csi:cert-csi-controller';
export const POD_NAMESPACE = 'sandbox';
export const POD_UID = '0a99d1e4-5b1c-4c8a-9f0e-2f6d7f9b1c11';

/** A fake API server with the RBAC rules of deploy/manifests and the two ServiceAccounts' tokens. */
export interface Cluster {
  server: FakeApiServer;
  rbac: RbacAuthorizer;
  dir: string;
  /** A kubeconfig file for token, for `--kubeconfig`. */
  kubeconfigFile(token: string): Promise<string>;
  kubeConfig(token: string): KubeConfig;
  /** A CA Secret and a CA Issuer `ca` in the pod namespace. */
  seedIssuer(): Promise<void>;
  requests(): Promise<CertificateRequest[]>;
}

// The manifests' RBAC, read once per process: the files do not change while a test runs, an
// authorizer is never changed in place (its with/without methods return copies), and parsing
// every manifest (the CRDs are most of the text) cost ~0.12 s of CPU per cluster.
let deployRbac: Promise<RbacAuthorizer> | undefined;

/** Starts a fake API server that enforces the manifests' RBAC (unless rbac: false). */
export async function startCluster(
  t: Test,
  options: {
    rbac?: boolean;
    historySize?: number;
    servedVersions?: FakeApiServerOptions['servedVersions'];
  } = {},
): Promise<Cluster> {
  deployRbac ??= loadRbacFromDirectory(DEPLOY_DIR);
  const rbac = await deployRbac;
  const server = await FakeApiServer.start({
    ...(options.rbac === false ? {} : { rbac }),
    ...(options.historySize ? { historySize: options.historySize } : {}),
    ...(options.servedVersions ? { servedVersions: options.servedVersions } : {}),
  });
  server.addToken(NODE_TOKEN, serviceAccountUser('cert-csi', 'cert-csi-node'));
  server.addToken(CONTROLLER_TOKEN, serviceAccountUser('cert-csi', 'cert-csi-controller'));
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-cluster-'));
  t.teardown(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    server,
    rbac,
    dir,
    async kubeconfigFile(token) {
      const path = join(dir, `kubeconfig-${token}`);
      await writeFile(path, server.kubeConfigYaml(token), { mode: 0o600 });
      return path;
    },
    kubeConfig(token) {
      const config = new KubeConfig();
      config.loadFromOptions(server.kubeConfig(token));
      return config;
    },
    async seedIssuer() {
      const ca = await makeCA();
      await server.store.create(
        SecretKind,
        tlsSecret(POD_NAMESPACE, 'ca-key-pair', {
          'tls.crt': ca.certificatePem,
          'tls.key': ca.keyPem,
        }),
      );
      await server.store.create(
        IssuerKind,
        issuer('ca', withNamespace(POD_NAMESPACE), withSpec({ ca: { secretName: 'ca-key-pair' } })),
      );
    },
    async requests() {
      return (await server.store.list<CertificateRequest>(CertificateRequestKind)).items;
    },
  };
}

/** A cluster-mode plugin in this process, on a real socket, with a real gRPC client. */
/** The node plugin of a cluster test; its issuance deadlines are held with `heldDeadlines`. */
export interface ClusterPlugin extends HeldDeadlinePlugin {
  plugin: KubernetesPlugin;
  dir: string;
  client: CsiClient;
  publish(
    volumeId: string,
    attributes: Record<string, string>,
    context?: Record<string, string>,
  ): Promise<{ target: string }>;
  unpublish(volumeId: string, target: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `cert-csi node --mode kubernetes` wiring in-process as the node ServiceAccount. */
export async function startClusterPlugin(
  t: Test,
  cluster: Cluster,
  options: {
    nodeId?: string;
    useTokenRequest?: boolean;
    attemptTimeoutMs?: number;
    /** Deadlines that fire when the test says (expireOnceWaiting), never on their own. */
    heldDeadlines?: boolean;
    /** --continue-on-not-ready, --pod-readiness-gate, --gate-backoff-*. */
    readiness?: ReadinessOptions;
    /** --reload-signals: 'pod-processes' signals a volume's pod processes found in /proc. */
    reloadSignals?: ReloadSignalMode;
    /** The dir (data root and socket) of a previous plugin, for a restart. */
    dir?: string;
  } = {},
): Promise<ClusterPlugin> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'cert-csi-node-')));
  const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
  // A pass-through clock and a silent logger unless the deadlines are held.
  const deadlines = new HeldDeadlines();
  const waiting = new WaitingLog();
  const attemptTimeoutMs = options.heldDeadlines ? HELD_DEADLINE_MS : options.attemptTimeoutMs;
  const plugin = await startKubernetesPlugin({
    endpoint,
    settings: volumeManagerSettings({
      nodeId: options.nodeId ?? 'node-1',
      attemptTimeoutMs,
      readiness: options.readiness,
      reloadSignals: options.reloadSignals,
    }),
    driverName: 'csi.cert-manager.io',
    version: '0.1.0-test',
    dataRoot: join(dir, 'volumes'),
    mounter: createMounter({ mode: 'direct' }),
    logger: waiting,
    clock: deadlines,
    kubeConfig: cluster.kubeConfig(NODE_TOKEN),
    qps: 1000,
    burst: 1000,
    useTokenRequest: options.useTokenRequest ?? false,
  });
  const { client, stop } = connectClient(t, endpoint, plugin, dir);
  return {
    plugin,
    deadlines,
    waiting,
    informers: plugin.informers,
    dir,
    client,
    stop,
    async publish(volumeId, attributes, context = {}) {
      const target = join(dir, 'pods', volumeId, 'mount');
      await client.nodeCall(
        'NodePublishVolume',
        inlineVolumeCall(volumeId, target, { ...appPod, ...context, ...attributes }),
      );
      return { target };
    },
    async unpublish(volumeId, target) {
      await client.nodeCall('NodeUnpublishVolume', { volume_id: volumeId, target_path: target });
    },
  };
}

/** The pod every cluster test publishes for, as kubelet describes it. */
export const appPod = podInfo({
  name: 'app-0',
  namespace: POD_NAMESPACE,
  uid: POD_UID,
  serviceAccount: 'app',
});

/** The attributes of a volume signed by the seeded CA Issuer. */
export const caIssuerAttributes = {
  'csi.cert-manager.io/issuer-name': 'ca',
  'csi.cert-manager.io/issuer-kind': 'Issuer',
  'csi.cert-manager.io/dns-names': '${POD_NAME}.${POD_NAMESPACE}.svc',
} as const;

/**
 * `cert-csi controller` in this process as the controller ServiceAccount (quick retries,
 * no leader election unless asked); stopped at teardown.
 */
export function startClusterController(
  t: Pick<Test, 'teardown'>,
  cluster: Cluster,
  options: Partial<ControllerOptions> = {},
): Controller {
  const controller = startController({
    kubeConfig: cluster.kubeConfig(CONTROLLER_TOKEN),
    qps: 1000,
    burst: 1000,
    identity: 'controller-a',
    clusterResourceNamespace: 'cert-csi',
    enabled: controllerSelection(undefined),
    signingWorkers: 2,
    logger: silentLogger,
    retryBaseDelayMs: 50,
    ...options,
  });
  t.teardown(() => controller.stop());
  return controller;
}
