import { mkdirSync, statfsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  ensureDirDurably,
  fsyncDir,
  isAtomicTempFile,
  removeFileDurably,
  renameDurably,
  writeFileAtomic,
} from '../../src/fs/atomic-file.js';
import { isOnTmpfs, TMPFS_MAGIC } from '../../src/fs/volatile-fs.js';
import { tempDir } from '../support/temp-dir.js';
import { countFsRequests } from '../volume/fixtures/fs-request-counter.js';
import { spyOnFsync } from '../volume/fixtures/fsync-spy.js';

const SHM = '/dev/shm';
const shmIsTmpfs = (() => {
  try {
    return statfsSync(SHM).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
})();

// Every exported operation once, in dir.
async function everyOperation(dir: string): Promise<void> {
  await writeFileAtomic(join(dir, 'f.json'), 'one');
  await writeFileAtomic(join(dir, 'f.json'), 'two');
  await ensureDirDurably(join(dir, 'x', 'y'));
  mkdirSync(join(dir, 'other'));
  await renameDurably(join(dir, 'f.json'), join(dir, 'other', 'g.json'));
  await removeFileDurably(join(dir, 'other', 'g.json'));
  await fsyncDir(dir);
}

t.test('writeFileAtomic replaces content and leaves no temp file', async (t) => {
  const dir = t.testdir({ 'f.json': 'old' });
  await writeFileAtomic(join(dir, 'f.json'), 'new');
  t.equal(await readFile(join(dir, 'f.json'), 'utf8'), 'new');
  await writeFileAtomic(join(dir, 'bytes'), new Uint8Array([1, 2, 3]), 0o640);
  t.same([...(await readFile(join(dir, 'bytes')))], [1, 2, 3]);
  t.equal((await stat(join(dir, 'bytes'))).mode & 0o777, 0o640);
  t.equal((await stat(join(dir, 'f.json'))).mode & 0o777, 0o600, 'private by default');
  t.same((await readdir(dir)).sort(), ['bytes', 'f.json']);
});

t.test('a failed rename removes the temp file', async (t) => {
  const dir = t.testdir({ target: { inside: 'x' } });
  await t.rejects(writeFileAtomic(join(dir, 'target'), 'data'));
  t.same(await readdir(dir), ['target'], 'only the directory that was in the way');
});

t.test('a missing directory fails', async (t) => {
  const dir = t.testdir();
  await t.rejects(writeFileAtomic(join(dir, 'missing', 'f'), 'data'), { code: 'ENOENT' });
});

t.test('temp names are recognisable', async (t) => {
  t.ok(isAtomicTempFile('.f.json.tmp-0123456789ab'));
  t.notOk(isAtomicTempFile('f.json'));
  t.notOk(isAtomicTempFile('.hidden'));
});

t.test('removeFileDurably', async (t) => {
  const dir = t.testdir({ f: 'x', sub: { g: 'y' } });
  t.equal(await removeFileDurably(join(dir, 'f')), true);
  t.equal(await removeFileDurably(join(dir, 'f')), false, 'already gone');
  await t.rejects(removeFileDurably(join(dir, 'sub')), 'a directory is an error');
});

t.test('renameDurably across directories', async (t) => {
  const dir = t.testdir({ a: { f: 'x' }, b: {} });
  await renameDurably(join(dir, 'a', 'f'), join(dir, 'b', 'f'));
  t.equal(await readFile(join(dir, 'b', 'f'), 'utf8'), 'x');
  await renameDurably(join(dir, 'b', 'f'), join(dir, 'b', 'g'));
  t.same(await readdir(join(dir, 'b')), ['g']);
});

t.test('ensureDirDurably creates missing parents, private', async (t) => {
  const dir = t.testdir();
  await ensureDirDurably(join(dir, 'x', 'y', 'z'));
  t.ok((await stat(join(dir, 'x', 'y', 'z'))).isDirectory());
  t.equal((await stat(join(dir, 'x'))).mode & 0o777, 0o700);
  await ensureDirDurably(join(dir, 'x', 'y', 'z'));
  await writeFile(join(dir, 'file'), '');
  await t.rejects(ensureDirDurably(join(dir, 'file', 'sub')));
});

t.test(
  'on tmpfs: no fsync, no thread-pool round trip, same files',
  { skip: !shmIsTmpfs && `${SHM} is not a tmpfs here` },
  async (t) => {
    const shm = await tempDir(t, 'cert-csi-atomic-', SHM);
    t.ok(isOnTmpfs(shm));
    const syncs = await spyOnFsync(t);
    const requests = countFsRequests(t);
    await everyOperation(shm);
    t.equal(requests.count, 0, 'all synchronous calls');
    t.equal(syncs.count, 0, 'no fsync on tmpfs');
    const disk = t.testdir();
    await everyOperation(disk);
    t.same(await readdir(shm), await readdir(disk));
    t.same(await readdir(join(shm, 'x')), ['y']);
    t.equal((await stat(join(shm, 'x', 'y'))).mode & 0o777, 0o700);
  },
);

t.test('on disk: every fsync, as before', async (t) => {
  const dir = t.testdir();
  if (isOnTmpfs(dir)) {
    t.pass('the repo is on tmpfs here', { skip: true });
    return;
  }
  const syncs = await spyOnFsync(t);
  const count = async (work: () => Promise<unknown>) => {
    const before = syncs.count;
    await work();
    return syncs.count - before;
  };
  t.equal(await count(() => writeFileAtomic(join(dir, 'f'), 'x')), 2, 'the file and its dir');
  t.equal(await count(() => ensureDirDurably(join(dir, 'x', 'y'))), 2, 'each new entry');
  t.equal(await count(() => ensureDirDurably(join(dir, 'x', 'y'))), 0, 'nothing new');
  t.equal(await count(() => renameDurably(join(dir, 'f'), join(dir, 'x', 'f'))), 2, 'both dirs');
  t.equal(await count(() => renameDurably(join(dir, 'x', 'f'), join(dir, 'x', 'g'))), 1);
  t.equal(await count(() => removeFileDurably(join(dir, 'x', 'g'))), 1);
  t.equal(await count(() => removeFileDurably(join(dir, 'x', 'g'))), 0, 'already gone');
  t.equal(await count(() => fsyncDir(dir)), 1);
  const requests = countFsRequests(t);
  await writeFileAtomic(join(dir, 'f'), 'x');
  t.ok(requests.count >= 5, `thread-pool calls: open, write, sync, close, rename, dir fsync`);
});
