import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { applyDataPermissions, dataDirMode } from '../../src/volume/data-permissions.js';
import { VolumeError } from '../../src/volume/errors.js';
import { tempDir } from '../support/temp-dir.js';

const isRoot = process.getuid?.() === 0;

t.test('data dirs are 0550 for root and keep owner write otherwise', async (t) => {
  t.equal(dataDirMode(0), 0o550);
  t.equal(dataDirMode(1000), 0o750);
  t.equal(dataDirMode(), isRoot ? 0o550 : 0o750, 'defaults to the current user');
});

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
