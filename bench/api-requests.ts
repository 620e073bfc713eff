/**
 * API requests per issuance in cluster mode, counted by the fake API server's request log:
 * the node plugin and `cert-csi controller` (in this process) against test/support's fake
 * API server, N first issuances through the CSI socket, then N renewals. The floor is the
 * fewest writes an issuance can make: a first issuance creates one request; a renewal
 * deletes the old one and creates one. Target: no more than 2 writes by the plugin.
 *
 *   npm run bench:api [-- --volumes 50]
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { IssuerKind } from '../src/api/issuer.js';
import { silentLogger } from '../src/api/logger.js';
import { SecretKind } from '../src/api/secret.js';
import { startController } from '../src/cli/controller/controller.js';
import { controllerSelection } from '../src/cli/controller/controller-names.js';
import { startKubernetesPlugin } from '../src/cli/node/kubernetes-plugin.js';
import { CsiClient } from '../src/driver/csi-client.js';
import { KubeConfig } from '../src/store/kubernetes/client-node.js';
import { createMounter } from '../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../src/volume-manager/settings.js';
import {
  FakeApiServer,
  type RequestLogEntry,
  serviceAccountUser,
} from '../test/fake-api-server/fake-api-server.js';
import { loadRbacFromDirectory } from '../test/fake-api-server/rbac-authorizer.js';
import { issuer, tlsSecret, withNamespace, withSpec } from '../test/support/builders/index.js';
import { makeCA } from '../test/support/issuer-fixtures.js';
import { inlineVolumeCall, podInfo } from '../test/support/publish-call.js';
import { type Figure, recordFigures } from './support/figures.js';

const { values } = parseArgs({ options: { volumes: { type: 'string', default: '50' } } });
const volumes = Number(values.volumes);

const rbac = await loadRbacFromDirectory(new URL('../deploy/manifests/', import.meta.url).pathname);
const server = await FakeApiServer.start({ rbac });
server.addToken('node', serviceAccountUser('cert-csi', 'cert-csi-node'));
server.addToken('controller', serviceAccountUser('cert-csi', 'cert-csi-controller'));
const config = (token: string) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig(token));
  return kubeConfig;
};
const ca = await makeCA();
await server.store.create(
  SecretKind,
  tlsSecret('bench', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
);
await server.store.create(
  IssuerKind,
  issuer('ca', withNamespace('bench'), withSpec({ ca: { secretName: 'ca' } })),
);

const controller = startController({
  kubeConfig: config('controller'),
  qps: 1000,
  burst: 1000,
  identity: 'bench',
  clusterResourceNamespace: 'cert-csi',
  enabled: controllerSelection(undefined),
  signingWorkers: 4,
  logger: silentLogger,
  leaderElection: {
    namespace: 'cert-csi',
    name: 'cert-csi-controller',
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  },
});
const dir = await mkdtemp(join(tmpdir(), 'cert-csi-bench-api-'));
const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
const plugin = await startKubernetesPlugin({
  endpoint,
  settings: volumeManagerSettings({ nodeId: 'bench-node' }),
  driverName: 'csi.cert-manager.io',
  version: 'bench',
  dataRoot: join(dir, 'volumes'),
  mounter: createMounter({ mode: 'direct' }),
  logger: silentLogger,
  kubeConfig: config('node'),
  qps: 1000,
  burst: 1000,
  useTokenRequest: false,
});
const client = new CsiClient(endpoint);
// Let both sides start (lists, watches, the Lease) before counting.
await delay(500);

const NODE = 'system:serviceaccount:cert-csi:cert-csi-node';
const CONTROLLER = 'system:serviceaccount:cert-csi:cert-csi-controller';
const isWrite = (r: RequestLogEntry) => !['get', 'list', 'watch'].includes(r.verb);

function tally(entries: RequestLogEntry[], user: string, n: number) {
  const mine = entries.filter((r) => r.user === user && r.resource !== 'leases');
  const writes = mine.filter(isWrite);
  const reads = mine.filter((r) => !isWrite(r));
  const kinds = new Map<string, number>();
  for (const r of mine) {
    const key = `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}`;
    kinds.set(key, (kinds.get(key) ?? 0) + 1);
  }
  return {
    writes: writes.length / n,
    reads: reads.length / n,
    detail: [...kinds].map(([k, v]) => `${k} ${(v / n).toFixed(2)}`).join(', '),
  };
}

const figures: Figure[] = [];
function report(label: string, entries: RequestLogEntry[], floor: number) {
  const node = tally(entries, NODE, volumes);
  const ctl = tally(entries, CONTROLLER, volumes);
  figures.push({
    name: `plugin API writes per ${label}`,
    value: node.writes,
    unit: 'writes',
    ownFloor: { value: floor, what: 'the least the protocol needs' },
  });
  console.log(
    `${label.padEnd(15)} | plugin writes ${node.writes.toFixed(2)} reads ${node.reads.toFixed(2)} | floor ${floor} | ratio ${(node.writes / floor).toFixed(2)} | controller writes ${ctl.writes.toFixed(2)} reads ${ctl.reads.toFixed(2)}`,
  );
  console.log(`  plugin:     ${node.detail}`);
  console.log(`  controller: ${ctl.detail}`);
}

console.log(`bench/api-requests: node ${process.version}, ${volumes} volumes, per issuance`);
server.clearLog();
for (let i = 0; i < volumes; i++) {
  await client.nodeCall(
    'NodePublishVolume',
    inlineVolumeCall(`vol-${i}`, join(dir, 'pods', `vol-${i}`), {
      ...podInfo({
        name: `pod-${i}`,
        namespace: 'bench',
        uid: '00000000-0000-4000-8000-000000000000',
      }),
      'csi.cert-manager.io/issuer-name': 'ca',
      'csi.cert-manager.io/key-algorithm': 'ECDSA',
    }),
  );
}
await delay(200);
report('first issuance', [...server.requests], 1);
server.clearLog();
const renewed = await plugin.manager.renewNow({ all: true });
if (renewed.failed.length > 0) throw new Error(`renewals failed: ${renewed.failed.length}`);
await delay(200);
report('renewal', [...server.requests], 2);
const forbidden = server.requests.filter((r) => r.status === 403).length;
if (forbidden > 0) throw new Error(`${forbidden} requests refused by RBAC`);

recordFigures('api', figures);
client.close();
await plugin.stop();
await controller.stop();
await server.close();
await rm(dir, { recursive: true, force: true });
