// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
import { X509Certificate } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { type Pod, PodKind } from '../../src/api/pod.js';
import { formatTable } from '../../src/cli/status/volumes-table.js';
import { ipAddressBytes } from '../../src/pki/index.js';
import { readMetadata } from '../../src/volume/metadata.js';
import { readVolumeStatuses } from '../../src/volume-manager/control/volume-status.js';
import type { ReadinessOptions } from '../../src/volume-manager/readiness/pod-readiness.js';
import { parseReadinessGate } from '../../src/volume-manager/readiness/readiness-gate.js';
import { DEFAULT_READINESS } from '../../src/volume-manager/settings.js';
import {
  type ClusterPlugin,
  caIssuerAttributes,
  POD_NAMESPACE,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { podInfo } from '../support/publish-call.js';

// One cluster (the manifests' RBAC enforced), one in-process controller signing with the
// seeded CA Issuer, and one node plugin per scenario, each on its own node.
const cluster = await startCluster(t);
await cluster.seedIssuer();
startClusterController(t, cluster);

// Generous: the machine is shared. Event-driven issuance is proven by a gate backoff of an
// hour, which no retry timer can beat.
const WAIT = { timeoutMs: 30_000, intervalMs: 20 };
const HOUR_BACKOFF = { initialMs: 3_600_000, factor: 2, capMs: 3_600_000, jitter: 0 };

const ipAttributes = {
  ...caIssuerAttributes,
  'csi.cert-manager.io/key-algorithm': 'ECDSA',
  'csi.cert-manager.io/ip-sans': '${POD_IPS}',
  'csi.cert-manager.io/dns-names': '${POD_NAME}.${POD_NAMESPACE}.svc',
};

/** Creates a pod on node (no status yet: no IP, no conditions) and returns its volume context. */
async function createPod(name: string, node: string): Promise<Record<string, string>> {
  const created = await cluster.server.store.create<Pod>(PodKind, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: POD_NAMESPACE },
    spec: { nodeName: node, serviceAccountName: 'app' },
  });
  return podInfo({
    name,
    namespace: POD_NAMESPACE,
    uid: created.metadata.uid ?? '',
    serviceAccount: 'app',
  });
}

/** Sets the pod's status as the kubelet reports it. */
async function setPodStatus(name: string, status: NonNullable<Pod['status']>): Promise<void> {
  const pod = await cluster.server.store.get<Pod>(PodKind, name, POD_NAMESPACE);
  await cluster.server.store.updateStatus<Pod>(PodKind, { ...pod, status });
}

async function startNode(node: string, readiness?: ReadinessOptions, dir?: string) {
  return startClusterPlugin(t, cluster, {
    nodeId: node,
    ...(readiness ? { readiness } : {}),
    ...(dir ? { dir } : {}),
  });
}

async function certificateIn(target: string): Promise<X509Certificate | undefined> {
  const pem = await readFile(join(target, 'tls.crt'), 'utf8').catch(() => undefined);
  return pem === undefined ? undefined : new X509Certificate(pem);
}

/** The IP SANs of a certificate, as bytes in hex (IPv6 spelling differences do not matter). */
function ipSans(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((san) => san.startsWith('IP Address:'))
    .map((san) => Buffer.from(ipAddressBytes(san.slice('IP Address:'.length))).toString('hex'));
}
const hexOf = (ip: string) => Buffer.from(ipAddressBytes(ip)).toString('hex');

async function requestsOfNode(node: ClusterPlugin): Promise<CertificateRequest[]> {
  const all = await cluster.server.store.list<CertificateRequest>(CertificateRequestKind);
  return all.items.filter(
    (r) =>
      node.plugin.informers
        .informer(CertificateRequestKind)
        .get(r.metadata.name, r.metadata.namespace) !== undefined,
  );
}

t.test(
  '${POD_IP}: an empty volume at once, a certificate on the IP event, re-issued on change',
  async (t) => {
    const context = await createPod('ip-app', 'node-ip');
    const node = await startNode('node-ip', { ...DEFAULT_READINESS, gateBackoff: HOUR_BACKOFF });

    const { target } = await node.publish('vol-ip', ipAttributes, context);
    t.same(await readdir(target), [], 'published at once, the volume is empty');
    t.same(await requestsOfNode(node), [], 'no CertificateRequest while the pod has no IP');
    const [waiting] = await readVolumeStatuses(node.plugin.dataRoot);
    t.equal(waiting?.state, 'waiting', 'status shows the volume waiting');
    t.equal(waiting?.waiting?.reason, 'pod has no IP address yet');
    t.match(
      formatTable(await readVolumeStatuses(node.plugin.dataRoot)),
      /waiting .*waiting for the pod: pod has no IP address yet/,
    );

    const appeared = Date.now();
    await setPodStatus('ip-app', {
      podIP: '10.244.1.7',
      podIPs: [{ ip: '10.244.1.7' }, { ip: 'fd00:10:244:1::7' }],
    });
    const cert = await until(() => certificateIn(target), { ...WAIT, what: 'the certificate' });
    const elapsed = Date.now() - appeared;
    t.comment(`certificate ${elapsed} ms after the pod IP appeared in the API server`);
    // Well under a second on an idle machine; the bound only catches a poll or a retry timer.
    t.ok(elapsed < 10_000, `issued on the watch event (${elapsed} ms)`);
    t.same(
      ipSans(cert).sort(),
      [hexOf('10.244.1.7'), hexOf('fd00:10:244:1::7')].sort(),
      'one IP SAN per pod IP',
    );
    t.match(cert.subjectAltName, /DNS:ip-app\.sandbox\.svc/);
    const metadata = await readMetadata(node.plugin.dataRoot, 'vol-ip');
    t.same(metadata.podIPs, ['10.244.1.7', 'fd00:10:244:1::7'], 'metadata.json records the IPs');
    t.equal(metadata.waiting, undefined, 'no longer waiting');
    t.equal((await readVolumeStatuses(node.plugin.dataRoot))[0]?.state, 'ok');

    await setPodStatus('ip-app', { podIP: '10.244.1.8', podIPs: [{ ip: '10.244.1.8' }] });
    const renewed = await until(
      async () => {
        const current = await certificateIn(target);
        return current && ipSans(current).includes(hexOf('10.244.1.8')) ? current : undefined;
      },
      { ...WAIT, what: 'the certificate with the new IP' },
    );
    t.same(ipSans(renewed), [hexOf('10.244.1.8')], 'an IP change re-issues with the new IP only');
    t.not(renewed.serialNumber, cert.serialNumber);
    await node.stop();
  },
);

t.test('--continue-on-not-ready with a pod-condition gate', async (t) => {
  const readiness: ReadinessOptions = {
    continueOnNotReady: true,
    gates: [parseReadinessGate('pod-condition:Ready')],
    gateBackoff: HOUR_BACKOFF,
  };
  const node = await startNode('node-gate', readiness);
  const attributes = { ...caIssuerAttributes, 'csi.cert-manager.io/key-algorithm': 'ECDSA' };

  const waitingContext = await createPod('gated-app', 'node-gate');
  await setPodStatus('gated-app', { conditions: [{ type: 'Ready', status: 'False' }] });
  await until(
    () =>
      node.plugin.informers.informer<Pod>(PodKind).get('gated-app', POD_NAMESPACE)?.status
        ?.conditions,
    {
      ...WAIT,
      what: 'the informer to see the pod',
    },
  );
  const { target } = await node.publish('vol-gated', attributes, waitingContext);
  t.same(await readdir(target), [], 'a pod that fails the gate gets an empty volume at once');
  const [status] = await readVolumeStatuses(node.plugin.dataRoot);
  t.equal(status?.state, 'waiting');
  t.equal(status?.waiting?.reason, 'pod condition Ready is "False", want "True"');

  await setPodStatus('gated-app', { conditions: [{ type: 'Ready', status: 'True' }] });
  const cert = await until(() => certificateIn(target), { ...WAIT, what: 'the gated certificate' });
  t.match(cert.subjectAltName, /DNS:gated-app\.sandbox\.svc/, 'issued once the gate passes');

  // A pod that passes the gates at publish: the publish blocks until the certificate is there.
  const readyContext = await createPod('ready-app', 'node-gate');
  await setPodStatus('ready-app', { conditions: [{ type: 'Ready', status: 'True' }] });
  await until(
    () =>
      node.plugin.informers.informer<Pod>(PodKind).get('ready-app', POD_NAMESPACE)?.status
        ?.conditions,
    {
      ...WAIT,
      what: 'the informer to see the ready pod',
    },
  );
  const ready = await node.publish('vol-ready', attributes, readyContext);
  t.ok(await certificateIn(ready.target), 'the certificate is there when the publish answers');
  await node.stop();
});

t.test('a restart takes back a waiting volume and issues it when the pod has its IP', async (t) => {
  const context = await createPod('restart-app', 'node-restart');
  const first = await startNode('node-restart');
  const { target } = await first.publish('vol-restart', ipAttributes, context);
  t.same(await readdir(target), [], 'waiting before the restart');
  await first.stop();

  // The IP comes while no plugin runs: the next one must see it from its first list.
  await setPodStatus('restart-app', { podIP: '10.244.3.9', podIPs: [{ ip: '10.244.3.9' }] });
  const second = await startNode('node-restart', undefined, first.dir);
  const cert = await until(() => certificateIn(target), {
    ...WAIT,
    what: 'the certificate after the restart',
  });
  t.same(ipSans(cert), [hexOf('10.244.3.9')]);
  await second.stop();
});
