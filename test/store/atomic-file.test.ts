import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  ensureDirDurably,
  isAtomicTempFile,
  removeFileDurably,
  renameDurably,
  writeFileAtomic,
} from '../../src/store/atomic-file.js';

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
