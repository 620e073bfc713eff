import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import t, { type Test } from 'tap';
import type { Certificate } from '../../src/api/certificate.js';
import { CertificateKind } from '../../src/api/certificate.js';
import { encodeBytes } from '../../src/api/certificate-request.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import { isObserved, publishFact, subscribeFacts } from '../../src/base/telemetry.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { formatAddress, parseBindAddress } from '../../src/observability/bind-address.js';
import { ComponentMetrics, escapeLabelValue } from '../../src/observability/component-metrics.js';
import { registerControllerMetrics } from '../../src/observability/controller-metrics.js';
import { startHttpEndpoint } from '../../src/observability/http-endpoint.js';
import { ManagedVolumes } from '../../src/observability/managed-volumes.js';
import { registerNodeMetrics } from '../../src/observability/node-metrics.js';
import { startObservability } from '../../src/observability/observability.js';
import { unixSeconds } from '../../src/observability/ready-condition.js';
import { requestExpirySeconds } from '../../src/observability/request-expiry.js';
import {
  RequestObservation,
  resourceOfPath,
} from '../../src/store/kubernetes/request-telemetry.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { failureReason } from '../../src/volume-manager/telemetry/volume-telemetry.js';
import {
  certificateRequest,
  withIssuerRef,
  withLabels,
  withNamespace,
  withStatus,
} from '../support/builders/index.js';
import { freePort } from '../support/free-port.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { parseExposition, sampleValue } from '../support/prometheus-text.js';
import { recordingLogger } from '../support/recording-logger.js';

const local = { host: '127.0.0.1', port: 0 };

t.test('bind addresses: controller-runtime syntax, 0 disables, bad ones named', async (t) => {
  t.equal(parseBindAddress('--metrics-bind-address', '0'), undefined);
  t.same(parseBindAddress('--metrics-bind-address', ':9402'), { host: '', port: 9402 });
  t.same(parseBindAddress('--metrics-bind-address', '127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  t.same(parseBindAddress('--metrics-bind-address', '[::1]:9402'), { host: '::1', port: 9402 });
  for (const bad of ['9402', '', 'host:99999', 'a:b', '::1:80', ':']) {
    t.throws(
      () => parseBindAddress('--health-probe-bind-address', bad),
      {
        message: `--health-probe-bind-address: expected host:port (e.g. ":9402") or 0 to disable, got "${bad}"`,
      },
      bad,
    );
  }
  t.equal(formatAddress('::1', 80), '[::1]:80');
  t.equal(formatAddress('10.0.0.1', 80), '10.0.0.1:80');
});

t.test(
  'the HTTP endpoint: GET and HEAD of its paths, 404, 405, a failing route is 500',
  async (t) => {
    const endpoint = await startHttpEndpoint(
      'test',
      local,
      new Map([
        ['/ok', () => ({ status: 200, contentType: 'text/plain', body: 'fine\n' })],
        [
          '/broken',
          () => {
            throw new Error('cache gone');
          },
        ],
      ]),
      recordingLogger(),
    );
    t.teardown(() => endpoint.close());
    const base = `http://127.0.0.1:${endpoint.address.port}`;
    t.equal(await (await fetch(`${base}/ok?x=1`)).text(), 'fine\n', 'a query is ignored');
    const head = await fetch(`${base}/ok`, { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(await head.text(), '', 'HEAD has no body');
    const missing = await fetch(`${base}/nope`);
    t.equal(missing.status, 404);
    t.equal(await missing.text(), 'no such path: /nope\n');
    const post = await fetch(`${base}/ok`, { method: 'POST' });
    t.equal(post.status, 405);
    t.equal(post.headers.get('allow'), 'GET, HEAD');
    const broken = await fetch(`${base}/broken`);
    t.equal(broken.status, 500);
    t.equal(await broken.text(), 'cache gone\n');
    // A target no URL parser takes: refused, and the process (and the endpoint) live on.
    const raw = await rawRequest(endpoint.address.port, 'GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n');
    t.match(raw, /^HTTP\/1\.1 400 /, 'a malformed request target is 400');
    t.equal((await fetch(`${base}/ok`)).status, 200, 'still serving after it');
  },
);

/** Sends raw bytes to a local port and resolves with what comes back before the server closes or 5 s pass. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    const deadline = setTimeout(() => socket.destroy(), 5000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(deadline);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
  });
}

t.test('one port for metrics and health when both flags name it', async (t) => {
  const port = await freePort();
  const observability = await startObservability({
    metrics: { host: '127.0.0.1', port },
    health: { host: '127.0.0.1', port },
    collectors: [],
    checks: [{ name: 'always', ready: () => true }],
    logger: recordingLogger(),
  });
  t.teardown(() => observability.close());
  t.equal(observability.metrics, observability.health, 'one server');
  for (const path of ['/metrics', '/livez', '/readyz']) {
    t.equal((await fetch(`http://127.0.0.1:${port}${path}`)).status, 200, path);
  }
});

t.test('a health port in use fails the start and undoes it', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as AddressInfo).port;
  await t.rejects(
    startObservability({
      metrics: local,
      health: { host: '127.0.0.1', port },
      collectors: [
        (metrics, onError) =>
          registerNodeMetrics(metrics, { nodeId: 'n', requests: () => [] }, onError),
      ],
      checks: [],
      logger: recordingLogger(),
    }),
    { code: 'EADDRINUSE' },
  );
  t.notOk(isObserved('issuance'), 'the metrics stopped listening');
});

t.test('a listener that throws is reported, not thrown at the publisher', async (t) => {
  const errors: unknown[] = [];
  const stop = subscribeFacts(
    'sync',
    () => {
      throw new Error('listener bug');
    },
    (err) => errors.push(err),
  );
  publishFact('sync', { controller: 'x', error: false });
  stop();
  t.match(errors, [{ message: 'listener bug' }]);
  publishFact('sync', { controller: 'x', error: false });
  t.equal(errors.length, 1, 'unsubscribed');
});

t.test('label values are escaped; timestamps without a value are 0', async (t) => {
  t.equal(escapeLabelValue('plain'), 'plain');
  t.equal(escapeLabelValue('a"b\\c\nd'), 'a\\"b\\\\c\\nd');
  t.equal(unixSeconds(undefined), 0);
  t.equal(unixSeconds('not a time'), 0);
  t.equal(unixSeconds('2027-01-01T00:00:00Z'), 1798761600);
});

t.test('API paths name their resource', async (t) => {
  t.equal(
    resourceOfPath('/apis/cert-manager.io/v1/namespaces/ns/certificaterequests/x'),
    'certificaterequests.cert-manager.io',
  );
  t.equal(
    resourceOfPath('/apis/cert-manager.io/v1/clusterissuers'),
    'clusterissuers.cert-manager.io',
  );
  t.equal(resourceOfPath('/api/v1/namespaces/ns/secrets'), 'secrets');
  t.equal(resourceOfPath('/api/v1/namespaces/ns'), 'namespaces');
  t.equal(resourceOfPath('/apis/cert-manager.io/v1'), 'discovery');
  t.equal(resourceOfPath('/apis'), 'discovery');
});

t.test('a request never sent publishes nothing', async (t) => {
  const seen: unknown[] = [];
  const stop = subscribeFacts('apiRequest', (fact) => seen.push(fact), t.error);
  t.teardown(stop);
  const observation = RequestObservation.ifObserved();
  t.ok(observation, 'observed while someone listens');
  observation?.finish();
  t.same(seen, []);
});

t.test('an issuance failure reason: the IssuanceError reason, else other', async (t) => {
  t.equal(failureReason(new IssuanceError('denied', 'denied')), 'denied');
  t.equal(failureReason(new Error('disk full')), 'other');
});

t.test('SharedInformers.cached creates no informer', async (t) => {
  const store = await MemoryStore.open();
  const informers = new SharedInformers(store);
  t.same(informers.cached(CertificateKind), []);
  informers.start();
  t.ok(informers.hasSynced(), 'no informer was created to wait for');
  informers.stop();
});

t.test('an endpoint on every interface (":port")', async (t) => {
  const endpoint = await startHttpEndpoint(
    'any',
    { host: '', port: 0 },
    new Map([['/x', () => ({ status: 200, contentType: 'text/plain', body: 'x' })]]),
    recordingLogger(),
  );
  t.teardown(() => endpoint.close());
  t.equal((await fetch(`http://127.0.0.1:${endpoint.address.port}/x`)).status, 200);
});

t.test('managed volumes follow their node only', async (t) => {
  const volumes = new ManagedVolumes('a');
  const at = new Date('2027-01-01T00:00:00Z');
  volumes.observe({ change: 'managed', nodeId: 'b', volumeId: 'v0', nextIssuanceTime: at });
  volumes.observe({ change: 'managed', nodeId: 'a', volumeId: 'v1', nextIssuanceTime: at });
  volumes.observe({ change: 'managed', nodeId: 'a', volumeId: 'v2' });
  volumes.observe({ phase: 'started', nodeId: 'a', volumeId: 'v3' });
  volumes.observe({
    phase: 'failed',
    nodeId: 'a',
    volumeId: 'v3',
    durationSeconds: 1,
    reason: 'denied',
  });
  t.equal(volumes.count(), 1, 'only a volume with a renewal time counts');
  volumes.observe({
    phase: 'succeeded',
    nodeId: 'a',
    volumeId: 'v2',
    durationSeconds: 1,
    nextIssuanceTime: at,
  });
  t.equal(volumes.count(), 2, 'the pending one got its certificate');
  t.same(
    [...volumes.renewalByVolumeHash().keys()].sort(),
    [hashIdentifier('v1'), hashIdentifier('v2')].sort(),
  );
  volumes.observe({ change: 'unmanaged', nodeId: 'a', volumeId: 'v1' });
  t.equal(volumes.count(), 1);
});

t.test('node request families: unknown status, no certificate, an unparsable one', async (t) => {
  const { certificatePem } = await makeCA();
  const node = hashIdentifier('n');
  /** Sets the labels of a request for volume (named as the request) on the node of nodeHash. */
  const onNode = (volume: string, nodeHash = node) =>
    withLabels({ [NODE_ID_HASH_LABEL]: nodeHash, [VOLUME_ID_HASH_LABEL]: hashIdentifier(volume) });
  const inNs = [withNamespace('ns'), withIssuerRef({ name: 'ca' })];
  const garbage = certificateRequest(
    'garbage',
    ...inNs,
    onNode('garbage'),
    withStatus({ certificate: encodeBytes('not a certificate') }),
  );
  t.equal(requestExpirySeconds(garbage), undefined);
  t.equal(requestExpirySeconds(garbage), undefined, 'remembered');
  const requests = [
    certificateRequest('new', ...inNs, onNode('new')),
    garbage,
    certificateRequest(
      'issued',
      ...inNs,
      onNode('issued'),
      withStatus({
        certificate: encodeBytes(certificatePem),
        conditions: [{ type: 'Ready', status: 'False', reason: 'Pending' }],
      }),
    ),
    certificateRequest('other-node', ...inNs, onNode('other-node', hashIdentifier('m'))),
  ];
  const metrics = new ComponentMetrics();
  const stop = registerNodeMetrics(metrics, { nodeId: 'n', requests: () => requests }, (err) =>
    t.fail(String(err)),
  );
  t.teardown(stop);
  const families = parseExposition(await metrics.exposition());
  const ready = families.get('certmanager_csi_certificate_request_ready_status');
  t.equal(sampleValue(ready, { name: 'new', condition: 'Unknown' }), 1, 'no Ready: Unknown');
  t.equal(sampleValue(ready, { name: 'issued', condition: 'False' }), 1);
  t.equal(
    sampleValue(ready, { name: 'issued', issuer_kind: '', issuer_group: '' }),
    0,
    'raw issuerRef',
  );
  t.notOk(
    ready?.samples.some((s) => s.labels.name === 'other-node'),
    "another node's request",
  );
  const expiry = families.get('certmanager_csi_certificate_request_expiration_timestamp_seconds');
  t.equal(sampleValue(expiry, { name: 'new' }), 0, 'no certificate: 0');
  t.equal(sampleValue(expiry, { name: 'garbage' }), undefined, 'unparsable: no series');
  t.ok((sampleValue(expiry, { name: 'issued' }) ?? 0) > 0);
  const renewal = families.get('certmanager_csi_certificate_request_renewal_timestamp_seconds');
  t.equal(sampleValue(renewal, { name: 'issued' }), 0, 'no managed volume: 0');
  t.equal(
    sampleValue(families.get('certmanager_csi_managed_certificate_request_count'), { node }),
    3,
  );
  // Another plugin in the process (another node id): its issuances are not this node's.
  publishFact('issuance', { phase: 'started', nodeId: 'm', volumeId: 'v' });
  const after = parseExposition(await metrics.exposition());
  t.equal(sampleValue(after.get('certmanager_csi_issue_requests_total'), { node }), 0);
});

t.test('controller families of objects without status', async (t) => {
  const certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'c', namespace: 'ns' },
    spec: { secretName: 's', issuerRef: { name: 'x', kind: 'Issuer', group: 'cert-manager.io' } },
  } as Certificate;
  const metrics = new ComponentMetrics();
  const stop = registerControllerMetrics(
    metrics,
    {
      certificates: () => [certificate],
      issuers: () => [
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Issuer',
          metadata: { name: 'i', namespace: 'ns' },
          spec: {},
        },
      ],
      clusterIssuers: () => [],
    },
    (err) => t.fail(String(err)),
  );
  t.teardown(stop);
  const families = parseExposition(await metrics.exposition());
  t.equal(
    sampleValue(families.get('certmanager_certificate_ready_status'), { condition: 'Unknown' }),
    1,
  );
  t.equal(
    sampleValue(families.get('certmanager_certificate_not_before_timestamp_seconds'), {
      name: 'c',
      issuer_kind: 'Issuer',
    }),
    0,
  );
  t.equal(
    sampleValue(families.get('certmanager_issuer_ready_status'), {
      name: 'i',
      condition: 'Unknown',
    }),
    1,
  );
  publishFact('sync', { controller: 'certificates-trigger', error: true });
  const after = parseExposition(await metrics.exposition());
  for (const family of [
    'certmanager_controller_sync_call_count',
    'certmanager_controller_sync_error_count',
  ]) {
    t.equal(sampleValue(after.get(family), { controller: 'certificates-trigger' }), 1, family);
  }
});

/** Node metrics of node "n" with no requests, unregistered at the end of t; node is its label. */
function nodeMetricsOf(t: Test): { metrics: ComponentMetrics; node: string } {
  const metrics = new ComponentMetrics();
  t.teardown(
    registerNodeMetrics(metrics, { nodeId: 'n', requests: () => [] }, (err) => t.fail(String(err))),
  );
  return { metrics, node: hashIdentifier('n') };
}

t.test(
  'reload notifications are counted by mechanism and outcome, for this node only',
  async (t) => {
    const { metrics, node } = nodeMetricsOf(t);
    publishFact('reload', { nodeId: 'n', mechanism: 'http', outcome: 'sent' });
    publishFact('reload', { nodeId: 'n', mechanism: 'http', outcome: 'sent' });
    publishFact('reload', { nodeId: 'n', mechanism: 'signal', outcome: 'failed' });
    publishFact('reload', { nodeId: 'm', mechanism: 'signal', outcome: 'sent' });
    const reloads = parseExposition(await metrics.exposition()).get(
      'cert_csi_reload_notifications_total',
    );
    t.equal(sampleValue(reloads, { node, mechanism: 'http', outcome: 'sent' }), 2);
    t.equal(sampleValue(reloads, { node, mechanism: 'signal', outcome: 'failed' }), 1);
    t.equal(
      sampleValue(reloads, { node, mechanism: 'signal', outcome: 'sent' }) ?? 0,
      0,
      "another node's notification is not this node's",
    );
  },
);

t.test(
  'certificates kept at a first publish after a start are counted as re-issues avoided, for this node only, without changing the managed volumes',
  async (t) => {
    const { metrics, node } = nodeMetricsOf(t);
    const before = parseExposition(await metrics.exposition());
    t.equal(
      sampleValue(before.get('cert_csi_reissues_avoided_total'), { node }),
      0,
      'a zero first',
    );
    publishFact('volume', {
      change: 'managed',
      nodeId: 'n',
      volumeId: 'v1',
      nextIssuanceTime: new Date(),
    });
    publishFact('volume', { change: 'kept', nodeId: 'n', volumeId: 'v1' });
    publishFact('volume', { change: 'kept', nodeId: 'n', volumeId: 'v2' });
    publishFact('volume', { change: 'kept', nodeId: 'm', volumeId: 'v3' });
    const after = parseExposition(await metrics.exposition());
    t.equal(sampleValue(after.get('cert_csi_reissues_avoided_total'), { node }), 2);
    t.equal(
      sampleValue(after.get('certmanager_csi_managed_volume_count'), { node }),
      1,
      'a kept certificate is no new managed volume',
    );
  },
);
