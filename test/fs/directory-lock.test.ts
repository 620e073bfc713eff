import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { LOCK_FILE, LockHeldError, lockDirectory } from '../../src/fs/directory-lock.js';
import { rejection, rejectionMessage } from '../support/eventually.js';
import { run } from '../support/issuer-fixtures.js';
import { tempDir } from '../support/temp-dir.js';

t.test('one holder at a time, named by pid; released on release()', async (t) => {
  const dir = await tempDir(t);
  const held = await lockDirectory(dir, 'data root X');
  t.equal(held.path, join(dir, LOCK_FILE));
  t.equal(await readFile(held.path, 'utf8'), `${process.pid}\n`, 'the holder pid is recorded');
  // flock belongs to the open file: a second open in this same process contends like another process.
  const err = await rejection(lockDirectory(dir, 'data root X'));
  t.type(err, LockHeldError);
  t.equal((err as LockHeldError).holderPid, process.pid);
  t.match(
    (err as Error).message,
    `data root X is in use by another cert-csi process (pid ${process.pid}; lock file ${held.path})`,
  );
  t.equal(await readFile(held.path, 'utf8'), `${process.pid}\n`, 'the loser wrote nothing');
  held.release();
  held.release();
  const next = await lockDirectory(dir, 'data root X');
  next.release();
});

t.test('a holder that has not written its pid yet is named as unknown', async (t) => {
  const dir = await tempDir(t);
  const held = await lockDirectory(dir, 'state dir Y');
  await writeFile(held.path, '');
  t.match(await rejectionMessage(lockDirectory(dir, 'state dir Y')), '(pid unknown;');
  held.release();
});

t.test('a symlink or a dir at the lock name is refused and left alone', async (t) => {
  const dir = await tempDir(t);
  const elsewhere = join(dir, 'precious.txt');
  await writeFile(elsewhere, 'keep me\n');
  const linked = join(dir, 'linked');
  await mkdir(linked);
  await symlink(elsewhere, join(linked, LOCK_FILE));
  t.match(await rejectionMessage(lockDirectory(linked, 'data root L')), /cannot open lock file/);
  t.equal(await readFile(elsewhere, 'utf8'), 'keep me\n', 'the link target is untouched');
  const withDir = join(dir, 'with-dir');
  await mkdir(join(withDir, LOCK_FILE), { recursive: true });
  t.match(await rejectionMessage(lockDirectory(withDir, 'data root D')), /cannot open lock file/);
  const withFifo = join(dir, 'with-fifo');
  await mkdir(withFifo);
  await run('mkfifo', [join(withFifo, LOCK_FILE)]);
  t.match(
    await rejectionMessage(lockDirectory(withFifo, 'data root P')),
    `lock file ${join(withFifo, LOCK_FILE)} of data root P is not a file`,
  );
});

t.test('without util-linux flock the error says what is missing', async (t) => {
  const dir = await tempDir(t);
  const path = process.env.PATH;
  process.env.PATH = dir;
  t.teardown(() => {
    process.env.PATH = path;
  });
  t.match(
    await rejectionMessage(lockDirectory(dir, 'data root F')),
    /cannot lock .* of data root F: flock could not run \(util-linux flock is required\)/,
  );
});
