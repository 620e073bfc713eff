import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { CertificateKind } from '../../src/api/certificate.js';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { registerClientMetrics } from '../../src/observability/client-metrics.js';
import { ComponentMetrics } from '../../src/observability/component-metrics.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import type { Watch } from '../../src/store/resource-store.js';
import { NODE_TOKEN, startCluster } from '../support/cluster-harness.js';
import { rejection, until } from '../support/eventually.js';
import { parseExposition, sampleValue } from '../support/prometheus-text.js';

// The client families count what really went over the wire: answered requests by their
// status, watches once opened (or refused), and requests that got no answer as `<error>`.

const metrics = new ComponentMetrics();
const stop = registerClientMetrics(metrics, (err) => {
  throw err;
});
t.teardown(stop);
const count = async (labels: Record<string, string>) =>
  sampleValue(
    parseExposition(await metrics.exposition()).get('rest_client_requests_total'),
    labels,
  ) ?? 0;

t.test('answered requests and watches, by status', async (t) => {
  const cluster = await startCluster(t);
  const host = new URL(cluster.server.url).host;
  const store = new KubernetesStore({ kubeConfig: cluster.kubeConfig(NODE_TOKEN) });
  await store.list(CertificateRequestKind);
  t.equal(await count({ code: '200', method: 'GET', host }), 1, 'the list');

  const errors: Error[] = [];
  const watches: Watch[] = [];
  const watch = (kind: typeof CertificateKind) => {
    watches.push(store.watch(kind, {}, { onEvent: () => {}, onError: (err) => errors.push(err) }));
  };
  t.teardown(() => {
    for (const w of watches) w.stop();
  });
  watch(CertificateKind);
  await until(() => errors.length === 1, { what: 'the refused watch' });
  t.equal(await count({ code: '403', method: 'GET', host }), 1, 'a watch RBAC refuses: 403');

  watch(CertificateRequestKind);
  await until(() => cluster.server.openWatches === 1, { what: 'the watch to open' });
  await until(async () => (await count({ code: '200', method: 'GET', host })) === 2, {
    what: 'the open watch counted',
  });
  // The server ends it: a watch is counted when it opens, not when it ends.
  cluster.server.endWatches();
  await until(() => cluster.server.openWatches === 1, { what: 'the watch reopened' });
  await until(async () => (await count({ code: '200', method: 'GET', host })) === 3, {
    what: 'the reopened watch counted',
  });
});

t.test('requests without an answer count as <error>', async (t) => {
  // A port nobody listens on: every request is refused before any HTTP answer.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const host = `127.0.0.1:${port}`;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'gone', server: `http://${host}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'gone', cluster: 'gone', user: 'u' }],
    currentContext: 'gone',
  });
  const store = new KubernetesStore({ kubeConfig });
  t.ok(await rejection(store.list(CertificateRequestKind)));
  t.equal(await count({ code: '<error>', method: 'GET', host }), 1, 'the list');
  const failed = new Promise<Error>((resolve) => {
    const w = store.watch(CertificateRequestKind, {}, { onEvent: () => {}, onError: resolve });
    t.teardown(() => w.stop());
  });
  await failed;
  t.equal(await count({ code: '<error>', method: 'GET', host }), 2, 'and the watch');
});
