import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ServiceError } from '@grpc/grpc-js';
import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import { type Issuer, IssuerKind, isIssuerReady } from '../../src/api/issuer.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import type { RequestLogEntry } from '../fake-api-server/fake-api-server.js';
import {
  type ClusterPlugin,
  CONTROLLER_USER,
  caIssuerAttributes,
  POD_NAMESPACE,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { waitForObject } from '../support/wait-for-object.js';
import {
  checkFiles,
  clusterWithController,
  NODE_USER,
  trackLiveRequests,
} from './cluster-fault-fixtures.js';

const NODE_SELECTOR = `${NODE_ID_HASH_LABEL}=${hashIdentifier('node-1')}`;
// Long enough for everything the scenario checks to happen inside it: more than twice the
// plugin's attempt timeout (4 s) and kubelet's retry cap (5 s), so every volume fails several
// attempts, and the informers' relists (1, 3, 7 s after a failure) meet it three times. 30 s
// made the test take 37 s, longer than a test file may take.
const OUTAGE_MS = 12_000;

/** One NodePublishVolume call as the test's kubelet made it. */
interface Attempt {
  startedAt: number;
  endedAt: number;
  code?: number;
  error?: string;
}

/**
 * Publishes as kubelet does: on failure, retry after a backoff (1 s doubling, capped at
 * 5 s here; kubelet's own cap is 2 min) until it works or the deadline passes.
 */
async function publishLikeKubelet(
  node: ClusterPlugin,
  volumeId: string,
  deadline: number,
): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  let backoffMs = 1_000;
  for (;;) {
    const startedAt = Date.now();
    try {
      await node.publish(volumeId, caIssuerAttributes);
      attempts.push({ startedAt, endedAt: Date.now() });
      return attempts;
    } catch (err) {
      const failure = err as Partial<ServiceError>;
      attempts.push({
        startedAt,
        endedAt: Date.now(),
        ...(failure.code !== undefined ? { code: failure.code } : {}),
        error: failure.details ?? String(err),
      });
    }
    if (Date.now() + backoffMs > deadline) {
      throw new Error(`${volumeId} not published in time; attempts: ${JSON.stringify(attempts)}`);
    }
    await delay(backoffMs);
    backoffMs = Math.min(backoffMs * 2, 5_000);
  }
}

function liveByVolume(requests: CertificateRequest[]): Map<string, string[]> {
  const byVolume = new Map<string, string[]>();
  for (const request of requests) {
    const hash = request.metadata.labels?.[VOLUME_ID_HASH_LABEL] ?? '';
    byVolume.set(hash, [...(byVolume.get(hash) ?? []), request.metadata.name]);
  }
  return byVolume;
}

function isPluginRewatch(entry: RequestLogEntry): boolean {
  const resourceVersion = entry.query.get('resourceVersion') ?? '';
  return (
    entry.user === NODE_USER &&
    entry.watch &&
    entry.resource === 'certificaterequests' &&
    resourceVersion !== '' &&
    resourceVersion !== '0'
  );
}

t.test(
  `a ${OUTAGE_MS / 1000} s API outage with dropped watches, 409s and 410s: issuance completes after recovery, one live request per volume`,
  async (t) => {
    const { cluster, startSigner } = await clusterWithController(t);
    const { server } = cluster;
    const live = await trackLiveRequests(t, server.store);
    await startSigner();
    await waitForObject<Issuer>(server.store, IssuerKind, 'ca', POD_NAMESPACE, isIssuerReady);
    const node = await startClusterPlugin(t, cluster, {
      nodeId: 'node-1',
      attemptTimeoutMs: 4_000,
    });

    // A volume issued before the outage: republishing it needs no API call.
    const { target: readyTarget } = await node.publish('vol-ready', caIssuerAttributes);
    await checkFiles(t, readyTarget, 'vol-ready');
    const readyCertificate = await readFile(join(readyTarget, 'tls.crt'));
    const watchesBefore = server.openWatches;
    t.ok(watchesBefore >= 5, `${watchesBefore} watches open (plugin 1, controller 4)`);

    // The outage: every request answers 500 for OUTAGE_MS, and every open watch is torn down.
    const faultStart = Date.now();
    server.failRequests({ status: 500, forMs: OUTAGE_MS });
    const recoveryAt = faultStart + OUTAGE_MS;
    // After it, the plugin's first re-watch is refused with HTTP 410 (a fault registered
    // second only applies once the 500s have ended).
    server.failRequests({ status: 410, times: 1, match: isPluginRewatch });
    t.equal(server.dropWatches(), watchesBefore, 'every watch dropped');

    const volumes = ['vol-a', 'vol-b', 'vol-c'];
    const deadline = recoveryAt + 25_000;
    const publishing = volumes.map((volumeId) => publishLikeKubelet(node, volumeId, deadline));

    await delay(2_000);
    // Later in the outage: re-watches get the watch cache's 410 ERROR event once the server
    // answers again, and the controller's first status writes conflict.
    server.expireWatches(5);
    server.conflictOnNextStatusUpdates(3);
    await node.publish('vol-ready', caIssuerAttributes);
    t.ok(Date.now() < recoveryAt, 'a ready volume republishes during the outage');
    // From disk, not by a new issuance: a wall-clock bound here would race a busy machine.
    t.same(
      await readFile(join(readyTarget, 'tls.crt')),
      readyCertificate,
      'with the certificate it had, from disk',
    );

    const attempts = await Promise.all(publishing);
    for (const [index, volumeId] of volumes.entries()) {
      const tries = attempts[index] as Attempt[];
      const success = tries.at(-1) as Attempt;
      const failures = tries.slice(0, -1);
      t.ok(failures.length > 0, `${volumeId}: ${failures.length} failed attempts before success`);
      t.ok(
        failures.some((f) => f.endedAt < recoveryAt && /injected fault/.test(f.error ?? '')),
        `${volumeId}: publishes during the outage fail with the API's error`,
      );
      const afterRecovery = success.endedAt - recoveryAt;
      t.ok(
        success.endedAt >= recoveryAt && afterRecovery < 25_000,
        `${volumeId}: published ${afterRecovery} ms after the API recovered (attempt ${tries.length}; attempts ended at ${tries.map((a) => `${a.endedAt - faultStart}ms${a.error ? '✗' : '✓'}`).join(', ')} after the outage began)`,
      );
      await checkFiles(t, join(node.dir, 'pods', volumeId, 'mount'), volumeId);
    }

    // What the faults did, as the server saw it.
    const log = server.requests.filter((r) => r.time >= faultStart);
    t.ok(
      log.some((r) => r.user === NODE_USER && r.verb === 'create' && r.status === 500),
      'the plugin’s creates were refused with 500',
    );
    t.ok(
      log.some((r) => r.user === NODE_USER && r.verb === 'list' && r.status === 500),
      'the plugin’s informer relisted during the outage and got 500',
    );
    const firstListAfter = (user: string) =>
      (log.find((r) => r.user === user && r.verb === 'list' && r.status === 200)?.time ??
        Number.NaN) - recoveryAt;
    const pluginRelist = firstListAfter(NODE_USER);
    const controllerRelist = firstListAfter(CONTROLLER_USER);
    t.ok(
      pluginRelist >= 0 && controllerRelist >= 0,
      `informers relisted ${pluginRelist} ms (plugin) and ${controllerRelist} ms (controller) after the API recovered`,
    );
    t.equal(
      log.filter((r) => isPluginRewatch(r) && r.status === 410).length,
      1,
      'the plugin’s re-watch after the outage got 410 (and it relisted)',
    );
    const conflicts = log.filter((r) => r.subresource === 'status' && r.status === 409);
    // Injected: the first three; the approver and the signer racing may add real ones.
    t.ok(conflicts.length >= 3, `${conflicts.length} status writes conflicted`);
    t.ok(
      conflicts.every((r) => r.user === CONTROLLER_USER && r.time >= recoveryAt),
      'all of them the controller’s, after the outage',
    );

    // One live request per volume, always.
    const all = volumes.concat('vol-ready');
    const current = liveByVolume(await cluster.requests());
    for (const volumeId of all) {
      const hash = hashIdentifier(volumeId);
      t.equal(current.get(hash)?.length, 1, `${volumeId}: exactly one CertificateRequest now`);
      t.equal(live.max.get(hash), 1, `${volumeId}: never more than one live CertificateRequest`);
    }
    t.same(live.errors, [], 'the observer’s watch never failed');

    // The plugin only ever listed and watched its own node's requests.
    const pluginCalls = server.requests.filter(
      (r) => r.user === NODE_USER && r.resource === 'certificaterequests',
    );
    const reads = pluginCalls.filter((r) => r.verb === 'list' || r.verb === 'watch');
    t.ok(reads.length > 4, `${reads.length} lists and watches by the plugin`);
    t.same(
      reads.filter((r) => r.labelSelector !== NODE_SELECTOR || r.namespace !== undefined),
      [],
      `every list and watch is scoped by ${NODE_SELECTOR}, across namespaces`,
    );
    t.equal(pluginCalls.filter((r) => r.verb === 'get').length, 0, 'no gets');
    t.same(
      server.requests.filter((r) => r.status === 403).map((r) => `${r.user} ${r.verb} ${r.path}`),
      [],
      'nothing was refused by RBAC',
    );
  },
);
