import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  applyDataPermissions,
  dataDirMode,
  hasDataPermissions,
} from '../../src/volume/data-permissions.js';
import { VolumeError } from '../../src/volume/errors.js';
import { tempDir } from '../support/temp-dir.js';

const isRoot = process.getuid?.() === 0;

t.test('data dirs are 0550 for root and keep owner write otherwise', async (t) => {
  t.equal(dataDirMode(0), 0o550);
  t.equal(dataDirMode(1000), 0o750);
  t.equal(dataDirMode(), isRoot ? 0o550 : 0o750, 'defaults to the current user');
});

t.test(
  'hasDataPermissions: the exact mode, and the group only when one is asked for',
  async (t) => {
    const dir = 0o040000;
    const cases: Array<
      [string, { mode: number; gid: number }, number | undefined, number, boolean]
    > = [
      ['same mode, no group asked', { mode: dir | 0o550, gid: 7 }, undefined, 0o550, true],
      ['same mode and group', { mode: dir | 0o550, gid: 7 }, 7, 0o550, true],
      ['another group', { mode: dir | 0o550, gid: 7 }, 8, 0o550, false],
      ['a wider mode', { mode: dir | 0o750, gid: 7 }, undefined, 0o550, false],
      ['a narrower mode', { mode: dir | 0o500, gid: 7 }, 7, 0o550, false],
      ['setgid set by someone', { mode: dir | 0o2550, gid: 7 }, 7, 0o550, false],
      ['sticky bit set by someone', { mode: dir | 0o1550, gid: 7 }, undefined, 0o550, false],
    ];
    for (const [what, stats, gid, mode, expected] of cases) {
      t.equal(hasDataPermissions(stats, gid, mode), expected, what);
    }
    t.equal(
      hasDataPermissions({ mode: dir | dataDirMode(), gid: 0 }, undefined),
      true,
      'default mode',
    );
  },
);

t.test('sets mode and, when given, the group', async (t) => {
  const dir = join(await tempDir(t), 'data');
  await mkdir(dir);
  await applyDataPermissions(dir);
  t.equal((await stat(dir)).mode & 0o7777, dataDirMode());
  await applyDataPermissions(dir, undefined, 0o500);
  t.equal((await stat(dir)).mode & 0o7777, 0o500);
  const gid = isRoot ? 4321 : (process.getgid?.() ?? 0);
  await applyDataPermissions(dir, gid);
  const info = await stat(dir);
  t.equal(info.gid, gid, 'group set');
  t.equal(info.uid, process.getuid?.(), 'owner unchanged (chown -1)');
});

t.test('errors name the dir, mode and group', async (t) => {
  const missing = join(await tempDir(t), 'missing');
  await t.rejects(applyDataPermissions(missing, 42), VolumeError);
  await t.rejects(applyDataPermissions(missing, 42), {
    message: new RegExp(`cannot set mode 550|750 and group 42 on ${missing}: ENOENT`),
  });
  await t.rejects(applyDataPermissions(missing), { message: /cannot set mode \d+ on .*missing/ });
});
