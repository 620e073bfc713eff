import { existsSync } from 'node:fs';
import t from 'tap';
import { GROUP_SIZE, groupSource, RUN_ALONE, testGroups } from '../../tools/test-groups.js';

const light = (folder: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${folder}/f${String(i).padStart(2, '0')}.test.js`);

t.test(
  'light files of a folder share processes, in name order, GROUP_SIZE at a time',
  async (t) => {
    const files = light('store', GROUP_SIZE + 2).reverse();
    const groups = testGroups(files);
    t.same(
      groups.map((g) => g.name),
      ['store-1', 'store-2'],
    );
    t.same(groups[0]?.files, light('store', GROUP_SIZE));
    t.same(groups[1]?.files, light('store', GROUP_SIZE + 2).slice(GROUP_SIZE));
  },
);

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
      groups.map((g) => [g.name, g.files]),
      [
        ['api-1', ['api/a.test.js']],
        ['base-1', ['base/b.test.js']],
        ['root-1', ['d.test.js']],
        ['volume-target-1', ['volume/target/c.test.js']],
      ],
    );
  },
);

t.test('a heavy file runs alone, the light ones of its folder still group', async (t) => {
  const groups = testGroups(['fs/atomic-writer.test.js', 'fs/a.test.js', 'fs/b.test.js']);
  t.same(
    groups.map((g) => [g.name, g.files]),
    [
      ['fs-1', ['fs/a.test.js', 'fs/b.test.js']],
      ['fs-atomic-writer', ['fs/atomic-writer.test.js']],
    ],
  );
});

t.test('every file is run exactly once', async (t) => {
  const files = [...light('cli', 12), 'cli/cli.test.js', ...light('pki', 3), 'pki/keys.test.js'];
  const run = testGroups(files).flatMap((g) => g.files);
  t.same(run.sort(), [...files].sort());
});

t.test('each file the heavy list names exists, so a rename cannot leave it stale', async (t) => {
  for (const id of RUN_ALONE) {
    t.ok(existsSync(new URL(`../../../test/${id}.test.ts`, import.meta.url)), id);
  }
});

t.test('a group imports its files in order, inside one first subtest', async (t) => {
  const source = groupSource({ name: 'api-1', files: ['api/a.test.js', 'api/b.test.js'] });
  const a = source.indexOf('await import("../test/api/a.test.js");');
  const b = source.indexOf('await import("../test/api/b.test.js");');
  t.ok(a > source.indexOf('t.test('), 'the imports run inside the subtest');
  t.ok(b > a, 'in the given order');
  t.match(source, /^import t from 'tap';$/m);
});
