import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { type Lease, LeaseKind } from '../../src/api/lease.js';
import { runController } from '../../src/cli/controller/controller-command.js';
import { runNode } from '../../src/cli/node/node-command.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { loadKubeConfig } from '../../src/store/kubernetes/kube-config.js';
import { runCli } from '../support/cli-process.js';
import { CONTROLLER_TOKEN, NODE_TOKEN, startCluster } from '../support/cluster-harness.js';
import { rejectionMessage, until } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { inlineVolumeCall, podInfo } from '../support/publish-call.js';

t.test('metrics and health addresses are checked before anything starts', async (t) => {
  t.equal(
    await rejectionMessage(runNode(['--metrics-bind-address', '9402'])),
    '--metrics-bind-address: expected host:port (e.g. ":9402") or 0 to disable, got "9402"',
  );
  t.equal(
    await rejectionMessage(runController(['--health-probe-bind-address', 'localhost'])),
    '--health-probe-bind-address: expected host:port (e.g. ":9402") or 0 to disable, got "localhost"',
  );
});

t.test('node: mode flags are checked before anything starts', async (t) => {
  t.match(
    await rejectionMessage(runNode(['--mode', 'cloud'])),
    /--mode: expected embedded or kubernetes, got "cloud"/,
  );
  t.match(
    await rejectionMessage(runNode(['--mode', 'kubernetes', '--manifests', '/x'])),
    /--manifests: only used with --mode embedded/,
  );
  t.match(
    await rejectionMessage(runNode(['--mode', 'kubernetes', '--state-dir', '/x'])),
    /--state-dir: only used with --mode embedded/,
  );
  t.match(
    await rejectionMessage(runNode(['--kubeconfig', '/x'])),
    /--kubeconfig: only used with --mode kubernetes/,
  );
  t.match(
    await rejectionMessage(runNode(['--use-token-request'])),
    /--use-token-request: only used with --mode kubernetes/,
  );
  t.match(
    await rejectionMessage(runNode(['--reload-signals'])),
    /--reload-signals: only used with --mode kubernetes/,
    'embedded mode signals by PID file, never through /proc',
  );
  t.match(
    await rejectionMessage(runNode(['--kube-api-qps', '5'])),
    /--kube-api-qps: only used with --mode kubernetes/,
  );
  t.match(
    await rejectionMessage(runNode(['--mode', 'kubernetes', '--kube-api-qps', '0'])),
    /--kube-api-qps: must be a number > 0, got "0"/,
  );
  t.match(
    await rejectionMessage(runNode(['--mode', 'kubernetes', '--kube-api-burst', '2.5'])),
    /--kube-api-burst: must be a whole number >= 1, got "2.5"/,
  );
  t.match(
    await rejectionMessage(runNode(['--kube-api-timeout', '10s'])),
    /--kube-api-timeout: only used with --mode kubernetes/,
  );
  t.match(
    await rejectionMessage(runNode(['--mode', 'kubernetes', '--kube-api-timeout', '0s'])),
    /--kube-api-timeout: must be positive and at most 596h, got "0s"/,
  );
});

t.test('controller: bad flags are refused with the flag named', async (t) => {
  t.match(
    await rejectionMessage(runController(['--leader-elect', 'maybe'])),
    /--leader-elect: expected true or false/,
  );
  t.match(
    await rejectionMessage(runController(['--log-level', 'loud'])),
    /--log-level: unknown level "loud"/,
  );
  t.match(
    await rejectionMessage(runController(['--kube-api-timeout', 'soon'])),
    /--kube-api-timeout: .*"soon"/,
  );
  t.match(
    await rejectionMessage(runController(['--leader-election-renew-deadline', '20s'])),
    /lease duration must be longer than the renew deadline/,
  );
  t.match(
    await rejectionMessage(runController(['--leader-election-retry-period', 'soon'])),
    /--leader-election-retry-period: /,
  );
  t.match(
    await rejectionMessage(runController(['--signing-workers', '0'])),
    /--signing-workers: must be a whole number >= 1/,
  );
  t.match(
    await rejectionMessage(runController(['--kubeconfig', '/nonexistent/kubeconfig'])),
    /--kubeconfig \/nonexistent\/kubeconfig: /,
  );
});

t.test('kubeconfig: a missing context is named with the known ones', async (t) => {
  const cluster = await startCluster(t);
  const file = await cluster.kubeconfigFile(NODE_TOKEN);
  t.throws(
    () => loadKubeConfig({ kubeconfig: file, context: 'prod' }),
    /--context prod: no such context \(known: fake\)/,
  );
  const config = loadKubeConfig({ kubeconfig: file, context: 'fake' });
  t.equal(config.getCurrentCluster()?.server, cluster.server.url);
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = file;
  t.teardown(() => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  });
  t.equal(
    loadKubeConfig({}).getCurrentCluster()?.server,
    cluster.server.url,
    '$KUBECONFIG when no flag',
  );
});

t.test('node --mode kubernetes and controller run until told to stop', async (t) => {
  const cluster = await startCluster(t);
  await cluster.seedIssuer();
  // Metrics and health (issue 14): both commands serve them on fixed free ports.
  const [controllerMetrics, controllerHealth, nodeMetrics, nodeHealth] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  let stopController = () => {};
  const controller = runController(
    [
      '--kubeconfig',
      await cluster.kubeconfigFile(CONTROLLER_TOKEN),
      '--leader-election-namespace',
      'cert-csi',
      '--log-level',
      'silent',
      '--identity',
      'in-process',
      `--metrics-bind-address=127.0.0.1:${controllerMetrics}`,
      `--health-probe-bind-address=127.0.0.1:${controllerHealth}`,
    ],
    () => new Promise<void>((resolve) => (stopController = resolve)),
  );
  // Until the controller has written it, the Lease does not exist: keep waiting.
  await until(
    async () => {
      const lease = await cluster.server.store
        .get<Lease>(LeaseKind, 'cert-csi-controller', 'cert-csi')
        .catch(() => undefined);
      return lease?.spec.holderIdentity === 'in-process' ? true : undefined;
    },
    { timeoutMs: 10_000 },
  );
  let stopNode = () => {};
  const socket = join(cluster.dir, 'csi.sock');
  const node = runNode(
    [
      '--mode',
      'kubernetes',
      '--kubeconfig',
      await cluster.kubeconfigFile(NODE_TOKEN),
      '--endpoint',
      `unix://${socket}`,
      '--data-root',
      join(cluster.dir, 'volumes'),
      '--mount-mode',
      'direct',
      '--node-id',
      'cli-node',
      '--log-level',
      'silent',
      `--metrics-bind-address=127.0.0.1:${nodeMetrics}`,
      `--health-probe-bind-address=127.0.0.1:${nodeHealth}`,
      '--reload-signals',
    ],
    () => new Promise<void>((resolve) => (stopNode = resolve)),
  );
  const client = new CsiClient({ kind: 'unix', path: socket });
  t.teardown(() => client.close());
  // The socket appears once the plugin has started: a refused call means not yet.
  const probe = await until(
    () => client.identityCall<{ ready?: { value?: boolean } }>('Probe', {}).catch(() => undefined),
    { timeoutMs: 10_000 },
  );
  t.equal(probe.ready?.value, true, 'the plugin answers on its socket');
  await client.nodeCall(
    'NodePublishVolume',
    inlineVolumeCall('cli-vol', join(cluster.dir, 'target'), {
      ...podInfo({ name: 'p', namespace: 'sandbox' }),
      'csi.cert-manager.io/issuer-name': 'ca',
    }),
  );
  t.pass('a volume was issued through the two commands');
  // Metrics and health (issue 14): the node in Kubernetes mode and the controller.
  for (const port of [nodeHealth, controllerHealth]) {
    t.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200, `ready on ${port}`);
  }
  const nodeText = await (await fetch(`http://127.0.0.1:${nodeMetrics}/metrics`)).text();
  const apiHost = new URL(cluster.server.url).host;
  t.match(nodeText, /^certmanager_csi_issue_requests_total\{node="[a-z0-9]+"\} 1$/m);
  t.match(nodeText, /^certmanager_csi_managed_volume_count\{node="[a-z0-9]+"\} 1$/m);
  t.match(
    nodeText,
    new RegExp(
      `^rest_client_requests_total\\{code="201",host="${apiHost}",method="POST"\\} [1-9]`,
      'm',
    ),
    'the request create, counted by the node client',
  );
  t.notMatch(nodeText, /^certmanager_certificate_ready_status/m, 'no controllers in the node');
  const controllerText = await (
    await fetch(`http://127.0.0.1:${controllerMetrics}/metrics`)
  ).text();
  t.match(
    controllerText,
    /^certmanager_issuer_ready_status\{name="ca",namespace="sandbox",condition="True"\} 1$/m,
  );
  t.match(controllerText, /^certmanager_controller_sync_call_count\{controller="[a-z-]+"\} [1-9]/m);
  t.notMatch(controllerText, /^certmanager_csi_/m, 'no node families in the controller');
  // --reload-signals: the node serves reload-signal (refused without it, see reload-refusal).
  await client.nodeCall(
    'NodePublishVolume',
    inlineVolumeCall('cli-vol-signalled', join(cluster.dir, 'target-signalled'), {
      ...podInfo({ name: 'p', namespace: 'sandbox' }),
      'csi.cert-manager.io/issuer-name': 'ca',
      'csi.cert-manager.io/reload-signal': 'HUP',
    }),
  );
  t.pass('a volume asking for a reload signal is published by a node with --reload-signals');
  stopNode();
  t.equal(await node, 0, 'node exits 0 when told to stop');
  stopController();
  t.equal(await controller, 0, 'controller exits 0 when told to stop');
  const lease = await cluster.server.store.get<Lease>(LeaseKind, 'cert-csi-controller', 'cert-csi');
  t.equal(lease.spec.holderIdentity, '', 'the lease was given up on the way out');
});

t.test('controller --help documents its flags', async (t) => {
  const help = await runCli(['controller', '--help']);
  t.equal(help.code, 0);
  for (const flag of [
    '--kubeconfig',
    '--kube-api-timeout',
    '--leader-election-namespace',
    '--leader-election-lease-duration',
    '--disable-approval',
    '--cluster-resource-namespace',
  ]) {
    t.match(help.stdout, flag);
  }
  const top = await runCli(['--help']);
  t.match(top.stdout, /controller +run the controller stack \(issuers, Certificates\)/);
});

t.test(
  'kubeconfig: in a pod the service account is used; no cluster at all is an error',
  async (t) => {
    const saved = { ...process.env };
    t.teardown(() => {
      for (const name of ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'KUBECONFIG']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });
    process.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
    process.env.KUBERNETES_SERVICE_PORT = '443';
    t.equal(loadKubeConfig({}).getCurrentCluster()?.server, 'https://10.96.0.1:443', 'in-cluster');
    delete process.env.KUBERNETES_SERVICE_HOST;
    const cluster = await startCluster(t);
    const empty = join(cluster.dir, 'empty-kubeconfig');
    await writeFile(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    t.throws(() => loadKubeConfig({ kubeconfig: empty }), /no Kubernetes cluster configured/);
  },
);

t.test('controller: a leader that cannot renew its lease exits 1', async (t) => {
  const cluster = await startCluster(t);
  const exit = runController(
    [
      '--kubeconfig',
      await cluster.kubeconfigFile(CONTROLLER_TOKEN),
      '--log-level',
      'silent',
      '--identity',
      'doomed',
      '--leader-election-lease-duration',
      '1s',
      '--leader-election-renew-deadline',
      '600ms',
      '--leader-election-retry-period',
      '100ms',
    ],
    () => new Promise(() => {}),
  );
  // Until the controller has written it, the Lease does not exist: keep waiting.
  await until(
    async () => {
      const lease = await cluster.server.store
        .get<Lease>(LeaseKind, 'cert-csi-controller', 'cert-csi')
        .catch(() => undefined);
      return lease?.spec.holderIdentity === 'doomed' ? true : undefined;
    },
    { timeoutMs: 10_000 },
  );
  cluster.server.failRequests({ status: 500, forMs: 5_000, match: (r) => r.resource === 'leases' });
  const started = Date.now();
  t.equal(await exit, 1, 'exit status 1 so the Deployment restarts it');
  t.ok(Date.now() - started < 2_000, 'soon after the renew deadline');
});
