import { chmod, readlink, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  DATA_LINK,
  readAtomically,
  readToMirror,
  removeAtomicFiles,
  writeAtomically,
} from '../../src/fs/atomic-writer.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const texts = (files: Map<string, Buffer> | undefined) =>
  [...(files ?? [])].map(([name, content]) => [name, content.toString()]);

// What lies in the generation after the write is changed behind the writer's back, so a read
// from disk is told apart from the bytes handed over.
async function changeBehindTheWriter(dir: string, name: string, content: string) {
  const generation = await readlink(join(dir, DATA_LINK));
  await chmod(join(dir, generation), 0o700);
  await unlink(join(dir, generation, name));
  await writeFile(join(dir, generation, name), content, { mode: 0o440 });
}

t.test('a write with handOff gives its bytes to the next handed-off read, once', async (t) => {
  for (const base of [undefined, await tmpfsBase()]) {
    const where = base ?? 'the OS temp dir';
    const dir = await tempDir(t, 'cert-csi-handoff-', base);
    const source = new Map([
      ['tls.crt', bytes('c1')],
      ['tls.key', bytes('k1')],
    ]);
    await writeAtomically(dir, source, { handOff: true });
    // The writer's buffers are its own: changing them changes nothing handed over.
    source.get('tls.key')?.fill(0x78);
    await changeBehindTheWriter(dir, 'tls.crt', 'on disk');
    t.same(
      await readAtomically(dir),
      new Map([
        ['tls.crt', Buffer.from('on disk')],
        ['tls.key', Buffer.from('k1')],
      ]),
      `${where}: a plain read reads the disk`,
    );
    t.same(
      texts((await readToMirror(dir))?.files),
      [
        ['tls.crt', 'c1'],
        ['tls.key', 'k1'],
      ],
      `${where}: the copy gets what was written`,
    );
    t.same(
      texts((await readToMirror(dir))?.files),
      [
        ['tls.crt', 'on disk'],
        ['tls.key', 'k1'],
      ],
      `${where}: taken once; the next copy reads the disk`,
    );
  }
});

t.test('nothing is handed over for a generation that is no longer current', async (t) => {
  const dir = await tempDir(t, 'cert-csi-handoff-');
  await writeAtomically(dir, { 'tls.crt': bytes('old') }, { handOff: true });
  await writeAtomically(dir, { 'tls.crt': bytes('new') });
  t.same(texts((await readToMirror(dir))?.files), [['tls.crt', 'new']]);
});

t.test('a write without handOff, or files removed, leave nothing to hand over', async (t) => {
  const dir = await tempDir(t, 'cert-csi-handoff-');
  await writeAtomically(dir, { 'tls.crt': bytes('c') });
  await changeBehindTheWriter(dir, 'tls.crt', 'on disk');
  t.same(texts((await readToMirror(dir))?.files), [['tls.crt', 'on disk']]);

  await writeAtomically(dir, { 'tls.crt': bytes('c2') }, { handOff: true });
  await removeAtomicFiles(dir);
  t.equal(await readToMirror(dir), undefined, 'removed: nothing');
});

t.test('readToMirror says whether the files were handed off or read back', async (t) => {
  const dir = await tempDir(t, 'cert-csi-handoff-');
  t.equal(await readToMirror(dir), undefined, 'nothing written: nothing');
  await writeAtomically(dir, { 'tls.crt': bytes('c1') }, { handOff: true });
  const first = await readToMirror(dir);
  t.equal(first?.handedOff, true, 'the first copy after a handOff write is handed the bytes');
  t.same(texts(first?.files), [['tls.crt', 'c1']]);
  const second = await readToMirror(dir);
  t.equal(second?.handedOff, false, 'the next one reads them back');
  t.same(texts(second?.files), [['tls.crt', 'c1']]);
});

t.test('a `..data` removed behind the writer: nothing handed over, then or later', async (t) => {
  for (const base of [undefined, await tmpfsBase()]) {
    const where = base ?? 'the OS temp dir';
    const dir = await tempDir(t, 'cert-csi-handoff-', base);
    await writeAtomically(dir, { 'tls.crt': bytes('c') }, { handOff: true });
    const generation = await readlink(join(dir, DATA_LINK));
    await unlink(join(dir, DATA_LINK));
    t.equal(await readToMirror(dir), undefined, `${where}: no link, nothing to copy`);
    await symlink(generation, join(dir, DATA_LINK));
    const again = await readToMirror(dir);
    t.equal(again?.handedOff, false, `${where}: the held bytes were let go; read back`);
    t.same(texts(again?.files), [['tls.crt', 'c']]);
  }
});
