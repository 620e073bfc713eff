import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { hashIdentifier, VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import { isObserved } from '../../src/base/telemetry.js';
import type { ObservedPlugin } from '../../src/cli/node/node-observability.js';
import { startNodeObservability } from '../../src/cli/node/node-observability.js';
import { readMetadata } from '../../src/volume/metadata.js';
import { until } from '../support/eventually.js';
import { embeddedCA, type PluginHarness, startPlugin } from '../support/plugin-harness.js';
import { type Family, labelSets, sampleValue, scrape } from '../support/prometheus-text.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

const NODE_ID = 'metrics-node';
const node = hashIdentifier(NODE_ID);
const local = { host: '127.0.0.1', port: 0 };
const REQUEST_LABELS = 'issuer_group,issuer_kind,issuer_name,name,namespace';

// The node plugin's families with their type and exact label set (csi-lib's, without `volume`).
const NODE_FAMILIES: Record<string, [type: string, labels: string[]]> = {
  certmanager_csi_issue_requests_total: ['counter', ['node']],
  certmanager_csi_issue_errors_total: ['counter', ['node']],
  certmanager_csi_issue_failures_total: ['counter', ['node,reason']],
  certmanager_csi_issue_duration_seconds: ['histogram', ['le,node,outcome', 'node,outcome']],
  certmanager_csi_certificate_request_ready_status: [
    'gauge',
    ['condition,issuer_group,issuer_kind,issuer_name,name,namespace'],
  ],
  certmanager_csi_certificate_request_expiration_timestamp_seconds: ['gauge', [REQUEST_LABELS]],
  certmanager_csi_certificate_request_renewal_timestamp_seconds: ['gauge', [REQUEST_LABELS]],
  certmanager_csi_managed_volume_count: ['gauge', ['node']],
  certmanager_csi_managed_certificate_request_count: ['gauge', ['node']],
};

t.test('the embedded node serves csi-lib and cert-manager families and its health', async (t) => {
  const logger = recordingLogger();
  let harness: PluginHarness | undefined;
  const observability = await startNodeObservability({
    metrics: local,
    health: local,
    nodeId: NODE_ID,
    controllers: true,
    apiClient: false,
    logger,
    plugin: (): ObservedPlugin | undefined => harness,
  });
  t.teardown(() => observability.close());
  const metricsPort = observability.metrics?.address.port as number;
  const healthPort = observability.health?.address.port as number;
  t.not(metricsPort, 0, 'port 0 bound a real port');
  t.not(metricsPort, healthPort, 'two endpoints, two ports');
  const served = logger.records
    .filter(([, , msg]) => msg === 'serving HTTP')
    .map(([, obj]) => (obj as { address: string }).address);
  t.same(served.sort(), [`127.0.0.1:${healthPort}`, `127.0.0.1:${metricsPort}`].sort());
  const health = `http://127.0.0.1:${healthPort}`;
  const metrics = `http://127.0.0.1:${metricsPort}/metrics`;

  t.equal((await fetch(`${health}/livez`)).status, 200, 'live while starting');
  const starting = await fetch(`${health}/readyz`);
  t.equal(starting.status, 503, 'not ready before the plugin started');
  t.match(await starting.text(), /\[-\]volume-manager not ready/);
  const early = await scrape(metrics);
  t.equal(early.get('certmanager_csi_certificate_request_ready_status')?.samples.length, 0);
  t.equal(early.get('certmanager_clusterissuer_ready_status')?.samples.length, 0);
  t.equal(sampleValue(early.get('certmanager_csi_managed_volume_count'), { node }), 0);

  harness = await startPlugin(t, {
    nodeId: NODE_ID,
    controllers: {
      config: {
        // Deny the one volume meant to fail; approve the others.
        approval: (request) =>
          request.metadata.labels?.[VOLUME_ID_HASH_LABEL] === hashIdentifier('csi-denied')
            ? { decision: 'deny', reason: 'policy', message: 'not this one' }
            : { decision: 'approve', reason: 'cert-manager.io', message: 'approved' },
      },
    },
  });
  const p = harness;
  const ready = await fetch(`${health}/readyz`);
  t.equal(ready.status, 200, 'ready once informers synced and the volume manager started');
  t.match(await ready.text(), /\[\+\]informers-synced ok\n\[\+\]volume-manager ok\nok/);
  t.equal((await fetch(`${health}/metrics`)).status, 404, 'metrics are not on the health port');
  t.equal((await fetch(metrics, { method: 'POST' })).status, 405);

  const { target } = await p.publish('csi-metrics-1', embeddedCA());
  const leaf = new X509Certificate(await readFile(join(target, 'tls.crt')));
  const key = await readFile(join(target, 'tls.key'), 'utf8');
  const metadata = await readMetadata(p.dataRoot, 'csi-metrics-1');
  const [request] = await p.requests();
  t.ok(request, 'the issued request is kept');
  const requestName = request?.metadata.name as string;

  let families = await until(
    async () => {
      const scraped = await scrape(metrics);
      const expiry = sampleValue(
        scraped.get('certmanager_csi_certificate_request_expiration_timestamp_seconds'),
        { name: requestName },
      );
      return expiry !== undefined && expiry > 0 && scraped;
    },
    { what: 'the issued request in the node cache' },
  );
  for (const [name, [type, labels]] of Object.entries(NODE_FAMILIES)) {
    const family = families.get(name);
    t.equal(family?.type, type, `${name} is a ${type}`);
    t.same(labelSets(family).sort(), labels.sort(), `${name} labels`);
    t.ok(family?.help, `${name} has help`);
  }
  const get = (name: string): Family | undefined => families.get(name);
  t.equal(sampleValue(get('certmanager_csi_issue_requests_total'), { node }), 1);
  t.equal(sampleValue(get('certmanager_csi_issue_errors_total'), { node }), 0);
  const ready1 = get('certmanager_csi_certificate_request_ready_status');
  const crLabels = {
    name: requestName,
    namespace: 'sandbox',
    issuer_name: 'embedded-ca',
    issuer_kind: 'ClusterIssuer',
    issuer_group: 'cert-manager.io',
  };
  t.equal(sampleValue(ready1, { ...crLabels, condition: 'True' }), 1, 'Ready True');
  t.equal(sampleValue(ready1, { ...crLabels, condition: 'False' }), 0);
  t.equal(sampleValue(ready1, { ...crLabels, condition: 'Unknown' }), 0);
  t.equal(
    sampleValue(get('certmanager_csi_certificate_request_expiration_timestamp_seconds'), crLabels),
    Math.floor(Date.parse(leaf.validTo) / 1000),
    "expiration is the leaf's notAfter",
  );
  t.equal(
    sampleValue(get('certmanager_csi_certificate_request_renewal_timestamp_seconds'), crLabels),
    Math.floor(Date.parse(metadata.nextIssuanceTime as string) / 1000),
    "renewal is the volume's nextIssuanceTime",
  );
  t.equal(sampleValue(get('certmanager_csi_managed_volume_count'), { node }), 1);
  t.equal(sampleValue(get('certmanager_csi_managed_certificate_request_count'), { node }), 1);
  t.equal(
    sampleValue(
      get('certmanager_csi_issue_duration_seconds'),
      { node, outcome: 'success' },
      'certmanager_csi_issue_duration_seconds_count',
    ),
    1,
  );

  // cert-manager's families, from the controllers running in the process.
  t.equal(get('certmanager_certificate_ready_status')?.type, 'gauge');
  t.equal(
    sampleValue(get('certmanager_clusterissuer_ready_status'), {
      name: 'embedded-ca',
      condition: 'True',
    }),
    1,
  );
  t.same(labelSets(get('certmanager_clusterissuer_ready_status')), ['condition,name']);
  t.ok(
    (sampleValue(get('certmanager_controller_sync_call_count'), {
      controller: 'certificaterequests-issuer-ca',
    }) ?? 0) >= 1,
    'the CA signer synced',
  );
  t.notOk(families.has('rest_client_requests_total'), 'no API client in embedded mode');

  await t.rejects(p.publish('csi-denied', embeddedCA()), /denied/);
  families = await scrape(metrics);
  t.equal(sampleValue(get('certmanager_csi_issue_requests_total'), { node }), 2);
  t.equal(sampleValue(get('certmanager_csi_issue_errors_total'), { node }), 1);
  t.equal(sampleValue(get('certmanager_csi_issue_failures_total'), { node, reason: 'denied' }), 1);
  t.equal(sampleValue(get('certmanager_csi_issue_failures_total'), { node, reason: 'timeout' }), 0);
  t.equal(
    sampleValue(
      get('certmanager_csi_issue_duration_seconds'),
      { node, outcome: 'failure' },
      'certmanager_csi_issue_duration_seconds_count',
    ),
    1,
  );
  t.equal(
    sampleValue(get('certmanager_csi_managed_volume_count'), { node }),
    1,
    'denied: not managed',
  );

  // No secret of the volume anywhere in the exposition.
  const text = await (await fetch(metrics)).text();
  t.notMatch(text, /PRIVATE KEY|BEGIN/);
  const keyBody = key.split('\n')[1] as string;
  t.notOk(text.includes(keyBody), 'no line of the private key');

  await p.unpublish('csi-metrics-1', target);
  families = await until(
    async () => {
      const scraped = await scrape(metrics);
      const series = scraped.get('certmanager_csi_certificate_request_ready_status')?.samples;
      return !series?.some((sample) => sample.labels.name === requestName) && scraped;
    },
    { what: "the unpublished volume's request gone from the cache" },
  );
  t.equal(sampleValue(get('certmanager_csi_managed_volume_count'), { node }), 0, 'unmanaged');
  t.equal(
    sampleValue(get('certmanager_csi_managed_certificate_request_count'), { node }),
    (await p.requests()).length,
    'the denied request is all that is left',
  );
});

t.test('--metrics-bind-address=0: no endpoint, nothing listens to the facts', async (t) => {
  const observability = await startNodeObservability({
    metrics: undefined,
    health: undefined,
    nodeId: NODE_ID,
    controllers: true,
    apiClient: true,
    logger: recordingLogger(),
    plugin: () => undefined,
  });
  t.teardown(() => observability.close());
  t.equal(observability.metrics, undefined);
  t.equal(observability.health, undefined);
  t.notOk(isObserved('issuance'), 'the volume manager publishes into the void');
  t.notOk(isObserved('apiRequest'));
});

t.test('after a restart the volumes taken back are managed again, from memory', async (t) => {
  const dir = await tempDir(t);
  const stateDir = join(dir, 'state');
  const first = await startPlugin(t, { nodeId: 'restart-node', dir, stateDir });
  await first.publish('csi-restart-1', embeddedCA());
  const metadata = await readMetadata(first.dataRoot, 'csi-restart-1');
  await first.stop();

  // A fresh process: its metrics know only what the restarted plugin tells them.
  let second: PluginHarness | undefined;
  const observability = await startNodeObservability({
    metrics: local,
    health: undefined,
    nodeId: 'restart-node',
    controllers: false,
    apiClient: false,
    logger: recordingLogger(),
    plugin: () => second,
  });
  t.teardown(() => observability.close());
  second = await startPlugin(t, { nodeId: 'restart-node', dir, stateDir });
  const families = await scrape(`http://127.0.0.1:${observability.metrics?.address.port}/metrics`);
  const restartNode = hashIdentifier('restart-node');
  t.equal(
    sampleValue(families.get('certmanager_csi_managed_volume_count'), { node: restartNode }),
    1,
    'rediscovery told the metrics',
  );
  t.equal(
    sampleValue(families.get('certmanager_csi_issue_requests_total'), { node: restartNode }),
    0,
    'nothing issued: taken back as it was',
  );
  t.equal(
    families.get('certmanager_csi_certificate_request_renewal_timestamp_seconds')?.samples[0]
      ?.value,
    Math.floor(Date.parse(metadata.nextIssuanceTime as string) / 1000),
  );
  t.notOk(families.has('certmanager_certificate_ready_status'), 'no controller families asked');
});
