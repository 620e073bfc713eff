// `npm run build:test` runs this after tsc: it writes build/test-groups/*.test.js, the files tap
// runs in `npm test`. Each imports a few compiled test files of one folder, one after another,
// into one process. Why: a test process costs about 1 s of CPU before its first assertion
// (Node, tap and its plugins, source maps, the coverage dump), and most of our ~270 files
// need less than that for their tests; measured on 40 small files, 42.8 s of CPU one process each
// against 6.8 s in one process, the same 870 assertions. The crash trials are among them, so
// one tap run keeps both cores busy from the first file to the last.
// A single file still runs by itself as before: `npx tap build/test/<dir>/<file>.test.js`.
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Test files (under test/, without extension) that run in a process of their own because they
 * assert process-wide state (who listens to the telemetry facts) that an earlier file of a
 * shared process would still hold, as its root-level teardowns run only when the process ends.
 */
export const ISOLATED: ReadonlySet<string> = new Set(['observability/node-metrics-embedded']);

/**
 * How long each slow test file (under test/, without extension; `.trial` for the crash trials)
 * holds one of tap's two job slots, in seconds: tap's `# time=` for the file in a quiet
 * `npm test` on a 2-core machine (2026-11-28). Files not listed count LIGHT_SECONDS. Only
 * the packing and the order use these: a wrong figure costs speed, never a result.
 */
export const SLOT_SECONDS: ReadonlyMap<string, number> = new Map([
  ['kubernetes/controller-crash-1.trial', 25],
  ['kubernetes/controller-crash-2.trial', 23],
  ['kubernetes/controller-crash-3.trial', 23],
  ['kubernetes/controller-crash-4.trial', 26],
  ['kubernetes/controller-crash-5.trial', 25],
  ['volume-manager/crash-safety-1.trial', 20],
  ['volume-manager/crash-safety-2.trial', 21],
  ['volume-manager/crash-safety-3.trial', 22],
  ['volume-manager/crash-safety-4.trial', 20],
  ['volume-manager/crash-safety-5.trial', 17],
  ['cli/single-instance.trial', 14],
  ['volume-manager/crash-after-signing.trial', 10],
  ['kubernetes/cluster-faults', 19],
  ['docs/runnable-blocks', 17],
  ['volume-manager/renewal-timers', 18],
  ['plugin/data-root-medium', 17],
  ['plugin/publish-races', 16],
  ['kubernetes/controller-election', 16],
  ['volume-manager/restart-rediscovery', 15],
  ['kubernetes/rbac-removals-controller-cert-manager', 14],
  ['volume-manager/due-at-once', 13],
  ['kubernetes/rbac-removals-node-trust-bundles', 13],
  ['admission/webhook/webhook-attack-slow-bodies', 13],
  ['cli/publish-outcomes', 12],
  ['cli/odd-state-files', 12],
  ['kubernetes/rbac-removals-controller-kubernetes-signing', 11],
  ['plugin/csi-driver-cases', 10],
  ['kubernetes/cluster-certificates', 10],
  ['cli/issuer-ca-loss', 10],
  ['kubernetes/rbac-removals-node-requests', 9],
  ['kubernetes/pod-certificate-versions', 9],
  ['kubernetes/cluster-issuance', 9],
  ['cli/odd-renew-files', 9],
  ['cli/cli', 9],
  ['kubernetes/pod-certificates-in-cluster', 8],
  ['cli/controllers-flag', 8],
  ['cli/cluster-commands', 8],
  ['deploy/rendered-install', 7],
  ['plugin/target-safety', 7],
  ['plugin/publish-behaviour', 7],
  ['pki/pkcs12', 7],
  ['pki/keys', 7],
  ['cli/renew-status', 7],
  ['cli/embedded-certificates', 7],
  ['volume-manager/resumable-key', 6],
  ['cli/certificate-commands', 6],
  ['kubernetes/trust-bundle', 5],
  ['kubernetes/rbac-webhook', 5],
  ['kubernetes/rbac', 5],
  ['kubernetes/csr-in-cluster', 5],
  ['kubernetes/cluster-watch-expiry', 5],
  ['plugin/reload-http', 5],
  ['volume-manager/renewal-consistency', 4],
  ['plugin/issuance-deadline', 4],
  ['observability/controller-metrics-cluster', 4],
  ['kubernetes/webhook-in-cluster', 4],
  ['kubernetes/cluster-token-request', 4],
  ['kubernetes/cluster-ca-volumes', 4],
  ['kubernetes/cluster-reload-signal', 4],
  ['pki/pod-certificate-key', 4],
  // Measured alone on 2026-11-29: it starts five helper processes and one parent of its own.
  ['fs/command-helper', 4],
  ['fs/atomic-writer', 3],
  ['cli/webhook-command', 3],
  ['cli/embedded-ca-loss', 3],
]);

/** What a file SLOT_SECONDS does not list is taken to need. */
export const LIGHT_SECONDS = 1.5;

/**
 * The files of one folder share a process up to this many seconds of SLOT_SECONDS; a file
 * over it runs alone. Fewer processes save start-up (a test process costs ~1 s of CPU before its
 * first assertion): 48 s makes 40 groups (36 s made 45, 24 s 58), and `npm test` on a fresh
 * clone took 337 s against 368 s at 36 s, back to back (2026-11-29); small enough that two
 * slots stay busy to the end. A group's timeout grows with its files (groupSource), so a larger
 * group is no nearer tap's per-file timeout on a loaded machine.
 */
export const GROUP_SECONDS = 48;

/** A file tap runs: its name under build/test-groups and the compiled test files it imports. */
export interface TestGroup {
  name: string;
  files: string[];
}

/** A compiled test file's id: its path under test/ without `.test.js` (`.trial` kept). */
export function fileId(file: string): string {
  return file.replace(/\.test\.js$/, '').replace(/\.js$/, '');
}

/** Seconds the file holds a job slot (SLOT_SECONDS, or LIGHT_SECONDS). */
export function slotSeconds(file: string): number {
  return SLOT_SECONDS.get(fileId(file)) ?? LIGHT_SECONDS;
}

/**
 * The groups for the compiled test files (paths relative to build/test: `.test.js` and the
 * crash `.trial.js`): the files of each folder packed first-fit, slowest first, into processes
 * of at most groupSeconds (GROUP_SECONDS unless a test gives another); each ISOLATED file
 * alone. Groups are named `<rank>-<folder>-<n>`, ranked slowest first: tap starts files in
 * name order, and starting the longest first keeps both slots busy until the end instead of
 * leaving one long file running alone.
 */
export function testGroups(files: readonly string[], groupSeconds = GROUP_SECONDS): TestGroup[] {
  const bins = new Map<string, { files: string[]; seconds: number }[]>();
  const byWeight = [...files].sort((a, b) => slotSeconds(b) - slotSeconds(a) || a.localeCompare(b));
  for (const file of byWeight) {
    const folder = dirname(file) === '.' ? 'root' : dirname(file).replaceAll('/', '-');
    const seconds = slotSeconds(file);
    const folderBins = bins.get(folder) ?? [];
    bins.set(folder, folderBins);
    const shared = ISOLATED.has(fileId(file))
      ? undefined
      : folderBins.find(
          (bin) =>
            bin.seconds + seconds <= groupSeconds &&
            !bin.files.some((f) => ISOLATED.has(fileId(f))),
        );
    if (shared) {
      shared.files.push(file);
      shared.seconds += seconds;
    } else {
      folderBins.push({ files: [file], seconds });
    }
  }
  const unranked = [...bins].flatMap(([folder, folderBins]) =>
    folderBins.map((bin, i) => ({
      name: `${folder}-${i + 1}`,
      files: [...bin.files].sort(),
      seconds: bin.seconds,
    })),
  );
  unranked.sort((a, b) => b.seconds - a.seconds || a.name.localeCompare(b.name));
  const width = String(unranked.length).length;
  return unranked.map((group, rank) => ({
    name: `${String(rank + 1).padStart(width, '0')}-${group.name}`,
    files: group.files,
  }));
}

/**
 * The entry file of a group: its test files imported one after another inside a first subtest.
 * While that subtest runs, the files' own tests queue behind it: tap would otherwise end the
 * process once it idles with nothing queued (after any file added a root teardown) while the
 * next file's modules are still loading. The group's timeout is tap's per-file timeout (.taprc,
 * TAP_TIMEOUT in seconds, 0 for none) once per file it holds: packing files into one process
 * must not shrink the time each one had alone, or a loaded machine fails a group of files that
 * each finish well inside their own budget.
 */
export function groupSource(group: TestGroup): string {
  const imports = group.files.map(
    (file) => `  await import(${JSON.stringify(`../test/${file}`)});`,
  );
  return [
    '// Generated by tools/test-groups.ts (npm run build:test).',
    "import t from 'tap';",
    // tap's own reading of TAP_TIMEOUT: unset or empty is its default, 30.
    `t.setTimeout(Number(process.env.TAP_TIMEOUT || 30) * 1000 * ${group.files.length});`,
    `t.test(${JSON.stringify(`load ${group.files.join(', ')}`)}, async () => {`,
    ...imports,
    '});',
    '',
  ].join('\n');
}

async function testFiles(root: string, dir = root): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await testFiles(root, path)));
    else if (/\.(test|trial)\.js$/.test(entry.name)) found.push(relative(root, path));
  }
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const build = fileURLToPath(new URL('..', import.meta.url));
  const out = join(build, 'test-groups');
  await rm(out, { recursive: true, force: true });
  await mkdir(out);
  const groups = testGroups(await testFiles(join(build, 'test')));
  for (const group of groups) {
    await writeFile(join(out, `${group.name}.test.js`), groupSource(group));
  }
  process.stdout.write(`wrote ${groups.length} test groups into ${relative('.', out)}\n`);
}
