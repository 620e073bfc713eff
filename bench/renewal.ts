/**
 * Renewal at scale, in one process with the plugin (direct mode, data on tmpfs):
 *   1. N managed volumes idle for a while: CPU time and RSS (targets < 1 % of a core, < 200 MB);
 *   2. restart with N volumes: time until all are managed again, CertificateRequests created (target 0);
 *   3. N volumes due at the same moment: time until all are renewed, p50/p99 lag behind their
 *      renewal time under the concurrency limit, against the crypto floor of N issuances.
 *
 *   npm run bench:renewal [-- --volumes 2000 --idle 60s --concurrency 4 --restarts 1 --skip-storm]
 *
 * --restarts K measures the restart K times (each a stop and a start) and reports the median;
 * --skip-storm leaves out part 3 (and its floor), for work on the restart alone.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CertificateRequestKind } from '../src/api/certificate-request.js';
import { silentLogger } from '../src/api/logger.js';
import { type EmbeddedPlugin, startEmbeddedPlugin } from '../src/cli/node/embedded-plugin.js';
import { CsiClient } from '../src/driver/csi-client.js';
import { prepareSigner, signCertificate } from '../src/pki/certificate.js';
import { createCsr, parseCsr } from '../src/pki/csr.js';
import { parseGoDuration } from '../src/pki/duration.js';
import { decodePrivateKey, generatePrivateKey } from '../src/pki/keys.js';
import { createMounter } from '../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../src/volume-manager/settings.js';
import { makeCA } from '../test/support/issuer-fixtures.js';
import { inlineVolumeCall, podInfo } from '../test/support/publish-call.js';
import { recordFigures } from './support/figures.js';
import { countFsCalls } from './support/fs-call-counter.js';

const { values } = parseArgs({
  options: {
    volumes: { type: 'string', default: '2000' },
    idle: { type: 'string', default: '60s' },
    concurrency: { type: 'string', default: '4' },
    restarts: { type: 'string', default: '1' },
    'skip-storm': { type: 'boolean', default: false },
  },
});
const N = Number(values.volumes);
const idleMs = parseGoDuration(values.idle);
const concurrency = Number(values.concurrency);
const restarts = Math.max(1, Number(values.restarts));
const skipStorm = values['skip-storm'];

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const dir = await mkdtemp(join(base, 'cert-csi-bench-renewal-'));
const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
const ids = Array.from({ length: N }, (_, i) => `csi-bench-${String(i).padStart(5, '0')}`);

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

async function start(onIssued?: (volumeId: string) => void): Promise<EmbeddedPlugin> {
  return startEmbeddedPlugin({
    endpoint,
    settings: volumeManagerSettings({ nodeId: 'bench', maxConcurrentIssuances: concurrency }),
    driverName: 'csi.cert-manager.io',
    version: 'bench',
    dataRoot: join(dir, 'volumes'),
    stateDir: join(dir, 'state'),
    mounter: createMounter({ mode: 'direct' }),
    logger: silentLogger,
    clusterResourceNamespace: 'kube-system',
    ...(onIssued ? { onIssued: (volumeId: string) => onIssued(volumeId) } : {}),
  });
}

async function requestCount(plugin: EmbeddedPlugin): Promise<number> {
  return (await plugin.store.list(CertificateRequestKind)).items.length;
}

/** The crypto an issuance cannot avoid (ECDSA keygen + CSR + sign by a prepared CA), sequential. */
async function floorPerIssuance(samples = 50): Promise<number> {
  const ca = await makeCA();
  const signer = await prepareSigner({
    certificatePem: ca.certificatePem,
    key: decodePrivateKey(ca.keyPem),
  });
  const start = performance.now();
  for (let i = 0; i < samples; i++) {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const csr = await createCsr({ key, dnsNames: [`v${i}.bench.svc`] });
    await signCertificate(
      await parseCsr(csr),
      { durationMs: 86_400_000, isCA: false, usages: [] },
      signer,
    );
  }
  return (performance.now() - start) / samples;
}

// --- set-up: N volumes published through the socket --------------------------------------
let plugin = await start();
const client = new CsiClient(endpoint);
const setupStart = performance.now();
for (let i = 0; i < N; i += 32) {
  await Promise.all(
    ids.slice(i, i + 32).map((id) =>
      client.nodeCall(
        'NodePublishVolume',
        inlineVolumeCall(id, join(dir, 'pods', id), {
          ...podInfo({ name: id, namespace: 'bench' }),
          'csi.cert-manager.io/issuer-name': 'embedded-ca',
          'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
          'csi.cert-manager.io/key-algorithm': 'ECDSA',
        }),
      ),
    ),
  );
}
client.close();
const setupS = (performance.now() - setupStart) / 1000;

// --- 1. idle ---------------------------------------------------------------------------
global.gc?.();
const cpuBefore = process.cpuUsage();
const idleStart = performance.now();
await new Promise((resolve) => setTimeout(resolve, idleMs));
const cpu = process.cpuUsage(cpuBefore);
const idleElapsed = performance.now() - idleStart;
const cpuMs = (cpu.user + cpu.system) / 1000;
const rssMb = process.memoryUsage().rss / 2 ** 20;
const armed = plugin.manager.scheduledRenewals;
await plugin.stop();

// --- 2. restart with N valid volumes ------------------------------------------------------
const restartSamples: number[] = [];
let managedAfterRestart = 0;
let createdByRestart = 0;
for (let r = 0; r < restarts; r++) {
  const restartStart = performance.now();
  plugin = await start();
  restartSamples.push(performance.now() - restartStart);
  const requestsBefore = await requestCount(plugin);
  managedAfterRestart = plugin.manager.scheduledRenewals;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  createdByRestart += (await requestCount(plugin)) - requestsBefore;
  await plugin.stop();
}
const restartMs = percentile(restartSamples, 50);

// --- 3. N volumes due at the same moment -------------------------------------------------
const lags: number[] = [];
// Data root and state dir are on tmpfs: every file call of the storm is a synchronous one.
const fsCalls = countFsCalls();
let stormS = Number.NaN;
let floorMs = Number.NaN;
if (!skipStorm) {
  const dueAt = Date.now() + 3000;
  for (const id of ids) {
    const path = join(dir, 'volumes', id, 'metadata.json');
    const metadata = JSON.parse(await readFile(path, 'utf8'));
    metadata.nextIssuanceTime = new Date(dueAt).toISOString();
    await writeFile(path, JSON.stringify(metadata));
  }
  let allDone: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  plugin = await start(() => {
    lags.push(Date.now() - dueAt);
    if (lags.length === N) allDone();
  });
  // From a little before the due time: the start's own reads are over by then.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt - Date.now() - 100)));
  fsCalls.on = true;
  await finished;
  fsCalls.on = false;
  stormS = (Date.now() - dueAt) / 1000;
  await plugin.stop();
  floorMs = await floorPerIssuance();
}

console.log(
  `bench/renewal: node ${process.version}, ${N} ECDSA volumes, data on ${base}, direct mode, concurrency limit ${concurrency}`,
);
console.log(`set-up: ${N} publishes in ${setupS.toFixed(1)} s`);
console.log(
  `idle ${(idleElapsed / 1000).toFixed(0)} s with ${armed} timers: CPU ${cpuMs.toFixed(0)} ms = ${((cpuMs / idleElapsed) * 100).toFixed(3)} % of one core (target < 1 %), RSS ${rssMb.toFixed(0)} MB (target < 200 MB)`,
);
console.log(
  `restart: ${managedAfterRestart} volumes managed again in ${restartMs.toFixed(0)} ms${restarts > 1 ? ` (median of ${restarts}: ${restartSamples.map((ms) => ms.toFixed(0)).join(', ')} ms)` : ''} (target < 2000 ms); CertificateRequests created for valid volumes: ${createdByRestart} (target 0)`,
);
if (!skipStorm) {
  console.log(
    `${N} due at once: all renewed ${stormS.toFixed(1)} s after the due time; lag p50 ${(percentile(lags, 50) / 1000).toFixed(1)} s, p99 ${(percentile(lags, 99) / 1000).toFixed(1)} s`,
  );
  const perRenewal = (count: number) => (count / N).toFixed(1);
  console.log(
    `file-system calls per renewal: ${perRenewal(fsCalls.total())} (${[...fsCalls.counts]
      .sort((a, b) => b[1] - a[1])
      .map(([name, count]) => `${name.replace('Sync', '')} ${perRenewal(count)}`)
      .join(', ')})`,
  );
  console.log(
    `floor: ${floorMs.toFixed(1)} ms of crypto per issuance, ${((floorMs * N) / 1000).toFixed(1)} s for ${N} in sequence; storm / floor = ${(stormS / ((floorMs * N) / 1000)).toFixed(2)}`,
  );
}
recordFigures('renewal', [
  ...(skipStorm
    ? []
    : [
        {
          name: `${N} volumes due at once, renewed`,
          value: N / stormS,
          unit: '/s' as const,
          p50: percentile(lags, 50),
          p95: percentile(lags, 95),
          rawFloor: { of: 'issuance' as const, key: 'ecdsa-p256' as const },
        },
        {
          name: `${N} volumes due at once: file-system calls per renewal`,
          value: fsCalls.total() / N,
          unit: 'calls',
        },
      ]),
  { name: `restart with ${N} volumes, to all managed`, value: restartMs, unit: 'ms' },
]);
await rm(dir, { recursive: true, force: true });
