import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, type Issuer } from '../../src/api/issuer.js';
import { ALLOW_IS_CA_ANNOTATION } from '../../src/api/labels.js';
import type { EmbeddedControllersOptions } from '../../src/cli/node/embedded-plugin.js';
import { startEmbeddedPlugin } from '../../src/cli/node/embedded-plugin.js';
import type { RunningControllers } from '../../src/controller/controller-manager.js';
import type { MemoryEventRecorder } from '../../src/controller/memory-event-recorder.js';
import type { SharedInformers } from '../../src/controller/shared-informers.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import type { Endpoint } from '../../src/driver/endpoint.js';
import type { MemoryStore } from '../../src/store/memory-store.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import type { DataRoot } from '../../src/volume/data-root.js';
import type { IssuedCertificate } from '../../src/volume-manager/issuance/certificate-files.js';
import type { BackoffPolicy } from '../../src/volume-manager/policy/renewal-policy.js';
import type { HttpReloadOptions } from '../../src/volume-manager/reload/http-reload.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import type { VolumeManager } from '../../src/volume-manager/volume-manager.js';
import { until } from './eventually.js';
import {
  HELD_DEADLINE_MS,
  type HeldDeadlinePlugin,
  HeldDeadlines,
  WaitingLog,
} from './held-deadlines.js';
import { inlineVolumeCall, podInfo } from './publish-call.js';

/**
 * A running plugin on a real unix socket, with a real gRPC client. Its issuance deadlines are
 * held (see held-deadlines.ts) when started with `heldDeadlines`.
 */
export interface PluginHarness extends HeldDeadlinePlugin {
  dir: string;
  dataRoot: DataRoot;
  store: MemoryStore;
  events: MemoryEventRecorder;
  client: CsiClient;
  manager: VolumeManager;
  controllers: RunningControllers;
  informers: SharedInformers;
  /** Stops the plugin (also done at teardown); files and mounts stay. */
  stop(): Promise<void>;
  /** NodePublishVolume with kubelet's defaults for an inline volume. */
  publish(
    volumeId: string,
    attributes: Record<string, string>,
    options?: {
      target?: string;
      fsGroup?: string;
      readonly?: boolean;
      pod?: Record<string, string>;
    },
  ): Promise<{ target: string }>;
  unpublish(volumeId: string, target: string): Promise<void>;
  requests(): Promise<CertificateRequest[]>;
}

/**
 * A gRPC client for a plugin started by a test, and one stop for both (client first, then
 * plugin), also run at teardown, which then removes dir when given.
 */
export function connectClient(
  t: Pick<Test, 'teardown'>,
  endpoint: Endpoint,
  plugin: { stop(): Promise<void> },
  dir?: string,
): { client: CsiClient; stop: () => Promise<void> } {
  const client = new CsiClient(endpoint);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    client.close();
    await plugin.stop();
  };
  t.teardown(async () => {
    await stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return { client, stop };
}

/** Starts the embedded plugin (store, issuers, controllers, volume manager, CSI server) for one test. */
export async function startPlugin(
  t: Test,
  options: {
    controllers?: EmbeddedControllersOptions;
    publishTimeoutMs?: number;
    /** Deadlines that fire when the test says (expireOnceWaiting), never on their own. */
    heldDeadlines?: boolean;
    nodeId?: string;
    mountMode?: 'direct' | 'bind';
    dir?: string;
    stateDir?: string;
    renewalJitterMs?: number;
    maxConcurrentIssuances?: number;
    backoff?: BackoffPolicy;
    onIssued?: (volumeId: string, issued: IssuedCertificate, reason: string) => void;
    reloadHttp?: HttpReloadOptions;
  } = {},
): Promise<PluginHarness> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'cert-csi-plugin-')));
  const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
  // A pass-through clock and a silent logger unless the deadlines are held.
  const deadlines = new HeldDeadlines();
  const waiting = new WaitingLog();
  const publishTimeoutMs = options.heldDeadlines ? HELD_DEADLINE_MS : options.publishTimeoutMs;
  const plugin = await startEmbeddedPlugin({
    endpoint,
    settings: volumeManagerSettings({
      nodeId: options.nodeId ?? 'test-node',
      attemptTimeoutMs: publishTimeoutMs,
      renewalJitterMs: options.renewalJitterMs,
      maxConcurrentIssuances: options.maxConcurrentIssuances,
      backoff: options.backoff,
    }),
    driverName: 'csi.cert-manager.io',
    version: '0.1.0-test',
    dataRoot: join(dir, 'volumes'),
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
    mounter: createMounter({ mode: options.mountMode ?? 'direct' }),
    logger: waiting,
    clock: deadlines,
    clusterResourceNamespace: 'kube-system',
    controllers: {
      ...options.controllers,
      retry: { baseDelayMs: 20, ...options.controllers?.retry },
    },
    ...(options.onIssued ? { onIssued: options.onIssued } : {}),
    ...(options.reloadHttp ? { reloadHttp: options.reloadHttp } : {}),
  });
  const { store, events, dataRoot, manager, controllers, informers } = plugin;
  const { client, stop } = connectClient(t, endpoint, plugin, options.dir ? undefined : dir);
  return {
    dir,
    dataRoot,
    store,
    events,
    client,
    manager,
    controllers,
    informers,
    deadlines,
    waiting,
    stop,
    async publish(volumeId, attributes, publishOptions = {}) {
      const target = publishOptions.target ?? join(dir, 'pods', volumeId, 'mount');
      const pod = podInfo({
        name: 'app-0',
        namespace: 'sandbox',
        uid: '0a99d1e4-5b1c-4c8a-9f0e-2f6d7f9b1c11',
        serviceAccount: 'app',
      });
      await client.nodeCall(
        'NodePublishVolume',
        inlineVolumeCall(
          volumeId,
          target,
          { ...pod, ...publishOptions.pod, ...attributes },
          {
            ...(publishOptions.fsGroup ? { fsGroup: publishOptions.fsGroup } : {}),
            ...(publishOptions.readonly !== undefined ? { readonly: publishOptions.readonly } : {}),
          },
        ),
      );
      return { target };
    },
    async unpublish(volumeId, target) {
      await client.nodeCall('NodeUnpublishVolume', { volume_id: volumeId, target_path: target });
    },
    async requests() {
      return (await store.list<CertificateRequest>(CertificateRequestKind)).items;
    },
  };
}

/** The attributes of a volume signed by the embedded CA. */
export function embeddedCA(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'csi.cert-manager.io/issuer-name': 'embedded-ca',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    ...extra,
  };
}

/**
 * Lets volumes have CA certificates from a ClusterIssuer (annotation cert-csi.io/allow-is-ca:
 * "true"), once the plugin's caches, which the publish check and the approver read, see it.
 */
export async function allowVolumeCa(p: PluginHarness, name = 'embedded-ca'): Promise<void> {
  const current = await p.store.get<Issuer>(ClusterIssuerKind, name);
  await p.store.update(ClusterIssuerKind, {
    ...current,
    metadata: {
      ...current.metadata,
      annotations: { ...current.metadata.annotations, [ALLOW_IS_CA_ANNOTATION]: 'true' },
    },
  });
  await until(
    () =>
      p.informers.informer<Issuer>(ClusterIssuerKind).get(name)?.metadata.annotations?.[
        ALLOW_IS_CA_ANNOTATION
      ] === 'true',
    { what: `the annotated ClusterIssuer ${name} in the caches` },
  );
}
