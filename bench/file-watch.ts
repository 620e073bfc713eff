/**
 * File watching on the `status --watch` pattern: a data root with N volume dirs, each renewal
 * swapping `data/..data` (the atomic writer) and replacing metadata.json by rename. Compares the
 * fs.watch module (src/fs/directory-watcher.ts: the root and each volume dir) with chokidar 5
 * (`watch(root, { depth: 1 })`, the same reach), each in its own process:
 *   - setup: time until watching, RSS and heap it adds, file descriptors, inotify watches;
 *   - renewals one at a time (3 rounds over up to 100 volumes: a per-file watch that goes deaf
 *     after the first rename shows in rounds 2 and 3): events per renewal, metadata.json
 *     renewals not seen within 2 s, latency from the rename to its first event;
 *   - a burst (every volume renewed at once): volumes not seen within 10 s, time to the last.
 * Then the single-file facts: three kubelet-style rotations of a dir, watched at one file and
 * at the dir, by fs.watch and by chokidar.
 *
 *   npm install --prefix /tmp/chokidar5 chokidar@^5   # not a dependency (see bench/README.md)
 *   npm run bench:file-watch -- --chokidar /tmp/chokidar5/node_modules/chokidar [--volumes 100,1000]
 *   npm run bench:file-watch -- --watchers fs.watch      # our module only, no chokidar needed
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, watch as fsWatch, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { writeAtomically } from '../src/fs/atomic-writer.js';
import { watchDirectory } from '../src/fs/directory-watcher.js';
import { type Figure, recordFigures } from './support/figures.js';

type Name = 'fs.watch' | 'chokidar';

/** A running watch: every raw event it reports, as a path. */
interface Running {
  close(): Promise<void> | void;
}

interface Result {
  name: Name;
  volumes: number;
  setupMs: number;
  rssMiB: number;
  heapMiB: number;
  fds: number;
  inotifyWatches: number;
  renewals: number;
  eventsPerRenewal: number;
  missed: number;
  missedByRound: number[];
  latencyP50Ms: number;
  latencyP95Ms: number;
  latencyP99Ms: number;
  burstMissed: number;
  burstLastMs: number;
  cpuMs: number;
}

const { values } = parseArgs({
  options: {
    volumes: { type: 'string', default: '100,1000' },
    child: { type: 'string' },
    facts: { type: 'boolean', default: false },
    chokidar: { type: 'string' },
    watchers: { type: 'string', default: 'fs.watch,chokidar' },
  },
});
const watchers = values.watchers.split(',').map((name): Name => {
  if (name === 'fs.watch' || name === 'chokidar') return name;
  throw new Error(`--watchers: "${name.slice(0, 40)}" is neither fs.watch nor chokidar`);
});

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const bytes = (s: string) => new TextEncoder().encode(s);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

// chokidar is not a dependency (and node_modules holds tap's chokidar 4): the chokidar 5 this
// bench compares is installed apart and named with --chokidar.
async function loadChokidar(): Promise<ChokidarModule> {
  const dir = values.chokidar;
  if (dir === undefined) {
    throw new Error(
      'name a chokidar 5 install: npm install --prefix /tmp/chokidar5 chokidar@^5, then --chokidar /tmp/chokidar5/node_modules/chokidar',
    );
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    version: string;
    main?: string;
  };
  const chokidar = (await import(
    pathToFileURL(join(dir, manifest.main ?? 'index.js')).href
  )) as ChokidarModule;
  return Object.assign(Object.create(chokidar) as ChokidarModule, { version: manifest.version });
}

/** The part of chokidar's API used here, and the version loaded. */
interface ChokidarModule {
  version?: string;
  watch(
    path: string,
    options: Record<string, unknown>,
  ): {
    on(event: 'all', listener: (event: string, path: string) => void): unknown;
    on(event: 'ready', listener: () => void): unknown;
    on(event: 'error', listener: (err: unknown) => void): unknown;
    close(): Promise<void>;
  };
}

async function startWatch(
  name: Name,
  root: string,
  onEvent: (path: string) => void,
): Promise<Running> {
  if (name === 'fs.watch') {
    // The module as status --watch uses it; its fs.watch seam reports each raw event's path.
    const watch = watchDirectory({
      root,
      subdirectories: true,
      onChange: () => {},
      watchDir: (path, listener) =>
        fsWatch(path, { persistent: false }, (_event, file) => {
          onEvent(join(path, file ?? ''));
          listener();
        }),
    });
    await watch.ready;
    return watch;
  }
  const chokidar = await loadChokidar();
  const watcher = chokidar.watch(root, { depth: 1, ignoreInitial: true });
  watcher.on('all', (_event, path) => onEvent(path));
  watcher.on('error', () => {});
  await new Promise<void>((resolve) => watcher.on('ready', resolve));
  return watcher;
}

function fdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

function inotifyWatches(): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    let link: string;
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (link !== 'anon_inode:inotify') continue;
    count += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('inotify wd:')).length;
  }
  return count;
}

function memory(): { rss: number; heap: number } {
  globalThis.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heap: heapUsed };
}

// A new generation in dataDir, `..data` swapped to it: what a renewal writes.
async function writeData(dataDir: string, round: number): Promise<void> {
  await writeAtomically(dataDir, {
    'ca.crt': bytes(`ca ${round}`),
    'tls.crt': bytes(`cert ${dataDir} ${round}`),
    'tls.key': bytes(`key ${dataDir} ${round}`),
  });
}

async function renewData(root: string, id: string, round: number): Promise<void> {
  await writeData(join(root, id, 'data'), round);
}

// metadata.json replaced by rename, as writeFileAtomic does; returns the time of the rename.
async function renewMetadata(root: string, id: string, round: number): Promise<number> {
  const path = join(root, id, 'metadata.json');
  const temp = join(root, id, `.metadata.json.tmp-${round}`);
  await writeFile(temp, JSON.stringify({ volumeId: id, round }));
  const at = performance.now();
  await rename(temp, path);
  return at;
}

async function child(name: Name, volumes: number): Promise<Result> {
  const dir = await mkdtemp(join(base, 'cert-csi-bench-watch-'));
  const root = join(dir, 'volumes');
  const ids = Array.from({ length: volumes }, (_, i) => `csi-${String(i).padStart(5, '0')}`);
  await mkdir(root);
  for (const id of ids) {
    await mkdir(join(root, id, 'data'), { recursive: true });
    await renewData(root, id, 0);
    await renewMetadata(root, id, 0);
  }

  // Events by volume: count, and the time of the first metadata.json event since the mark.
  const counts = new Map<string, number>();
  const metadataSeen = new Map<string, number>();
  const onEvent = (path: string) => {
    const [id, file] = relative(root, path).split(sep);
    if (id === undefined) return;
    counts.set(id, (counts.get(id) ?? 0) + 1);
    if (file === 'metadata.json' && !metadataSeen.has(id)) metadataSeen.set(id, performance.now());
  };

  const before = memory();
  const fdsBefore = fdCount();
  const started = performance.now();
  const running = await startWatch(name, root, onEvent);
  const setupMs = performance.now() - started;
  await sleep(200);
  const after = memory();
  const fds = fdCount() - fdsBefore;
  const watches = inotifyWatches();

  const cpuBefore = process.cpuUsage();
  // One renewal at a time, three rounds over the same sample.
  const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(volumes / 100)) === 0);
  const latencies: number[] = [];
  const missedByRound: number[] = [];
  let events = 0;
  for (let round = 1; round <= 3; round++) {
    let missed = 0;
    for (const id of sample) {
      counts.delete(id);
      metadataSeen.delete(id);
      await renewData(root, id, round);
      const renamed = await renewMetadata(root, id, round);
      const deadline = performance.now() + 2000;
      while (!metadataSeen.has(id) && performance.now() < deadline) await sleep(2);
      const seen = metadataSeen.get(id);
      if (seen === undefined) missed++;
      else latencies.push(Math.max(0, seen - renamed));
      // Late events (chokidar's atomic-rename delay is 100 ms) still count for this renewal.
      await sleep(150);
      events += counts.get(id) ?? 0;
    }
    missedByRound.push(missed);
  }

  // Every volume renewed at once.
  counts.clear();
  metadataSeen.clear();
  const burstStart = performance.now();
  for (const id of ids) {
    await renewData(root, id, 9);
    await renewMetadata(root, id, 9);
  }
  const burstDeadline = performance.now() + 10_000;
  while (metadataSeen.size < volumes && performance.now() < burstDeadline) await sleep(10);
  const burstLastMs = Math.max(...metadataSeen.values(), burstStart) - burstStart;
  const cpu = process.cpuUsage(cpuBefore);

  await running.close();
  await rm(dir, { recursive: true, force: true });
  const renewals = sample.length * 3;
  return {
    name,
    volumes,
    setupMs,
    rssMiB: (after.rss - before.rss) / 2 ** 20,
    heapMiB: (after.heap - before.heap) / 2 ** 20,
    fds,
    inotifyWatches: watches,
    renewals,
    eventsPerRenewal: events / renewals,
    missed: missedByRound.reduce((a, b) => a + b, 0),
    missedByRound,
    latencyP50Ms: percentile(latencies, 50),
    latencyP95Ms: percentile(latencies, 95),
    latencyP99Ms: percentile(latencies, 99),
    burstMissed: volumes - metadataSeen.size,
    burstLastMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

/** Three kubelet-style rotations of one dir, watched at a file and at the dir. */
async function facts(): Promise<string[]> {
  const chokidar = await loadChokidar();
  const dir = await mkdtemp(join(base, 'cert-csi-bench-facts-'));
  const lines: string[] = [];
  const rotate = (n: number) => writeData(dir, n);
  await rotate(0);
  const file = join(dir, 'tls.crt');
  const tallies: Record<string, number[]> = {
    'fs.watch(file)': [0, 0, 0],
    'fs.watch(dir), ..data events': [0, 0, 0],
    'chokidar.watch(file)': [0, 0, 0],
    'chokidar.watch(dir), tls.crt events': [0, 0, 0],
    'chokidar.watch(dir), any event': [0, 0, 0],
  };
  let round = 0;
  const bump = (key: string) => {
    const tally = tallies[key];
    if (tally) tally[round] = (tally[round] ?? 0) + 1;
  };
  const onFile = fsWatch(file, () => bump('fs.watch(file)'));
  onFile.on('error', () => {});
  const onDir = fsWatch(dir, (_event, name) => {
    if (name === '..data') bump('fs.watch(dir), ..data events');
  });
  const chokFile = chokidar.watch(file, { ignoreInitial: true });
  chokFile.on('all', () => bump('chokidar.watch(file)'));
  const chokDir = chokidar.watch(dir, { ignoreInitial: true, depth: 0 });
  chokDir.on('all', (_event, path) => {
    bump('chokidar.watch(dir), any event');
    if (path === file) bump('chokidar.watch(dir), tls.crt events');
  });
  await Promise.all(
    [chokFile, chokDir].map((w) => new Promise<void>((resolve) => w.on('ready', resolve))),
  );
  for (round = 0; round < 3; round++) {
    await rotate(round + 1);
    await sleep(500);
  }
  onFile.close();
  onDir.close();
  await chokFile.close();
  await chokDir.close();
  await rm(dir, { recursive: true, force: true });
  for (const [what, tally] of Object.entries(tallies)) {
    lines.push(`| ${what} | ${tally.join(' | ')} |`);
  }
  return lines;
}

function runChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`child ${args.join(' ')} exited ${code}`)),
    );
  });
}

const round1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

if (values.child !== undefined) {
  const [name, count] = values.child.split(':');
  const result = await child(name as Name, Number(count));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else if (values.facts) {
  process.stdout.write(`${(await facts()).join('\n')}\n`);
} else {
  const withChokidar = watchers.includes('chokidar');
  const version = withChokidar ? (await loadChokidar()).version : 'not loaded';
  const chokidarArgs = withChokidar ? ['--chokidar', values.chokidar ?? ''] : [];
  const figures: Figure[] = [];
  console.log(
    `node ${process.version}, chokidar ${version}, data root on ${base}, ${execFileSync('nproc').toString().trim()} cores`,
  );
  console.log(
    '| watcher | volume dirs | setup ms | RSS MiB | heap MiB | fds | inotify watches | events/renewal | missed (rounds 1/2/3) | latency p50/p99 ms | burst missed | burst last ms | CPU ms |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const volumes of values.volumes.split(',').map(Number)) {
    for (const name of watchers) {
      const r = JSON.parse(
        await runChild(['--child', `${name}:${volumes}`, ...chokidarArgs]),
      ) as Result;
      figures.push(
        {
          name: `${name}, ${volumes} volume dirs: rename to first event`,
          value: r.latencyP50Ms,
          unit: 'ms',
          p50: r.latencyP50Ms,
          p95: r.latencyP95Ms,
        },
        {
          name: `${name}, ${volumes} volume dirs: renewals missed`,
          value: r.missed,
          unit: 'missed',
        },
      );
      console.log(
        `| ${r.name} | ${r.volumes} | ${Math.round(r.setupMs)} | ${round1(r.rssMiB)} | ${round1(r.heapMiB)} | ${r.fds} | ${r.inotifyWatches} | ${round1(r.eventsPerRenewal)} | ${r.missed} (${r.missedByRound.join('/')}) of ${r.renewals} | ${round1(r.latencyP50Ms)} / ${round1(r.latencyP99Ms)} | ${r.burstMissed} | ${Math.round(r.burstLastMs)} | ${Math.round(r.cpuMs)} |`,
      );
    }
  }
  recordFigures('file-watch', figures);
  if (withChokidar) {
    console.log('\n| kubelet-style rotation watched by | rotation 1 | rotation 2 | rotation 3 |');
    console.log('| --- | --- | --- | --- |');
    console.log((await runChild(['--facts', ...chokidarArgs])).trimEnd());
  }
}
