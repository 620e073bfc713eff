import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { silentLogger } from '../../src/api/logger.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { startCsiServer } from '../../src/driver/csi-server.js';
import { pluginCapabilities, pluginInfo, probe } from '../../src/driver/identity-service.js';
import { nodeServiceHandlers } from '../../src/driver/node-service.js';
import { ensureEmbeddedIssuers } from '../../src/issuer/embedded-issuers.js';
import { MemoryEventRecorder } from '../../src/issuer/recorded-events.js';
import { type IssuerStackOptions, startIssuerStack } from '../../src/issuer/stack.js';
import { VolumeManager } from '../../src/renewal/volume-manager.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { createMounter } from '../../src/volume/mounter.js';

/** A running plugin on a real unix socket, with a real gRPC client. */
export interface PluginHarness {
  dir: string;
  dataRoot: DataRoot;
  store: MemoryStore;
  events: MemoryEventRecorder;
  client: CsiClient;
  manager: VolumeManager;
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

/** Starts store, embedded issuers, controllers, volume manager and CSI server for one test. */
export async function startPlugin(
  t: Test,
  options: {
    stack?: Partial<IssuerStackOptions>;
    publishTimeoutMs?: number;
    nodeId?: string;
    mountMode?: 'direct' | 'bind';
  } = {},
): Promise<PluginHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-plugin-'));
  const store = new MemoryStore();
  const events = new MemoryEventRecorder();
  await ensureEmbeddedIssuers(store, {
    clusterResourceNamespace: 'kube-system',
    logger: silentLogger,
  });
  let manager: VolumeManager | undefined;
  const stack = await startIssuerStack({
    store,
    events,
    retryBaseDelayMs: 20,
    privateKeyFor: (namespace, name) => manager?.pendingKeyFor(namespace, name),
    ...options.stack,
  });
  const dataRoot = new DataRoot(join(dir, 'volumes'));
  manager = new VolumeManager({
    store,
    nodeId: options.nodeId ?? 'test-node',
    dataRoot,
    mounter: createMounter({ mode: options.mountMode ?? 'direct' }),
    logger: silentLogger,
    ...(options.publishTimeoutMs ? { publishTimeoutMs: options.publishTimeoutMs } : {}),
  });
  await manager.start();
  const running = manager;
  const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
  const identity = {
    driverName: 'csi.cert-manager.io',
    version: '0.1.0-test',
    isReady: () => running.isReady(),
  };
  const server = await startCsiServer({
    endpoint,
    logger: silentLogger,
    identity: {
      GetPluginInfo: () => pluginInfo(identity),
      GetPluginCapabilities: () => pluginCapabilities(),
      Probe: () => probe(identity),
    },
    node: nodeServiceHandlers({
      nodeId: options.nodeId ?? 'test-node',
      publisher: running,
      logger: silentLogger,
    }),
  });
  const client = new CsiClient(endpoint);
  t.teardown(async () => {
    client.close();
    await server.close(100);
    running.stop();
    await stack.stop();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    dir,
    dataRoot,
    store,
    events,
    client,
    manager: running,
    async publish(volumeId, attributes, publishOptions = {}) {
      const target = publishOptions.target ?? join(dir, 'pods', volumeId, 'mount');
      await client.nodeCall('NodePublishVolume', {
        volume_id: volumeId,
        target_path: target,
        readonly: publishOptions.readonly ?? true,
        volume_context: {
          'csi.storage.k8s.io/ephemeral': 'true',
          'csi.storage.k8s.io/pod.name': 'app-0',
          'csi.storage.k8s.io/pod.namespace': 'sandbox',
          'csi.storage.k8s.io/pod.uid': '0a99d1e4-5b1c-4c8a-9f0e-2f6d7f9b1c11',
          'csi.storage.k8s.io/serviceAccount.name': 'app',
          ...publishOptions.pod,
          ...attributes,
        },
        volume_capability: {
          mount: { fs_type: '', mount_flags: [], volume_mount_group: publishOptions.fsGroup ?? '' },
          access_mode: { mode: 'SINGLE_NODE_WRITER' },
        },
      });
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
