/**
 * NodePublishVolume latency and throughput through the real unix socket, against the
 * in-process floor (key generation + CSR + signing) measured in the same run.
 *
 *   npm run bench:publish [-- --count 40 --ed25519-count 40 --rsa-count 30 --disk-count 50 --warmup 500]
 *
 * Plugin and client share this process (the client's share of the work is small and
 * counted against the plugin, so figures are conservative). The data root and the
 * targets are on tmpfs (/dev/shm) as the data root is in production; files reach the
 * target in direct mode (a copy instead of a bind mount). Then the disk layout: the
 * state dir and the targets on a disk, with the fsyncs of each publish counted. Last, as root,
 * the bind layout of a privileged node plugin: the data root a tmpfs the plugin mounts, each
 * target a read-only bind mount of its volume (the bench then runs in a private mount
 * namespace of its own, `unshare --mount`, so no mount reaches the host).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { silentLogger } from '../src/api/logger.js';
import { startEmbeddedPlugin } from '../src/cli/node/embedded-plugin.js';
import { CsiClient } from '../src/driver/csi-client.js';
import { runCommand } from '../src/fs/run-command.js';
import { prepareSigner, signCertificate } from '../src/pki/certificate.js';
import { createCsr, parseCsr } from '../src/pki/csr.js';
import { decodePrivateKey, generatePrivateKey, type KeySpec } from '../src/pki/keys.js';
import { createMounter } from '../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../src/volume-manager/settings.js';
import { makeCA } from '../test/support/issuer-fixtures.js';
import { inlineVolumeCall, podInfo } from '../test/support/publish-call.js';
import { spyOnFsync } from '../test/volume/fixtures/fsync-spy.js';
import { type Figure, recordFigures } from './support/figures.js';
import { countFsCalls } from './support/fs-call-counter.js';
import type { RawKeyType } from './support/raw-floor.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '200' },
    'ed25519-count': { type: 'string', default: '200' },
    'rsa-count': { type: 'string', default: '100' },
    'rsa4096-count': { type: 'string', default: '4' },
    'disk-count': { type: 'string', default: '100' },
    'bind-count': { type: 'string', default: '100' },
    warmup: { type: 'string', default: '500' },
  },
});

// The bind layout needs a mount namespace of the bench's own: the whole run moves into one
// (nothing else in it mounts anything, so the other layouts run as they would outside).
const IN_NAMESPACE = 'CERT_CSI_BENCH_MOUNT_NAMESPACE';
const bindCount = Number(values['bind-count']);
let bindSkipped: string | undefined;
if (bindCount > 0 && process.env[IN_NAMESPACE] === undefined) {
  const unshare = ['--mount', '--propagation', 'private'];
  const probe =
    process.platform === 'linux' && process.getuid?.() === 0
      ? spawnSync('unshare', [...unshare, 'true'], { encoding: 'utf8' })
      : undefined;
  if (probe === undefined) {
    bindSkipped = 'needs root on Linux';
  } else if (probe.status !== 0) {
    bindSkipped = `unshare failed: ${probe.error?.message ?? probe.stderr.trim()}`;
  } else {
    const run = spawnSync(
      'unshare',
      [...unshare, process.execPath, ...process.execArgv, ...process.argv.slice(1)],
      { stdio: 'inherit', env: { ...process.env, [IN_NAMESPACE]: '1' } },
    );
    process.exit(run.status ?? 1);
  }
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

/** keygen + CSR + sign by an ECDSA P-256 CA, one at a time: what a publish cannot avoid. */
async function floor(spec: KeySpec, n: number): Promise<number[]> {
  const ca = await makeCA();
  // A prepared signer, as the plugin's CA signer keeps one: the floor holds only per-volume work.
  const signer = await prepareSigner({
    certificatePem: ca.certificatePem,
    key: decodePrivateKey(ca.keyPem),
  });
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const key = await generatePrivateKey(spec);
    const csr = await createCsr({ key, dnsNames: [`pod-${i}.bench.svc`] });
    await signCertificate(
      await parseCsr(csr),
      { durationMs: 86_400_000, isCA: false, usages: [] },
      signer,
    );
    samples.push(performance.now() - start);
  }
  return samples;
}

async function startPlugin(dir: string, stateDir?: string, mode: 'direct' | 'bind' = 'direct') {
  const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
  const plugin = await startEmbeddedPlugin({
    ...(stateDir ? { stateDir } : {}),
    endpoint,
    // 16 concurrent clients are measured: let that many issuances run at once.
    settings: volumeManagerSettings({ nodeId: 'bench', maxConcurrentIssuances: 16 }),
    driverName: 'csi.cert-manager.io',
    version: 'bench',
    dataRoot: join(dir, 'volumes'),
    mounter: createMounter({ mode, logger: silentLogger }),
    logger: silentLogger,
    clusterResourceNamespace: 'kube-system',
  });
  return { endpoint, stop: () => plugin.stop() };
}

let volumeCounter = 0;
function publishRequest(targets: string, algorithm: Record<string, string>) {
  const id = `csi-bench-${volumeCounter++}`;
  return inlineVolumeCall(id, join(targets, 'pods', id), {
    ...podInfo({ name: id, namespace: 'bench', uid: '00000000-0000-4000-8000-000000000000' }),
    'csi.cert-manager.io/issuer-name': 'embedded-ca',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    'csi.cert-manager.io/dns-names': `${id}.bench.svc`,
    ...algorithm,
  });
}

async function measure(
  client: CsiClient,
  dir: string,
  algorithm: Record<string, string>,
  total: number,
  clients: number,
): Promise<{ samples: number[]; perSecond: number }> {
  const samples: number[] = [];
  let issued = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (issued < total) {
        issued++;
        const begin = performance.now();
        await client.nodeCall('NodePublishVolume', publishRequest(dir, algorithm));
        samples.push(performance.now() - begin);
      }
    }),
  );
  return { samples, perSecond: (samples.length / (performance.now() - start)) * 1000 };
}

// Production keeps the data root on tmpfs; /dev/shm is one where it exists.
const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const dir = await mkdtemp(join(base, 'cert-csi-bench-'));
const plugin = await startPlugin(dir);
const client = new CsiClient(plugin.endpoint);
const ecdsa = { 'csi.cert-manager.io/key-algorithm': 'ECDSA' };
const rsa = { 'csi.cert-manager.io/key-algorithm': 'RSA', 'csi.cert-manager.io/key-size': '2048' };
const count = Number(values.count);
const rsaCount = Number(values['rsa-count']);
const ed25519 = { 'csi.cert-manager.io/key-algorithm': 'Ed25519' };

const CHUNK = 10;
// Data root and targets are on tmpfs: every file call of a publish is a synchronous one, counted
// over the one-client publishes of each key type (a figure that does not move with the machine).
const fsCalls = countFsCalls();
const fsCallsPerPublish: string[] = [];
// Warm-up: enough ECDSA publishes that the figures are the plugin's steady ones, not V8's first
// second (with 20, p50 was about a fifth higher).
await measure(client, dir, ecdsa, Number(values.warmup), 1);
const rows: string[] = [];
const figures: Figure[] = [];
for (const [label, attributes, spec, n, rawKey] of [
  ['ECDSA P-256', ecdsa, { algorithm: 'ECDSA', size: 256 }, count, 'ecdsa-p256'],
  ['Ed25519', ed25519, { algorithm: 'Ed25519' }, Number(values['ed25519-count']), 'ed25519'],
  ['RSA-2048', rsa, { algorithm: 'RSA', size: 2048 }, rsaCount, 'rsa-2048'],
] as Array<[string, Record<string, string>, KeySpec, number, RawKeyType]>) {
  if (n <= 0) continue;
  // Floor and single-client publishes alternate in small chunks, so both see the same
  // machine conditions (a busy neighbour or a run of slow RSA keys hits both alike).
  const floorSamples: number[] = [];
  const single: number[] = [];
  let singleMs = 0;
  for (let done = 0; done < n; done += CHUNK) {
    const size = Math.min(CHUNK, n - done);
    floorSamples.push(...(await floor(spec, size)));
    const started = performance.now();
    fsCalls.on = true;
    single.push(...(await measure(client, dir, attributes, size, 1)).samples);
    fsCalls.on = false;
    singleMs += performance.now() - started;
  }
  fsCallsPerPublish.push(`${label} ${(fsCalls.total() / single.length).toFixed(1)}`);
  if (label === 'ECDSA P-256') {
    figures.push({
      name: 'publish ECDSA P-256, 1 client: file-system calls per publish',
      value: fsCalls.total() / single.length,
      unit: 'calls',
    });
  }
  fsCalls.counts.clear();
  const floorP50 = percentile(floorSamples, 50);
  for (const clients of [1, 16]) {
    const { samples, perSecond } =
      clients === 1
        ? { samples: single, perSecond: (single.length / singleMs) * 1000 }
        : await measure(client, dir, attributes, n, clients);
    const p50 = percentile(samples, 50);
    rows.push(
      `${label.padEnd(11)} | ${String(clients).padStart(7)} | ${p50.toFixed(1).padStart(8)} | ${percentile(samples, 99).toFixed(1).padStart(8)} | ${perSecond.toFixed(1).padStart(8)} | ${floorP50.toFixed(1).padStart(9)} | ${(p50 / floorP50).toFixed(2)}`,
    );
    const p95 = percentile(samples, 95);
    const name = `publish ${label}, ${clients} client${clients > 1 ? 's' : ''}`;
    const rawFloor = { of: 'issuance' as const, key: rawKey };
    if (clients === 1)
      figures.push({ name: `${name}, latency`, value: p50, unit: 'ms', p50, p95, rawFloor });
    figures.push({ name, value: perSecond, unit: '/s', p50, p95, rawFloor });
  }
}

// Event-loop stalls while RSA-4096 volumes are published (key generation is the risk).
const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
await measure(
  client,
  dir,
  { ...rsa, 'csi.cert-manager.io/key-size': '4096' },
  Number(values['rsa4096-count']),
  2,
);
histogram.disable();

console.log(
  `bench/publish: node ${process.version}, plugin and client in one process, direct mode`,
);
console.log('key         | clients | p50 ms   | p99 ms   | per s    | floor p50 | p50 / floor');
for (const row of rows) console.log(row);
console.log(`file-system calls per publish, 1 client: ${fsCallsPerPublish.join(', ')}`);
console.log(
  `RSA-4096 publishes: longest event-loop stall ${(histogram.max / 1e6).toFixed(1)} ms (target < 50 ms)`,
);
figures.push({
  name: 'RSA-4096 publishes: longest event-loop stall',
  value: histogram.max / 1e6,
  unit: 'ms',
});
client.close();
await plugin.stop();
await rm(dir, { recursive: true, force: true });

// The production-like layout: the data root on tmpfs, the state dir and the targets (kubelet's
// pods dir, written in direct mode) on a disk, where every fsync is a real one, each counted.
const diskCount = Number(values['disk-count']);
if (diskCount > 0) {
  // The tests' spy, never restored: the process ends with the bench.
  const fsyncs = await spyOnFsync({ teardown: () => {} });
  const shmDir = await mkdtemp(join(base, 'cert-csi-bench-'));
  const diskDir = await mkdtemp(join(tmpdir(), 'cert-csi-bench-disk-'));
  const diskPlugin = await startPlugin(shmDir, join(diskDir, 'state'));
  const diskClient = new CsiClient(diskPlugin.endpoint);
  await measure(diskClient, diskDir, ecdsa, 10, 1); // warm-up
  const before = fsyncs.count;
  const { samples, perSecond } = await measure(diskClient, diskDir, ecdsa, diskCount, 1);
  const perPublish = (fsyncs.count - before) / samples.length;
  const p50 = percentile(samples, 50);
  const p95 = percentile(samples, 95);
  console.log(
    `disk layout (state dir and targets on ${tmpdir()}): ECDSA P-256, 1 client: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, ${perSecond.toFixed(1)}/s, ${perPublish.toFixed(2)} fsyncs per publish`,
  );
  const rawFloor = { of: 'issuance' as const, key: 'ecdsa-p256' as const };
  figures.push(
    {
      name: 'publish ECDSA P-256, disk layout, latency',
      value: p50,
      unit: 'ms',
      p50,
      p95,
      rawFloor,
    },
    {
      name: 'publish ECDSA P-256, disk layout: fsyncs per publish',
      value: perPublish,
      unit: 'fsyncs',
    },
  );
  diskClient.close();
  await diskPlugin.stop();
  await rm(shmDir, { recursive: true, force: true });
  await rm(diskDir, { recursive: true, force: true });
}

// The bind layout: a tmpfs of the bench's own holds everything (the namespace's mounts vanish
// with it); the plugin mounts its data root's tmpfs inside and bind-mounts each target.
if (bindCount > 0 && bindSkipped === undefined) {
  const bindDir = await mkdtemp(join(tmpdir(), 'cert-csi-bench-bind-'));
  await runCommand('mount', ['-t', 'tmpfs', '-o', 'mode=0700', 'cert-csi-bench', bindDir]);
  const bindPlugin = await startPlugin(bindDir, join(bindDir, 'state'), 'bind');
  const bindClient = new CsiClient(bindPlugin.endpoint);
  await measure(bindClient, bindDir, ecdsa, 20, 1); // warm-up
  const rawFloor = { of: 'issuance' as const, key: 'ecdsa-p256' as const };
  const parts: string[] = [];
  for (const clients of [1, 16]) {
    const busy = performance.eventLoopUtilization();
    const { samples, perSecond } = await measure(bindClient, bindDir, ecdsa, bindCount, clients);
    const mainMs = performance.eventLoopUtilization(busy).active / samples.length;
    const p50 = percentile(samples, 50);
    const p95 = percentile(samples, 95);
    parts.push(
      `${clients} client${clients > 1 ? 's' : ''}: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, ${perSecond.toFixed(1)}/s, main thread ${mainMs.toFixed(2)} ms per publish`,
    );
    const name = `publish ECDSA P-256, bind layout, ${clients} client${clients > 1 ? 's' : ''}`;
    figures.push({ name, value: perSecond, unit: '/s', p50, p95, rawFloor });
    figures.push({ name: `${name}: main-thread time per publish`, value: mainMs, unit: 'ms' });
  }
  console.log(`bind layout (root, a private mount namespace): ECDSA P-256, ${parts.join('; ')}`);
  bindClient.close();
  await bindPlugin.stop();
  // A lazy unmount takes the tmpfs and every mount below it at once.
  await runCommand('umount', ['-l', bindDir]);
  await rmdir(bindDir);
} else if (bindCount > 0) {
  console.log(`bind layout: skipped (${bindSkipped})`);
}
recordFigures('publish', figures);
