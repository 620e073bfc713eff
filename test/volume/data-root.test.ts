import { mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { dataDirMode } from '../../src/volume/data-permissions.js';
import { DataRoot, VolumeFile } from '../../src/volume/data-root.js';
import { VolumeError } from '../../src/volume/errors.js';
import { tempDir } from '../support/temp-dir.js';

const ID = `csi-${'0f'.repeat(32)}`;
const mode = async (path: string) => (await stat(path)).mode & 0o7777;

t.test('lays out one dir per volume under an absolute root', async (t) => {
  const root = new DataRoot('relative/root');
  t.ok(root.root.startsWith('/'), 'relative roots are resolved');
  const r = new DataRoot('/data');
  t.equal(r.volumeDir(ID), `/data/${ID}`);
  t.equal(r.metadataPath(ID), `/data/${ID}/metadata.json`);
  t.equal(r.dataDir(ID), `/data/${ID}/data`);
  t.equal(r.pendingKeyPath(ID), `/data/${ID}/pending.key`);
  t.equal(r.secretsPath(ID), `/data/${ID}/pkcs12-password`);
  t.equal(r.jksPasswordPath(ID), `/data/${ID}/jks-password`);
  t.same(VolumeFile, {
    metadata: 'metadata.json',
    data: 'data',
    pendingKey: 'pending.key',
    pkcs12Password: 'pkcs12-password',
    jksPassword: 'jks-password',
  });
});

t.test('every path rejects unsafe volume ids', async (t) => {
  const r = new DataRoot('/data');
  for (const fn of [
    r.volumeDir,
    r.metadataPath,
    r.dataDir,
    r.pendingKeyPath,
    r.secretsPath,
    r.jksPasswordPath,
  ] as const) {
    t.throws(() => fn.call(r, '../escape'), VolumeError);
  }
  await t.rejects(r.ensureVolume('..'), VolumeError);
  await t.rejects(r.removeVolume('a/b'), VolumeError);
});

t.test('ensure creates the root 0700, nested and idempotent', async (t) => {
  const path = join(await tempDir(t), 'a', 'b');
  const r = new DataRoot(path);
  await r.ensure();
  await r.ensure();
  t.equal(await mode(path), 0o700);
});

t.test('ensure fails with the root named when a file is in the way', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'file'), '');
  const r = new DataRoot(join(dir, 'file', 'root'));
  await t.rejects(r.ensure(), {
    name: 'VolumeError',
    message: /cannot create data root .*file\/root/,
  });
});

t.test('listVolumeIds returns valid volume dirs only, sorted', async (t) => {
  const dir = await tempDir(t);
  const r = new DataRoot(join(dir, 'root'));
  t.same(await r.listVolumeIds(), [], 'a missing root has no volumes');
  await r.ensure();
  for (const name of ['vol-b', 'vol-a', '..2026_01_01', 'bad name', '.']) {
    await mkdir(join(r.root, name), { recursive: true });
  }
  await writeFile(join(r.root, 'vol-file'), 'not a dir');
  await symlink(join(r.root, 'vol-a'), join(r.root, 'vol-link'));
  t.same(await r.listVolumeIds(), ['vol-a', 'vol-b']);
});

t.test('listVolumeIds fails naming the root when it cannot be read', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'root'), '');
  await t.rejects(new DataRoot(join(dir, 'root')).listVolumeIds(), {
    name: 'VolumeError',
    message: /cannot list data root .*root: ENOTDIR/,
  });
});

t.test('ensureVolume creates the volume dir 0700 and data 0550 with the group', async (t) => {
  const r = new DataRoot(join(await tempDir(t), 'root'));
  await r.ensure();
  await r.ensureVolume(ID);
  t.equal(await mode(r.volumeDir(ID)), 0o700);
  t.equal(await mode(r.dataDir(ID)), dataDirMode());
  const gid = process.getuid?.() === 0 ? 2000 : (process.getgid?.() ?? 0);
  await r.ensureVolume(ID, gid);
  t.equal((await stat(r.dataDir(ID))).gid, gid, 'idempotent, and sets the group');
  t.equal(await mode(r.dataDir(ID)), dataDirMode());
});

t.test('ensureVolume errors carry the volume id', async (t) => {
  const r = new DataRoot(join(await tempDir(t), 'root'));
  await r.ensure();
  await writeFile(r.volumeDir(ID), 'a file');
  const err = await r.ensureVolume(ID).catch((e: unknown) => e);
  t.type(err, VolumeError);
  t.equal((err as VolumeError).volumeId, ID);
  t.match((err as Error).message, `cannot create volume ${ID} in ${r.root}`);
});

t.test('hasVolume and removeVolume', async (t) => {
  const r = new DataRoot(join(await tempDir(t), 'root'));
  await r.ensure();
  t.equal(await r.hasVolume(ID), false);
  t.equal(await r.removeVolume(ID), false, 'removing a missing volume is not an error');
  await r.ensureVolume(ID);
  await writeFile(join(r.dataDir(ID), 'tls.crt'), 'x');
  t.equal(await r.hasVolume(ID), true);
  t.equal(await r.removeVolume(ID), true);
  t.equal(await r.hasVolume(ID), false);
  t.same(await r.listVolumeIds(), []);
});

t.test('hasVolume fails naming the dir when it cannot stat', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'root'), '');
  const r = new DataRoot(join(dir, 'root'));
  await t.rejects(r.hasVolume(ID), {
    name: 'VolumeError',
    volumeId: ID,
    message: /cannot stat volume dir/,
  });
  await t.rejects(r.removeVolume(ID), { name: 'VolumeError', volumeId: ID });
});
