import t from 'tap';
import { type Issuer, IssuerKind, isIssuerReady } from '../../src/api/issuer.js';
import { hashIdentifier } from '../../src/api/labels.js';
import type { RequestLogEntry } from '../fake-api-server/fake-api-server.js';
import {
  caIssuerAttributes,
  POD_NAMESPACE,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { waitForObject } from '../support/wait-for-object.js';
import {
  checkFiles,
  clusterWithController,
  NODE_USER,
  trackLiveRequests,
} from './cluster-fault-fixtures.js';

t.test('an idle volume whose watch dropped and then expired (410) renews on request', async (t) => {
  const { cluster, startSigner } = await clusterWithController(t);
  const { server } = cluster;
  const live = await trackLiveRequests(t, server.store);
  const first = await startSigner();
  await waitForObject<Issuer>(server.store, IssuerKind, 'ca', POD_NAMESPACE, isIssuerReady);
  const node = await startClusterPlugin(t, cluster, { nodeId: 'node-1' });
  const { target } = await node.publish('vol-idle', caIssuerAttributes);
  const before = await checkFiles(t, target, 'vol-idle');
  const [issuedFirst] = await cluster.requests();

  // Only the plugin watches while the fault happens (its requests, and its node's pods for
  // the readiness gates), so the two expiries are its re-watches'.
  await first.stop();
  await until(() => server.openWatches === 2, {
    what: 'only the plugin’s two watches open',
    timeoutMs: 10_000,
  });
  const dropAt = Date.now();
  // One expiry for each watch: given to any resource, the pods watch could take both (its
  // relist and re-watch coming first twice) and leave the requests watch none.
  server.expireWatches(1, 'certificaterequests');
  server.expireWatches(1, 'pods');
  t.equal(server.dropWatches(), 2, 'the plugin’s watches dropped');
  const pluginReads = () =>
    server.requests.filter(
      (r) =>
        r.time >= dropAt &&
        r.user === NODE_USER &&
        r.resource === 'certificaterequests' &&
        (r.verb === 'list' || r.verb === 'watch'),
    );
  // Relist after the backoff, re-watch (410), relist at once, re-watch.
  await until(() => pluginReads().length >= 4, {
    what: 'the plugin to relist twice and watch again',
    timeoutMs: 10_000,
  });
  const reads = pluginReads();
  t.same(
    reads.slice(0, 4).map((r) => r.verb),
    ['list', 'watch', 'list', 'watch'],
    'list, watch, list, watch',
  );
  const [relist, , relistAfterGone] = reads as [RequestLogEntry, RequestLogEntry, RequestLogEntry];
  t.ok(relist.time - dropAt >= 900, `first relist after the backoff (${relist.time - dropAt} ms)`);
  t.ok(
    relistAfterGone.time - relist.time < 900,
    `second relist at once after the 410 (${relistAfterGone.time - relist.time} ms)`,
  );
  await until(() => server.openWatches === 2, {
    what: 'the plugin watching again',
    timeoutMs: 10_000,
  });

  await startSigner();
  const outcome = await node.plugin.manager.renewNow({ volumeId: 'vol-idle' });
  t.same(outcome.failed, [], 'no failure');
  t.equal(outcome.renewed.length, 1, 'renewed');
  const after = await checkFiles(t, target, 'vol-idle');
  t.not(after.serialNumber, before.serialNumber, 'a new certificate on disk');
  const requests = await cluster.requests();
  t.equal(requests.length, 1, 'one CertificateRequest left');
  t.not(requests[0]?.metadata.name, issuedFirst?.metadata.name, 'the renewal’s');
  t.equal(live.max.get(hashIdentifier('vol-idle')), 1, 'never two live at once');
});
