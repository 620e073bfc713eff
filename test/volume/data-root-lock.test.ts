import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { LOCK_FILE, LockHeldError } from '../../src/fs/directory-lock.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { claimDataRoot } from '../../src/volume/data-root-lock.js';
import type { Mounter } from '../../src/volume/mounter.js';
import { rejection, rejectionMessage } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';

const direct = createMounter({ mode: 'direct' });

t.test('one claim per data root; the loser touches nothing in it', async (t) => {
  const dir = await tempDir(t);
  const root = new DataRoot(join(dir, 'volumes'));
  const held = await claimDataRoot(root, direct);
  t.equal(held.path, join(root.root, LOCK_FILE));
  // An interrupted removal the holder may be in the middle of: the loser must not finish it.
  const removing = join(root.root, '..removing-csi-x.abc');
  await writeFile(removing, '');
  const err = await rejection(claimDataRoot(new DataRoot(root.root), direct));
  t.type(err, LockHeldError);
  t.same((await readdir(root.root)).sort(), [LOCK_FILE, '..removing-csi-x.abc'].sort());
  held.release();
  const again = await claimDataRoot(new DataRoot(root.root), direct);
  t.same(await readdir(root.root), [LOCK_FILE], 'the next holder finishes the removal');
  again.release();
});

t.test('a data root that cannot be prepared is not left locked', async (t) => {
  const dir = await tempDir(t);
  const root = new DataRoot(join(dir, 'volumes'));
  const failing: Mounter = {
    ...direct,
    mode: 'bind',
    prepareDataRoot: async () => {
      throw new Error('mount failed');
    },
  };
  t.equal(await rejectionMessage(claimDataRoot(root, failing)), 'mount failed');
  (await claimDataRoot(root, direct)).release();

  const file = join(dir, 'file');
  await writeFile(file, '');
  t.match(
    await rejectionMessage(claimDataRoot(new DataRoot(join(file, 'volumes')), direct)),
    `cannot create data root ${join(file, 'volumes')}`,
  );
});
