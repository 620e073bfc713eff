/**
 * The metrics scrape at scale: a node with N managed volumes (one issued CertificateRequest
 * each, in the node's real informer cache; the volume manager's facts published through the
 * real channels), scraped through the real HTTP endpoint:
 *   1. series per family, against README's bound (5R + 38 for the node families);
 *   2. the time of one scrape (cold: the first, which parses each request's certificate once;
 *      then median and max over S scrapes), target < 50 ms;
 *   3. the floor measured in the same run: a registry holding the same number of plain gauge
 *      series, serialized the same number of times, without HTTP.
 *
 *   npm run bench:metrics [-- --volumes 2000 --scrapes 50]
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Gauge, Registry } from 'prom-client';
import {
  type CertificateRequest,
  CertificateRequestKind,
  encodeBytes,
} from '../src/api/certificate-request.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../src/api/labels.js';
import { silentLogger } from '../src/api/logger.js';
import { startNodeObservability } from '../src/cli/node/node-observability.js';
import { SharedInformers } from '../src/controller/shared-informers.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { VolumeTelemetry } from '../src/volume-manager/telemetry/volume-telemetry.js';
import { makeCA } from '../test/support/issuer-fixtures.js';
import { parseExposition } from '../test/support/prometheus-text.js';
import { recordFigures } from './support/figures.js';

const { values } = parseArgs({
  options: {
    volumes: { type: 'string', default: '2000' },
    scrapes: { type: 'string', default: '50' },
  },
});
const N = Number(values.volumes);
const S = Number(values.scrapes);
const NODE_ID = 'bench-node';

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

// N issued requests of this node, as the signer leaves them (Ready True, a certificate).
const { certificatePem } = await makeCA();
const store = await MemoryStore.open();
const ids = Array.from({ length: N }, (_, i) => `csi-bench-${String(i).padStart(5, '0')}`);
for (const volumeId of ids) {
  await store.create<CertificateRequest>(CertificateRequestKind, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name: `${volumeId}-req`,
      namespace: 'sandbox',
      labels: {
        [NODE_ID_HASH_LABEL]: hashIdentifier(NODE_ID),
        [VOLUME_ID_HASH_LABEL]: hashIdentifier(volumeId),
      },
    },
    spec: {
      request: encodeBytes('unused'),
      issuerRef: { name: 'embedded-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    },
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Issued', message: 'issued' }],
      certificate: encodeBytes(certificatePem),
      ca: encodeBytes(certificatePem),
    },
  });
}
const informers = new SharedInformers(store);
informers.informer(CertificateRequestKind);
informers.start();
await informers.waitForSync();

const observability = await startNodeObservability({
  metrics: { host: '127.0.0.1', port: 0 },
  health: undefined,
  nodeId: NODE_ID,
  controllers: true,
  apiClient: false,
  logger: silentLogger,
  plugin: () => ({ informers, manager: { isReady: () => true } }),
});
// The volume manager's facts, through its own publisher: each volume issued once.
const telemetry = new VolumeTelemetry(NODE_ID);
const renewAt = new Date(Date.now() + 3_600_000);
for (const volumeId of ids) {
  await telemetry.issuance(volumeId, async () => ({ nextIssuanceTime: renewAt }) as never);
}
const url = `http://127.0.0.1:${observability.metrics?.address.port}/metrics`;

// Wall time of one scrape (client and server share this process), and the CPU time the
// process spent on it: on a loaded machine the wall time also counts waiting for a core.
const timed = async (): Promise<[number, number, string]> => {
  const cpu = process.cpuUsage();
  const began = performance.now();
  const body = await (await fetch(url)).text();
  const used = process.cpuUsage(cpu);
  return [performance.now() - began, (used.user + used.system) / 1000, body];
};
const [coldMs, coldCpuMs, body] = await timed();
const times: number[] = [];
const cpuTimes: number[] = [];
for (let i = 0; i < S; i++) {
  const [wall, cpu] = await timed();
  times.push(wall);
  cpuTimes.push(cpu);
}

console.log(`wall per scrape: ${times.map((x) => x.toFixed(0)).join(' ')}`);
const families = parseExposition(body);
let nodeSeries = 0;
let total = 0;
console.log('series per family:');
for (const [name, family] of families) {
  total += family.samples.length;
  if (name.startsWith('certmanager_csi_')) nodeSeries += family.samples.length;
  console.log(`  ${name.padEnd(66)} ${family.type.padEnd(9)} ${family.samples.length}`);
}
const requests = informers.cached(CertificateRequestKind).length;
const bound = 5 * requests + 38;

// The floor: the same number of plain gauge series, set once, serialized S times.
const floorRegistry = new Registry();
const plain = new Gauge({
  name: 'bench_plain',
  help: 'A plain gauge.',
  labelNames: ['name', 'namespace', 'condition', 'issuer_name', 'issuer_kind', 'issuer_group'],
  registers: [floorRegistry],
});
for (let i = 0; i < total; i++) {
  plain.set(
    {
      name: `csi-bench-${String(i).padStart(5, '0')}-req`,
      namespace: 'sandbox',
      condition: 'True',
      issuer_name: 'embedded-ca',
      issuer_kind: 'ClusterIssuer',
      issuer_group: 'cert-manager.io',
    },
    1,
  );
}
const floor: number[] = [];
for (let i = 0; i < S; i++) {
  const began = performance.now();
  await floorRegistry.metrics();
  floor.push(performance.now() - began);
}
await observability.close();
informers.stop();
await store.close();

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
/** The q-quantile of samples (nearest rank). */
const percentile = (samples: number[], q: number) =>
  [...samples].sort((a, b) => a - b)[
    Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)
  ] ?? 0;
console.log(`volumes ${N}, requests in the cache ${requests}, scrapes ${S}`);
console.log(
  `node series ${nodeSeries} (bound 5R + 38 = ${bound}: ${nodeSeries <= bound ? 'within' : 'OVER'}), all series ${total}`,
);
console.log(
  `scrape wall: cold ${fmt(coldMs)}, median ${fmt(median(times))}, p95 ${fmt(percentile(times, 0.95))}, max ${fmt(Math.max(...times))} (scrape ${times.indexOf(Math.max(...times)) + 1} of ${S}) (target < 50 ms: median ${median(times) < 50 ? 'met' : 'MISSED'}, every scrape ${Math.max(...times) < 50 ? 'met' : 'MISSED'})`,
);
console.log(
  `scrape CPU: cold ${fmt(coldCpuMs)}, median ${fmt(median(cpuTimes))}, max ${fmt(Math.max(...cpuTimes))}`,
);
console.log(
  `load average while it ran: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(
  `floor (${total} plain gauge series serialized, no HTTP): median ${fmt(median(floor))}; ratio ${(median(times) / median(floor)).toFixed(2)}`,
);
recordFigures('metrics', [
  {
    name: `scrape with ${N} volumes`,
    value: median(times),
    unit: 'ms',
    p50: median(times),
    p95: percentile(times, 0.95),
    ownFloor: { value: median(floor), what: 'plain gauges serialized' },
  },
]);
