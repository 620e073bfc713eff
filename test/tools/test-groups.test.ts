import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import {
  fileId,
  GROUP_SECONDS,
  groupSource,
  ISOLATED,
  LIGHT_SECONDS,
  SLOT_SECONDS,
  testGroups,
} from '../../tools/test-groups.js';
import { projectPath } from '../support/project-files.js';
import { tempDir } from '../support/temp-dir.js';

const light = (folder: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${folder}/f${String(i).padStart(2, '0')}.test.js`);
const perGroup = Math.floor(GROUP_SECONDS / LIGHT_SECONDS);
const strip = (name: string) => name.replace(/^\d+-/, '');

t.test('light files of a folder share processes, up to GROUP_SECONDS each', async (t) => {
  const files = light('store', perGroup + 2).reverse();
  const groups = testGroups(files);
  t.same(
    groups.map((g) => strip(g.name)),
    ['store-1', 'store-2'],
  );
  t.same(groups[0]?.files, light('store', perGroup));
  t.same(groups[1]?.files, light('store', perGroup + 2).slice(perGroup));
});

t.test(
  'folders never share a process; nested folders and the root get their own names',
  async (t) => {
    const groups = testGroups([
      'api/a.test.js',
      'base/b.test.js',
      'volume/target/c.test.js',
      'd.test.js',
    ]);
    t.same(
      groups.map((g) => [strip(g.name), g.files]),
      [
        ['api-1', ['api/a.test.js']],
        ['base-1', ['base/b.test.js']],
        ['root-1', ['d.test.js']],
        ['volume-target-1', ['volume/target/c.test.js']],
      ],
    );
  },
);

t.test(
  'a slow file fills its process with light ones; one over the limit runs alone',
  async (t) => {
    // A limit below the slowest file's figure: with the real one no file may be over it.
    const limit = 20;
    t.ok(
      (SLOT_SECONDS.get('kubernetes/controller-crash-4.trial') ?? 0) > limit,
      'an over-limit file',
    );
    const medium = SLOT_SECONDS.get('cli/publish-outcomes') ?? 0;
    t.ok(medium < limit - LIGHT_SECONDS, 'a slow file with room beside it');
    const groups = testGroups(
      [
        'kubernetes/controller-crash-4.trial.js',
        'kubernetes/a.test.js',
        'cli/publish-outcomes.test.js',
        ...light('cli', 8),
      ],
      limit,
    );
    const byFile = new Map(groups.flatMap((g) => g.files.map((f) => [f, g])));
    t.same(byFile.get('kubernetes/controller-crash-4.trial.js')?.files, [
      'kubernetes/controller-crash-4.trial.js',
    ]);
    t.same(byFile.get('kubernetes/a.test.js')?.files, ['kubernetes/a.test.js']);
    const withSlow = byFile.get('cli/publish-outcomes.test.js');
    t.equal(
      withSlow?.files.length,
      1 + Math.floor((limit - medium) / LIGHT_SECONDS),
      'light files fill the room the slow one leaves',
    );
    for (const group of groups) {
      const seconds = group.files.reduce(
        (sum, f) => sum + (SLOT_SECONDS.get(fileId(f)) ?? LIGHT_SECONDS),
        0,
      );
      t.ok(group.files.length === 1 || seconds <= limit, `${group.name}: ${seconds} s`);
    }
  },
);

t.test('an isolated file runs alone, whatever room its process would have', async (t) => {
  const [isolated] = ISOLATED;
  t.ok(isolated);
  const groups = testGroups([`${isolated}.test.js`, 'observability/a.test.js']);
  t.same(
    groups.map((g) => g.files).sort(),
    [[`${isolated}.test.js`], ['observability/a.test.js']].sort(),
  );
});

t.test('groups are named slowest first, so tap starts the longest ones first', async (t) => {
  const groups = testGroups([
    ...light('api', 2),
    'volume-manager/crash-safety-1.trial.js',
    'kubernetes/cluster-faults.test.js',
    'cli/cli.test.js',
  ]);
  t.same(
    groups.map((g) => g.name),
    ['1-volume-manager-1', '2-kubernetes-1', '3-cli-1', '4-api-1'],
  );
  t.same(
    groups.map((g) => g.name),
    groups.map((g) => g.name).sort((a, b) => a.localeCompare(b, 'en')),
    "tap's order (names compared as tap compares them) is the rank",
  );
  const many = testGroups(Array.from({ length: 12 }, (_, i) => `f${i}/a.test.js`));
  t.equal(many[0]?.name.slice(0, 3), '01-', 'ranks are zero-padded to sort as numbers');
});

t.test('every file is run exactly once, the crash trials included', async (t) => {
  const files = [
    ...light('cli', 12),
    'cli/cli.test.js',
    'cli/single-instance.trial.js',
    ...light('pki', 3),
    'pki/keys.test.js',
  ];
  const run = testGroups(files).flatMap((g) => g.files);
  t.same(run.sort(), [...files].sort());
});

t.test('each file the lists name exists, so a rename cannot leave them stale', async (t) => {
  for (const id of [...ISOLATED, ...SLOT_SECONDS.keys()]) {
    const path = id.endsWith('.trial') ? `${id}.ts` : `${id}.test.ts`;
    t.ok(existsSync(new URL(`../../../test/${path}`, import.meta.url)), id);
  }
});

t.test('a group imports its files in order, inside one first subtest', async (t) => {
  const source = groupSource({ name: '1-api-1', files: ['api/a.test.js', 'api/b.test.js'] });
  const a = source.indexOf('await import("../test/api/a.test.js");');
  const b = source.indexOf('await import("../test/api/b.test.js");');
  t.ok(a > source.indexOf('t.test('), 'the imports run inside the subtest');
  t.ok(b > a, 'in the given order');
  t.match(source, /^import t from 'tap';$/m);
});

t.test(
  "a group's timeout is tap's per-file timeout once per file it holds, as each had alone",
  async (t) => {
    // Under node_modules/.cache so that the files' `import 'tap'` finds the project's tap.
    const cache = projectPath('node_modules', '.cache');
    await mkdir(cache, { recursive: true });
    const root = await tempDir(t, 'cert-csi-group-timeout-', cache);
    await mkdir(join(root, 'test-groups'));
    await mkdir(join(root, 'test', 'api'), { recursive: true });
    const files = ['api/a.test.js', 'api/b.test.js', 'api/c.test.js'];
    for (const file of files) {
      await writeFile(
        join(root, 'test', file),
        "import t from 'tap';\nt.test('timeout', async (t) => { t.comment(`root timeout ${t.parent?.options.timeout}`); });\n",
      );
    }
    const group = join(root, 'test-groups', '1-api-1.test.js');
    await writeFile(group, groupSource({ name: '1-api-1', files }));
    // TAP_TIMEOUT as .taprc sets it, and empty: tap's default of 30 s a file.
    for (const [timeout, wanted, what] of [
      ['7', '21000', 'three files of 7 s each: 21 s'],
      ['', '90000', "three files of tap's default 30 s each: 90 s"],
    ] as const) {
      const { stdout } = await promisify(execFile)(process.execPath, [group], {
        env: { ...process.env, TAP_TIMEOUT: timeout },
      });
      t.equal(
        [...stdout.matchAll(/# root timeout (\d+)/g)].map((m) => m[1]).join(),
        [wanted, wanted, wanted].join(),
        what,
      );
    }
  },
);
