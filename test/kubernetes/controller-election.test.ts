import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { type Lease, LeaseKind } from '../../src/api/lease.js';
import { serviceAccountUser } from '../fake-api-server/fake-api-server.js';
import { type NodeProcess, startCommand } from '../support/cli-process.js';
import {
  caIssuerAttributes,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { recordingLogger } from '../support/recording-logger.js';

const LEASE_MS = 3_000;

t.test(
  'two controllers: only the lease holder signs; the other takes over when it is killed',
  async (t) => {
    const cluster = await startCluster(t);
    await cluster.seedIssuer();
    const { server } = cluster;
    const controllers = new Map<string, NodeProcess>();
    await Promise.all(
      ['a', 'b'].map(async (name) => {
        server.addToken(`controller-${name}`, {
          ...serviceAccountUser('cert-csi', 'cert-csi-controller'),
          client: name,
        });
        const started = await startCommand(
          [
            'controller',
            '--kubeconfig',
            await cluster.kubeconfigFile(`controller-${name}`),
            '--identity',
            name,
            '--leader-election-namespace',
            'cert-csi',
            '--cluster-resource-namespace',
            'cert-csi',
            '--leader-election-lease-duration',
            `${LEASE_MS}ms`,
            '--leader-election-renew-deadline',
            '2s',
            '--leader-election-retry-period',
            '500ms',
          ],
          'cert-csi controller started',
        );
        controllers.set(name, started);
        t.teardown(() => started.stop());
      }),
    );
    const lease = () => server.store.get<Lease>(LeaseKind, 'cert-csi-controller', 'cert-csi');
    const holder = await until(
      async () => {
        const current = await lease().catch(() => undefined);
        return current?.spec.holderIdentity || undefined;
      },
      { timeoutMs: 30_000 },
    );
    const other = holder === 'a' ? 'b' : 'a';

    const node = await startClusterPlugin(t, cluster);
    const first = await node.publish('vol-1', caIssuerAttributes);
    t.ok(
      new X509Certificate(await readFile(join(first.target, 'tls.crt'))),
      'signed while one leads',
    );
    const writers = (client: string) =>
      server.requests.filter(
        (r) =>
          r.client === client &&
          r.resource !== 'leases' &&
          !['get', 'list', 'watch'].includes(r.verb),
      );
    t.ok(writers(holder).length > 0, `the holder ${holder} approved and signed`);
    t.same(writers(other), [], `the candidate ${other} wrote nothing but lease reads`);
    t.equal(
      server.requests.filter((r) => r.client === other && r.resource === 'certificaterequests')
        .length,
      0,
      'the candidate does not even watch requests',
    );

    // kill -9: no lease release, the candidate must wait for the lease to run out.
    const lastRenew = Date.parse((await lease()).spec.renewTime ?? '');
    const killedAt = Date.now();
    controllers.get(holder)?.child.kill('SIGKILL');
    const takenAt = await until(
      async () => {
        const current = await lease();
        return current.spec.holderIdentity === other ? Date.now() : undefined;
      },
      { timeoutMs: LEASE_MS * 3 },
    );
    const sinceKill = takenAt - killedAt;
    const sinceRenew = takenAt - lastRenew;
    t.ok(
      sinceRenew >= LEASE_MS,
      `no takeover before the lease ran out (${sinceRenew} ms after its last renewal)`,
    );
    // The lease runs out LEASE_MS after its last renewal, which was before the kill; the
    // slack is the candidate's wake-up and one API round trip.
    t.ok(
      sinceKill <= LEASE_MS + 250,
      `${other} took over ${sinceKill} ms after the kill (lease ${LEASE_MS} ms)`,
    );
    t.equal((await lease()).spec.leaseTransitions, 1, 'one transition recorded');

    const second = await node.publish('vol-2', caIssuerAttributes);
    t.ok(
      new X509Certificate(await readFile(join(second.target, 'tls.crt'))),
      'the new leader signs',
    );
    t.ok(writers(other).length > 0, `${other} wrote once it led`);
  },
);

// Found by the controller crash trials (test/kubernetes/controller-crash-storm.ts): SIGTERM to a
// controller that had just started made it exit 1, "informer for CertificateRequest stopped
// before its cache synced"; with leader election it logged "leader work failed".
t.test('a controller stopped while its caches sync stops cleanly, leading or not', async (t) => {
  const cluster = await startCluster(t);
  // Every answer comes late: the stop lands while the informers still wait for their lists.
  cluster.server.setLatency(300);
  const lists = () => cluster.server.requests.filter((r) => r.verb === 'list').length;
  for (const leaderElection of [
    {
      namespace: 'cert-csi',
      name: 'cert-csi-controller',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    },
    undefined,
  ]) {
    const how = leaderElection ? 'leader' : 'no election';
    const logger = recordingLogger();
    const listsBefore = lists();
    const controller = startClusterController(t, cluster, {
      logger,
      ...(leaderElection ? { leaderElection } : {}),
    });
    await until(
      () => logger.records.some(([, , msg]) => msg === 'became leader') || !leaderElection,
      {
        what: 'the lease',
        timeoutMs: 10_000,
      },
    );
    await until(() => lists() > listsBefore, { what: 'the informers listing', timeoutMs: 10_000 });
    await controller.stop();
    t.equal(await controller.done, 'stopped', `done says stopped (${how})`);
    t.same(
      logger.records.filter(([level]) => level === 'error' || level === 'warn'),
      [],
      `nothing logged as a failure (${how})`,
    );
    t.notOk(
      logger.records.some(([, , msg]) => msg === 'controllers started'),
      `stopped before the controllers started (${how})`,
    );
  }
});
