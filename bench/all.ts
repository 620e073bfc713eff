/**
 * Every bench, with short sizes, then one table: each figure, its raw floor measured in the same
 * run (bench/support/raw-floor.ts, right after the bench that needs it), the ratio, p50/p95.
 *
 *   npm run bench                        # every bench, a few minutes
 *   npm run bench -- --only sign,publish # some of them
 *
 * Each bench runs in its own process (some need --expose-gc, and none should inherit another's
 * heap); its own detailed output goes to stderr, the table to stdout.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FIGURES_FILE_VARIABLE, type Figure } from './support/figures.js';
import {
  type RawKeyType,
  rawCA,
  rawCsr,
  rawIssuance,
  rawSigning,
  timePerOperation,
} from './support/raw-floor.js';

/** A bench as this script runs it: its file, node flags, and the short sizes. */
interface Bench {
  name: string;
  file: string;
  nodeFlags?: string[];
  args: string[];
}

const BENCHES: readonly Bench[] = [
  { name: 'sign', file: 'sign.ts', args: ['--requests', '500', '--warmup', '3000'] },
  { name: 'csr', file: 'csr-signing.ts', args: ['--requests', '200', '--warmup', '20'] },
  {
    name: 'certificates',
    file: 'certificates.ts',
    args: ['--certificates', '200', '--rsa-certificates', '5', '--warmup', '500'],
  },
  {
    name: 'publish',
    file: 'publish.ts',
    args: [
      '--count',
      '60',
      '--ed25519-count',
      '60',
      '--rsa-count',
      '10',
      '--rsa4096-count',
      '2',
      '--disk-count',
      '30',
      '--bind-count',
      '30',
      '--warmup',
      '500',
    ],
  },
  {
    name: 'renewal',
    file: 'renewal.ts',
    nodeFlags: ['--expose-gc'],
    args: ['--volumes', '300', '--idle', '2s'],
  },
  {
    name: 'pod-certificates',
    file: 'pod-certificates.ts',
    args: ['--requests', '100', '--warmup', '20'],
  },
  { name: 'api', file: 'api-requests.ts', args: ['--volumes', '20'] },
  { name: 'webhook', file: 'webhook.ts', args: ['--reviews', '1000'] },
  { name: 'metrics', file: 'metrics.ts', args: ['--volumes', '500', '--scrapes', '20'] },
  {
    name: 'file-watch',
    file: 'file-watch.ts',
    nodeFlags: ['--expose-gc'],
    args: ['--volumes', '100', '--watchers', 'fs.watch'],
  },
];

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only?.split(',');
for (const name of only ?? []) {
  if (!BENCHES.some((b) => b.name === name)) {
    throw new Error(
      `--only: no bench "${name.slice(0, 40)}" (there are ${BENCHES.map((b) => b.name).join(', ')})`,
    );
  }
}

type Recorded = Figure & { bench: string };

/** Runs one bench in its own process; resolves with the figures it recorded. */
async function run(bench: Bench, file: string): Promise<Recorded[]> {
  const script = fileURLToPath(new URL(bench.file, import.meta.url));
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...(bench.nodeFlags ?? []), '--import', 'tsx', script, ...bench.args],
      {
        stdio: ['ignore', process.stderr, process.stderr],
        env: { ...process.env, [FIGURES_FILE_VARIABLE]: file },
      },
    );
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`bench ${bench.name} exited with ${code}`)),
    );
  });
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Recorded);
}

/** A raw floor: per-operation latency and the rate one at a time. */
interface Floor {
  p50: number;
  p95: number;
  perSecond: number;
}

/** Measures the raw floor for one figure's kind, now (just after its bench ran). */
function measureFloor(of: 'issuance' | 'signing', key: RawKeyType, caType: RawKeyType): Floor {
  const ca = rawCA(caType);
  // RSA key generation takes ~100 ms: fewer samples keep the run short.
  const samples = of === 'issuance' && key === 'rsa-2048' ? 20 : 300;
  if (of === 'issuance') return timePerOperation((i) => rawIssuance(ca, key, `pod-${i}`), samples);
  const csrs = Array.from({ length: 50 }, (_, i) => rawCsr(key, `pod-${i}`));
  return timePerOperation((i) => rawSigning(ca, key, csrs[i % 50] as Buffer, `pod-${i}`), samples);
}

interface Row {
  bench: string;
  figure: string;
  value: string;
  floor: string;
  ratio: string;
  p50: string;
  p95: string;
}

const number = (x: number) =>
  x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3);

/** One table row: the figure, its floor and the ratio figure ÷ floor in the figure's unit. */
function row(f: Recorded, floors: Map<string, Floor>): Row {
  let floor = '-';
  let ratio = '-';
  if (f.rawFloor) {
    const raw = floors.get(floorKey(f.rawFloor)) as Floor;
    const base = f.unit === '/s' ? raw.perSecond : raw.p50;
    floor = `${number(base)} ${f.unit} raw ${f.rawFloor.of} ${f.rawFloor.key}${f.rawFloor.ca && f.rawFloor.ca !== 'ecdsa-p256' ? ` (${f.rawFloor.ca} CA)` : ''}`;
    ratio = (f.value / base).toFixed(2);
  } else if (f.ownFloor) {
    floor = `${number(f.ownFloor.value)} ${f.unit} ${f.ownFloor.what}`;
    ratio = f.ownFloor.value === 0 ? '-' : (f.value / f.ownFloor.value).toFixed(2);
  }
  return {
    bench: f.bench,
    figure: f.name,
    value: `${number(f.value)} ${f.unit}`,
    floor,
    ratio,
    p50: f.p50 === undefined ? '-' : number(f.p50),
    p95: f.p95 === undefined ? '-' : number(f.p95),
  };
}

const floorKey = (floor: NonNullable<Figure['rawFloor']>) =>
  `${floor.of}:${floor.key}:${floor.ca ?? 'ecdsa-p256'}`;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const startLoad = load();
const dir = await mkdtemp(join(tmpdir(), 'cert-csi-bench-all-'));
const rows: Row[] = [];
const started = performance.now();
try {
  for (const bench of BENCHES) {
    if (only && !only.includes(bench.name)) continue;
    process.stderr.write(`\n=== bench ${bench.name} ${bench.args.join(' ')}\n`);
    const figures = await run(bench, join(dir, `${bench.name}.jsonl`));
    if (figures.length === 0) throw new Error(`bench ${bench.name} recorded no figures`);
    const floors = new Map<string, Floor>();
    for (const f of figures) {
      if (f.rawFloor && !floors.has(floorKey(f.rawFloor))) {
        const { of, key, ca = 'ecdsa-p256' } = f.rawFloor;
        floors.set(floorKey(f.rawFloor), measureFloor(of, key, ca));
      }
    }
    rows.push(...figures.map((f) => row(f, floors)));
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const header: Row = {
  bench: 'bench',
  figure: 'figure',
  value: 'value',
  floor: 'floor (same run)',
  ratio: 'value ÷ floor',
  p50: 'p50 ms',
  p95: 'p95 ms',
};
const columns = Object.keys(header) as Array<keyof Row>;
const line = (r: Row) => `| ${columns.map((c) => r[c]).join(' | ')} |`;
console.log(
  `npm run bench: node ${process.version}, ${((performance.now() - started) / 1000).toFixed(0)} s, load average ${startLoad} at the start, ${load()} at the end`,
);
console.log(line(header));
console.log(`|${columns.map(() => ' --- ').join('|')}|`);
for (const r of rows) console.log(line(r));
