import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { ClusterIssuerKind } from '../../src/api/issuer.js';
import type { Controller } from '../../src/cli/controller/controller.js';
import { registerClientMetrics } from '../../src/observability/client-metrics.js';
import {
  informerMetricsSources,
  registerControllerMetrics,
} from '../../src/observability/controller-metrics.js';
import { startObservability } from '../../src/observability/observability.js';
import { clusterIssuer, withSpec } from '../support/builders/index.js';
import { certificateObject } from '../support/certificate-stack.js';
import { POD_NAMESPACE, startCluster, startClusterController } from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { labelSets, sampleValue, scrape } from '../support/prometheus-text.js';
import { recordingLogger } from '../support/recording-logger.js';

const CERTIFICATE_LABELS = 'issuer_group,issuer_kind,issuer_name,name,namespace';
const CONTROLLER_FAMILIES: Record<string, [type: string, labels: string[]]> = {
  certmanager_certificate_ready_status: ['gauge', [`condition,${CERTIFICATE_LABELS}`]],
  certmanager_certificate_expiration_timestamp_seconds: ['gauge', [CERTIFICATE_LABELS]],
  certmanager_certificate_not_after_timestamp_seconds: ['gauge', [CERTIFICATE_LABELS]],
  certmanager_certificate_not_before_timestamp_seconds: ['gauge', [CERTIFICATE_LABELS]],
  certmanager_certificate_renewal_timestamp_seconds: ['gauge', [CERTIFICATE_LABELS]],
  certmanager_issuer_ready_status: ['gauge', ['condition,name,namespace']],
  certmanager_clusterissuer_ready_status: ['gauge', ['condition,name']],
  certmanager_controller_sync_call_count: ['counter', ['controller']],
  certmanager_controller_sync_error_count: ['counter', ['controller']],
  rest_client_requests_total: ['counter', ['code,host,method']],
  rest_client_request_duration_seconds: ['histogram', ['host,le,verb', 'host,verb']],
};

t.test('the controller serves cert-manager and client families from its caches', async (t) => {
  const cluster = await startCluster(t);
  await cluster.seedIssuer();
  await cluster.server.store.create(
    ClusterIssuerKind,
    clusterIssuer('self', withSpec({ selfSigned: {} })),
  );
  // Raw issuerRef values: kind and group left empty, as a user may write them.
  await cluster.server.store.create(
    CertificateKind,
    certificateObject(POD_NAMESPACE, 'web', {
      issuerRef: { name: 'ca' },
      dnsNames: ['web.example.com'],
    }),
  );
  let controller: Controller | undefined;
  const observability = await startObservability({
    metrics: { host: '127.0.0.1', port: 0 },
    health: { host: '127.0.0.1', port: 0 },
    collectors: [
      (registry, onError) =>
        registerControllerMetrics(
          registry,
          informerMetricsSources(() => controller?.informers()),
          onError,
        ),
      registerClientMetrics,
    ],
    checks: [{ name: 'controllers', ready: () => controller?.ready() ?? false }],
    logger: recordingLogger(),
  });
  t.teardown(() => observability.close());
  const metrics = `http://127.0.0.1:${observability.metrics?.address.port}/metrics`;
  const readyz = `http://127.0.0.1:${observability.health?.address.port}/readyz`;
  t.equal((await fetch(readyz)).status, 503, 'not ready before the controller runs');
  const early = await scrape(metrics);
  for (const name of [
    'certmanager_certificate_ready_status',
    'certmanager_issuer_ready_status',
    'certmanager_clusterissuer_ready_status',
  ]) {
    t.equal(early.get(name)?.samples.length, 0, `${name}: no caches, no series`);
  }

  // One status write conflicts: a sync error the runtime retries.
  cluster.server.conflictOnNextStatusUpdates(1);
  const controllerLog = recordingLogger();
  controller = startClusterController(t, cluster, { logger: controllerLog });
  await until(async () => (await fetch(readyz)).status === 200, { what: 'the caches synced' });

  const families = await until(
    async () => {
      const scraped = await scrape(metrics);
      const ready = sampleValue(scraped.get('certmanager_certificate_ready_status'), {
        name: 'web',
        condition: 'True',
      });
      return ready === 1 && scraped;
    },
    { what: 'the Certificate ready in the metrics' },
  );
  for (const [name, [type, labels]] of Object.entries(CONTROLLER_FAMILIES)) {
    const family = families.get(name);
    t.equal(family?.type, type, `${name} is a ${type}`);
    t.same(labelSets(family).sort(), labels.sort(), `${name} labels`);
  }
  const live = await cluster.server.store.get<Certificate>(CertificateKind, 'web', POD_NAMESPACE);
  const labels = {
    name: 'web',
    namespace: POD_NAMESPACE,
    issuer_name: 'ca',
    issuer_kind: '',
    issuer_group: '',
  };
  const seconds = (timestamp: string | undefined) => Date.parse(timestamp as string) / 1000;
  const value = (name: string, extra: Record<string, string> = {}) =>
    sampleValue(families.get(name), { ...labels, ...extra });
  t.equal(value('certmanager_certificate_ready_status', { condition: 'False' }), 0);
  t.equal(value('certmanager_certificate_ready_status', { condition: 'Unknown' }), 0);
  t.equal(
    value('certmanager_certificate_expiration_timestamp_seconds'),
    seconds(live.status?.notAfter),
  );
  t.equal(
    value('certmanager_certificate_not_after_timestamp_seconds'),
    seconds(live.status?.notAfter),
  );
  t.equal(
    value('certmanager_certificate_not_before_timestamp_seconds'),
    seconds(live.status?.notBefore),
  );
  t.equal(
    value('certmanager_certificate_renewal_timestamp_seconds'),
    seconds(live.status?.renewalTime),
  );
  t.equal(
    sampleValue(families.get('certmanager_issuer_ready_status'), {
      name: 'ca',
      namespace: POD_NAMESPACE,
      condition: 'True',
    }),
    1,
  );
  t.equal(
    sampleValue(families.get('certmanager_clusterissuer_ready_status'), {
      name: 'self',
      condition: 'True',
    }),
    1,
  );
  const total = (name: string) =>
    (families.get(name)?.samples ?? []).reduce((sum, sample) => sum + sample.value, 0);
  t.ok(
    (sampleValue(families.get('certmanager_controller_sync_call_count'), {
      controller: 'certificates-issuing',
    }) ?? 0) >= 1,
    'the issuing controller synced',
  );
  t.ok(total('certmanager_controller_sync_error_count') >= 1, 'the conflict is a sync error');
  // Every failed sync is logged once by the runtime: the counter and the log agree.
  await until(
    async () => {
      const failedSyncs = controllerLog.records.filter(
        ([, , msg]) => msg === 'sync failed, will retry',
      ).length;
      const counted = (await scrape(metrics))
        .get('certmanager_controller_sync_error_count')
        ?.samples.reduce((sum, sample) => sum + sample.value, 0);
      return counted === failedSyncs;
    },
    { what: 'the sync error count to match the failed syncs logged' },
  );

  const host = new URL(cluster.server.url).host;
  t.ok(
    (sampleValue(families.get('rest_client_requests_total'), {
      code: '200',
      host,
      method: 'GET',
    }) ?? 0) >= 1,
    'lists, gets and watches counted',
  );
  t.ok(
    (sampleValue(families.get('rest_client_requests_total'), {
      code: '409',
      host,
      method: 'PUT',
    }) ?? 0) >= 1,
    'the conflicting status write counted with its code',
  );
  t.equal(
    sampleValue(
      families.get('rest_client_request_duration_seconds'),
      { verb: 'GET', host },
      'rest_client_request_duration_seconds_count',
    ),
    sumOf(families.get('rest_client_requests_total')?.samples, { method: 'GET' }),
    'one latency per GET request',
  );
  const text = await (await fetch(metrics)).text();
  t.notMatch(text, /PRIVATE KEY|BEGIN|controller-service-account-token/, 'no key, no token');
});

function sumOf(
  samples: ReadonlyArray<{ labels: Record<string, string>; value: number }> | undefined,
  labels: Record<string, string>,
): number {
  return (samples ?? [])
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

t.test('readiness: a leader once its caches synced, a standby at once', async (t) => {
  const cluster = await startCluster(t);
  const leaderElection = {
    namespace: 'cert-csi',
    name: 'cert-csi-controller',
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  };
  // No list succeeds until the test says so: the leader's caches cannot sync.
  const allowLists = cluster.server.failRequests({ match: (r) => r.verb === 'list' });
  const leaderLog = recordingLogger();
  const leader = startClusterController(t, cluster, {
    identity: 'controller-a',
    logger: leaderLog,
    leaderElection,
  });
  await until(() => leaderLog.records.some(([, , msg]) => msg === 'became leader'), {
    what: 'the lease',
  });
  await until(() => cluster.server.requests.some((r) => r.verb === 'list'), {
    what: 'the leader listing',
  });
  t.notOk(leader.ready(), 'leading with caches not synced: not ready');
  t.equal(leader.informers(), undefined, 'no caches to scrape yet');

  const standbyLog = recordingLogger();
  const standby = startClusterController(t, cluster, {
    identity: 'controller-b',
    logger: standbyLog,
    leaderElection,
  });
  t.ok(standby.ready(), 'a standby is ready');
  t.equal(standby.informers(), undefined, 'and has no caches');

  allowLists();
  await until(() => leader.ready(), { what: 'the leader ready' });
  t.ok(leader.informers(), 'the leader scrapes its caches');
  t.ok(standby.ready());
  t.notOk(standbyLog.records.some(([, , msg]) => msg === 'became leader'));
});
