import {
  appendFile,
  chmod,
  chown,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import t from 'tap';
import {
  DATA_LINK,
  DATA_TMP_LINK,
  isGenerationName,
  isWriterInternalName,
  readAtomically,
  readCurrentFile,
  removeAtomicFiles,
  VOLUME_FILE_MAX_BYTES,
  validateFileName,
  writeAtomically,
} from '../../src/fs/atomic-writer.js';
import { FsError } from '../../src/fs/errors.js';
import { isOnTmpfs } from '../../src/fs/volatile-fs.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';
import { spyOnFsync } from '../volume/fixtures/fsync-spy.js';

const isRoot = process.getuid?.() === 0;
const bytes = (s: string) => new TextEncoder().encode(s);
const mode = async (path: string) => (await stat(path)).mode & 0o7777;
const generations = async (dir: string) => (await readdir(dir)).filter(isGenerationName);

t.test('file names must be single safe segments', async (t) => {
  for (const name of ['tls.crt', 'ca.crt', '.hidden', 'keystore.p12', 'a..b', 'x'.repeat(255)]) {
    t.doesNotThrow(() => validateFileName(name), name);
  }
  const bad: Array<[string, RegExp]> = [
    ['', /it is empty/],
    ['a/b', /must not contain "\/"/],
    ['/abs', /must not contain "\/"/],
    ['nul\0', /NUL/],
    ['.', /must not be "\."/],
    ['..', /must not start with "\.\."/],
    ['..data', /must not start with "\.\."/],
    ['é'.repeat(128), /longer than 255 bytes/],
  ];
  for (const [name, message] of bad) {
    t.throws(() => validateFileName(name), new FsError(''));
    t.throws(() => validateFileName(name), { message }, JSON.stringify(name));
  }
});

t.test('internal names', async (t) => {
  t.ok(isGenerationName('..2026_11_21_10_00_00.xyzAB_-1'));
  t.ok(isGenerationName('..2026_11_21_10_00_00.123456789'), "kubelet's own names too");
  t.notOk(isGenerationName('..2026_11_21.x'));
  t.notOk(isGenerationName('..data'));
  t.notOk(isGenerationName('/etc'));
  t.ok(isWriterInternalName(DATA_LINK));
  t.ok(isWriterInternalName(DATA_TMP_LINK));
  t.ok(isWriterInternalName('..2026_11_21_10_00_00.abc'));
  t.notOk(isWriterInternalName('tls.crt'));
});

t.test('first write: a generation, ..data and user-visible links', async (t) => {
  const dir = await tempDir(t);
  const before = new Date();
  const result = await writeAtomically(dir, { 'tls.crt': bytes('cert'), 'tls.key': bytes('key') });
  t.same(result, { written: true });
  const [generation, ...others] = await generations(dir);
  t.same(others, [], 'exactly one generation');
  if (!generation) throw new Error('no generation written');
  const stamp = generation.slice(2, 21);
  const p = (n: number) => String(n).padStart(2, '0');
  const expected = `${before.getUTCFullYear()}_${p(before.getUTCMonth() + 1)}_${p(before.getUTCDate())}`;
  t.ok(stamp.startsWith(expected), `UTC date in ${generation}`);
  t.equal(await readlink(join(dir, DATA_LINK)), generation, '..data is relative');
  t.same((await readdir(dir)).sort(), [DATA_LINK, generation, 'tls.crt', 'tls.key'].sort());
  for (const name of ['tls.crt', 'tls.key']) {
    t.equal(await readlink(join(dir, name)), `${DATA_LINK}/${name}`);
    t.equal(await mode(join(dir, generation, name)), 0o440, `${name} is 0440`);
  }
  t.equal(await mode(join(dir, generation)), 0o755);
  t.equal(await readFile(join(dir, 'tls.crt'), 'utf8'), 'cert');
  t.equal(await readFile(join(dir, 'tls.key'), 'utf8'), 'key');
});

t.test('knownNew: written without a comparison, even the same bytes', async (t) => {
  const dir = await tempDir(t);
  const files = { 'tls.crt': bytes('cert') };
  t.same(await writeAtomically(dir, files), { written: true });
  const [first] = await generations(dir);
  t.same(await writeAtomically(dir, files, { knownNew: true }), { written: true });
  const [second, ...rest] = await generations(dir);
  t.same(rest, [], 'the old generation dropped');
  t.not(second, first, 'a new generation');
  t.equal(await readFile(join(dir, 'tls.crt'), 'utf8'), 'cert');
});

t.test(
  'identical content is skipped; changes make a new generation and drop the old',
  async (t) => {
    const dir = await tempDir(t);
    const files = new Map([
      ['tls.crt', bytes('cert-1')],
      ['ca.crt', bytes('')],
    ]);
    t.same(await writeAtomically(dir, files), { written: true });
    const [first] = await generations(dir);
    const linkBefore = await lstat(join(dir, 'tls.crt'));
    t.same(await writeAtomically(dir, new Map(files)), { written: false }, 'same bytes: skipped');
    t.same(await generations(dir), [first]);

    t.same(await writeAtomically(dir, { 'tls.crt': bytes('cert-2'), 'ca.crt': bytes('') }), {
      written: true,
    });
    const [second, ...rest] = await generations(dir);
    t.same(rest, []);
    t.not(second, first, 'old generation removed');
    t.equal(await readFile(join(dir, 'tls.crt'), 'utf8'), 'cert-2');
    t.equal(
      (await lstat(join(dir, 'tls.crt'))).ino,
      linkBefore.ino,
      'user links are never replaced',
    );
    t.equal(await readFile(join(dir, 'ca.crt'), 'utf8'), '', 'an empty file is a file');
  },
);

t.test(
  'syncOnce on a disk: the same files, one fsync of the dir instead of one per step',
  async (t) => {
    const eachStep = t.testdir();
    if (isOnTmpfs(eachStep)) {
      t.pass('the repo is on tmpfs here', { skip: true });
      return;
    }
    const once = await tempDir(t, 'cert-csi-once-', join(eachStep, '..'));
    const syncs = await spyOnFsync(t);
    const files = { 'tls.crt': bytes('cert'), 'tls.key': bytes('key'), 'ca.crt': bytes('ca') };
    const count = async (work: () => Promise<unknown>) => {
      const before = syncs.count;
      await work();
      return syncs.count - before;
    };
    t.ok(
      (await count(() => writeAtomically(eachStep, files))) > 3,
      'by default: each file, each step',
    );
    t.equal(
      await count(() => writeAtomically(once, files, { syncOnce: true })),
      1,
      'a first write',
    );
    const changed = { ...files, 'tls.crt': bytes('new cert') };
    t.equal(await count(() => writeAtomically(once, changed, { syncOnce: true })), 1, 'a rewrite');
    t.equal(
      await count(() => writeAtomically(once, changed, { syncOnce: true })),
      0,
      'nothing to write: no fsync',
    );
    await writeAtomically(eachStep, changed);
    t.same(await readAtomically(once), await readAtomically(eachStep), 'the same files');
    t.same(
      (await readdir(once)).filter((n) => !isGenerationName(n)),
      (await readdir(eachStep)).filter((n) => !isGenerationName(n)),
    );
  },
);

t.test('a changed name set adds new links and removes stale ones only', async (t) => {
  const dir = await tempDir(t);
  await writeAtomically(dir, { 'tls.crt': bytes('c'), 'keystore.p12': bytes('p') });
  await writeFile(join(dir, 'foreign.txt'), 'not ours');
  t.same(await writeAtomically(dir, { 'tls.crt': bytes('c') }), { written: true }, 'a subset');
  t.same((await readdir(dir)).filter((n) => !n.startsWith('..')).sort(), [
    'foreign.txt',
    'tls.crt',
  ]);
  await writeAtomically(dir, { 'tls.crt': bytes('c'), 'tls.key': bytes('k') });
  t.equal(await readFile(join(dir, 'tls.key'), 'utf8'), 'k');
  // A name that is now a regular file, not our link, is neither replaced nor removed.
  await writeAtomically(dir, { 'tls.crt': bytes('c'), 'foreign.txt': bytes('ours?') });
  t.equal(await readFile(join(dir, 'foreign.txt'), 'utf8'), 'not ours');
  await writeAtomically(dir, { 'tls.crt': bytes('c') });
  t.equal(await readFile(join(dir, 'foreign.txt'), 'utf8'), 'not ours', 'stale non-links stay');
  t.equal((await lstat(join(dir, 'tls.key')).catch(() => undefined))?.isSymbolicLink(), undefined);
});

t.test('group and file mode: applied, and a difference forces a new generation', async (t) => {
  const dir = await tempDir(t);
  const gid = isRoot ? 2000 : (process.getgid?.() ?? 0);
  t.same(await writeAtomically(dir, { 'tls.crt': bytes('c') }, { gid }), { written: true });
  const [generation = ''] = await generations(dir);
  t.equal((await stat(join(dir, generation, 'tls.crt'))).gid, gid, 'file group');
  t.equal((await stat(join(dir, generation))).gid, gid, 'generation dir group');
  t.same(await writeAtomically(dir, { 'tls.crt': bytes('c') }, { gid }), { written: false });
  t.same(await writeAtomically(dir, { 'tls.crt': bytes('c') }), { written: false }, 'no gid: any');
  t.same(await writeAtomically(dir, { 'tls.crt': bytes('c') }, { gid, fileMode: 0o400 }), {
    written: true,
  });
  const [next = ''] = await generations(dir);
  t.equal(await mode(join(dir, next, 'tls.crt')), 0o400);
  if (isRoot) {
    t.same(await writeAtomically(dir, { 'tls.crt': bytes('c') }, { gid: 2001, fileMode: 0o400 }), {
      written: true,
    });
  }
});

t.test('a skipped write still repairs missing user links', async (t) => {
  const dir = await tempDir(t);
  await writeAtomically(dir, { 'tls.crt': bytes('c'), 'tls.key': bytes('k') });
  await unlink(join(dir, 'tls.key'));
  t.same(await writeAtomically(dir, { 'tls.crt': bytes('c'), 'tls.key': bytes('k') }), {
    written: false,
  });
  t.equal(await readFile(join(dir, 'tls.key'), 'utf8'), 'k');
});

t.test('crash leftovers are cleaned up by the next write', async (t) => {
  const dir = await tempDir(t);
  await writeAtomically(dir, { 'tls.crt': bytes('c1') });
  // A generation written but never swapped in, and a ..data_tmp that was never renamed.
  const orphan = '..2020_01_01_00_00_00.orphan';
  await mkdir(join(dir, orphan));
  await writeFile(join(dir, orphan, 'tls.crt'), 'half');
  await symlink(orphan, join(dir, DATA_TMP_LINK));
  await mkdir(join(dir, '..not-a-generation'));
  await writeAtomically(dir, { 'tls.crt': bytes('c2') });
  const names = await readdir(dir);
  t.notOk(names.includes(orphan), 'orphan generation removed');
  t.notOk(names.includes(DATA_TMP_LINK), '..data_tmp consumed');
  t.ok(names.includes('..not-a-generation'), 'unknown .. entries are left alone');
  t.equal((await generations(dir)).length, 1);
  t.equal(await readFile(join(dir, 'tls.crt'), 'utf8'), 'c2');
});

t.test(
  'the replaced generation goes whole, also with entries added to it after its write',
  async (t) => {
    for (const base of [undefined, await tmpfsBase()]) {
      const where = base ?? 'the OS temp dir';
      const dir = await tempDir(t, 'cert-csi-replaced-', base);
      const plant = { file: 'extra.txt', dir: 'sub', 'dir-for-file': 'tls.crt' };
      for (const [kind, name] of Object.entries(plant)) {
        await writeAtomically(dir, { 'ca.crt': bytes('ca'), 'tls.crt': bytes(`c-${kind}`) });
        const [old] = await generations(dir);
        const oldDir = join(dir, old ?? '');
        await chmod(oldDir, 0o700);
        // Beside the names the writer listed, or in place of one of them.
        if (kind === 'file') await writeFile(join(oldDir, name), 'x');
        if (kind === 'dir') await mkdir(join(oldDir, name, 'deeper'), { recursive: true });
        if (kind === 'dir-for-file') {
          await unlink(join(oldDir, name));
          await mkdir(join(oldDir, name));
        }
        await writeAtomically(dir, { 'ca.crt': bytes('ca'), 'tls.crt': bytes(`n-${kind}`) });
        const after = await generations(dir);
        t.equal(after.length, 1, `${where}, ${kind}: one generation left`);
        t.not(after[0], old, `${where}, ${kind}: the replaced one is gone`);
        t.equal(await readFile(join(dir, 'tls.crt'), 'utf8'), `n-${kind}`);
      }
    }
  },
);

t.test('a dangling or foreign ..data is replaced, never followed or removed', async (t) => {
  const dir = await tempDir(t);
  const outside = await tempDir(t);
  await writeFile(join(outside, 'tls.crt'), 'outside');
  await symlink(outside, join(dir, DATA_LINK));
  t.equal(await readAtomically(dir), undefined, 'foreign target is not a generation');
  t.same(await writeAtomically(dir, { 'tls.crt': bytes('outside') }), { written: true });
  t.equal(await readFile(join(outside, 'tls.crt'), 'utf8'), 'outside', 'foreign dir untouched');
  t.ok(isGenerationName(await readlink(join(dir, DATA_LINK))));

  const dir2 = await tempDir(t);
  await symlink('..2020_01_01_00_00_00.gone', join(dir2, DATA_LINK));
  t.equal(await readAtomically(dir2), undefined, 'dangling');
  t.same(await writeAtomically(dir2, {}), { written: true }, 'even an empty set replaces it');

  const dir3 = await tempDir(t);
  await writeFile(join(dir3, '..2020_01_01_00_00_00.file'), 'not a dir');
  await symlink('..2020_01_01_00_00_00.file', join(dir3, DATA_LINK));
  t.equal(await readAtomically(dir3), undefined, 'a generation name that is not a dir');
  t.same(await writeAtomically(dir3, { a: bytes('a') }), { written: true });
  t.equal(await readFile(join(dir3, 'a'), 'utf8'), 'a');
});

t.test('errors name the dir; a failed generation is removed', async (t) => {
  const dir = await tempDir(t);
  await t.rejects(writeAtomically(join(dir, 'missing'), { a: bytes('a') }), {
    name: 'FsError',
    message: /cannot write files into .*missing: ENOENT/,
  });
  await t.rejects(writeAtomically(dir, { a: bytes('a') }, { fileMode: -1 }), FsError);
  t.same(await readdir(dir), [], 'the half-written generation was removed');
  await t.rejects(writeAtomically(dir, { '../x': bytes('') }), FsError);
  await writeFile(join(dir, 'file'), '');
  await t.rejects(readAtomically(join(dir, 'file')), {
    message: /cannot read files from .*ENOTDIR/,
  });
  await t.rejects(removeAtomicFiles(join(dir, 'file')), {
    message: /cannot remove written files from .*ENOTDIR/,
  });
  await mkdir(join(dir, 'd'));
  await writeFile(join(dir, 'd', DATA_LINK), 'a regular file');
  await t.rejects(writeAtomically(join(dir, 'd'), { a: bytes('a') }), {
    message: /cannot write files into/,
  });
});

t.test('readAtomically returns the current set; removeAtomicFiles removes only ours', async (t) => {
  const dir = await tempDir(t);
  t.equal(await readAtomically(dir), undefined);
  t.equal(await readAtomically(join(dir, 'missing')), undefined);
  await writeAtomically(dir, { 'tls.crt': bytes('c'), 'tls.key': bytes('k') });
  const files = await readAtomically(dir);
  t.same(
    [...(files ?? new Map<string, Buffer>())].map(([n, b]) => [n, b.toString()]),
    [
      ['tls.crt', 'c'],
      ['tls.key', 'k'],
    ],
  );
  await writeFile(join(dir, 'foreign'), 'x');
  await symlink('elsewhere', join(dir, 'tls.pem'));
  await symlink(DATA_TMP_LINK, join(dir, DATA_TMP_LINK));
  await removeAtomicFiles(dir);
  t.same((await readdir(dir)).sort(), ['foreign', 'tls.pem']);
  await removeAtomicFiles(dir);
  await removeAtomicFiles(join(dir, 'missing'));
});

t.test(
  'odd files in the current generation: refused by readers, replaced by the writer',
  async (t) => {
    // Both flavours: synchronous calls on tmpfs (a blocking open there would stop the process).
    for (const base of [undefined, await tmpfsBase()]) {
      const make = await oddFileMaker(t, base);
      for (const kind of ODD_KINDS) {
        const dir = await tempDir(t, 'cert-csi-odd-generation-', base);
        await writeAtomically(dir, { 'tls.crt': bytes('c'), 'tls.key': bytes('k') });
        const generation = await readlink(join(dir, DATA_LINK));
        await chmod(join(dir, generation), 0o700);
        await unlink(join(dir, generation, 'tls.key'));
        await make(join(dir, generation, 'tls.key'), kind, 'k');
        await t.rejects(
          readAtomically(dir),
          {
            name: 'FsError',
            message: new RegExp(
              `^cannot read files from ${dir}: file .*tls\\.key" is not a regular file but a`,
            ),
          },
          `${kind} in ${base ?? 'the OS temp dir'}`,
        );
        // The same names and bytes would skip the write: what lies there is no longer them.
        t.same(await writeAtomically(dir, { 'tls.crt': bytes('c'), 'tls.key': bytes('k') }), {
          written: true,
        });
        t.same(
          [...((await readAtomically(dir)) ?? [])].map(([n, b]) => [n, b.toString()]),
          [
            ['tls.crt', 'c'],
            ['tls.key', 'k'],
          ],
          `${kind}: a new generation of regular files`,
        );
      }
    }
  },
);

t.test(
  'a generation file changed in place (bytes, size, mode, group) is found out and replaced',
  async (t) => {
    // The check reads each file once and takes its mode, group and size from that read's fstat.
    for (const base of [undefined, await tmpfsBase()]) {
      const files = { 'tls.crt': bytes('cert'), 'tls.key': bytes('key') };
      const gid = isRoot ? 2000 : undefined;
      const changes: Array<[string, (path: string) => Promise<void>]> = [
        ['same size, other bytes', (path) => writeFile(path, 'KEY')],
        ['larger', (path) => appendFile(path, '!')],
        ['smaller', (path) => writeFile(path, 'ke')],
        ['another mode', (path) => chmod(path, 0o444)],
        // Unreadable to a writer without root: rewritten, as when the mode alone differs.
        ['no permissions at all', (path) => chmod(path, 0o000)],
      ];
      for (const [what, change] of changes) {
        const dir = await tempDir(t, 'cert-csi-changed-', base);
        await writeAtomically(dir, files, gid === undefined ? {} : { gid });
        const generation = await readlink(join(dir, DATA_LINK));
        await chmod(join(dir, generation), 0o700);
        await change(join(dir, generation, 'tls.key'));
        t.same(
          await writeAtomically(dir, files, gid === undefined ? {} : { gid }),
          { written: true },
          `${what} in ${base ?? 'the OS temp dir'}`,
        );
        t.equal(await readFile(join(dir, 'tls.key'), 'utf8'), 'key');
        t.equal(await mode(join(dir, 'tls.key')), 0o440);
      }
      if (gid !== undefined) {
        const dir = await tempDir(t, 'cert-csi-changed-', base);
        await writeAtomically(dir, files, { gid });
        const generation = await readlink(join(dir, DATA_LINK));
        await chown(join(dir, generation, 'tls.key'), 0, 2001);
        t.same(await writeAtomically(dir, files, { gid }), { written: true }, 'another group');
        t.equal((await stat(join(dir, 'tls.key'))).gid, gid);
      }
    }
  },
);

t.test(
  'readCurrentFile reads one file of the current generation, on disk and on tmpfs',
  async (t) => {
    for (const base of [undefined, await tmpfsBase()]) {
      const dir = await tempDir(t, 'cert-csi-current-', base);
      t.equal(await readCurrentFile(dir, 'tls.crt', 64), undefined, 'nothing written yet');
      await writeAtomically(dir, { 'tls.crt': bytes('c1') });
      await writeAtomically(dir, { 'tls.crt': bytes('c2'), 'tls.key': bytes('k') });
      t.equal(String(await readCurrentFile(dir, 'tls.crt', 64)), 'c2', 'the newest generation');
      t.equal(await readCurrentFile(dir, 'ca.crt', 64), undefined, 'a name the generation lacks');
      await t.rejects(readCurrentFile(dir, 'tls.crt', 1), /larger than/, 'the cap still applies');
    }
  },
);

t.test('a file over VOLUME_FILE_MAX_BYTES is neither written nor read', async (t) => {
  const dir = await tempDir(t);
  await t.rejects(writeAtomically(dir, { big: new Uint8Array(VOLUME_FILE_MAX_BYTES + 1) }), {
    name: 'FsError',
    message: `file "big" is ${VOLUME_FILE_MAX_BYTES + 1} bytes, more than the 16 MiB a volume file may have`,
  });
  t.same(await readdir(dir), [], 'nothing written');
  await writeAtomically(dir, { big: new Uint8Array(VOLUME_FILE_MAX_BYTES) });
  t.equal((await readAtomically(dir))?.get('big')?.length, VOLUME_FILE_MAX_BYTES, 'up to the cap');
  const generation = await readlink(join(dir, DATA_LINK));
  await chmod(join(dir, generation, 'big'), 0o600);
  await appendFile(join(dir, generation, 'big'), 'x');
  await t.rejects(readAtomically(dir), { message: /\/big" is larger than 16 MiB/ });
});

// A reader in a worker thread runs truly in parallel with the writer. Mode "pair" resolves
// ..data once and reads both files from that generation (the documented way); mode "file"
// reads dir/tls.key alone through its link and checks it is complete.
const READER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync, realpathSync } = require('node:fs');
const { join } = require('node:path');
const { dir, mode } = workerData;
const stats = { reads: 0, mismatches: 0, partial: 0, retries: 0, seen: new Set() };
const shared = new Int32Array(workerData.stop);
const parse = (text, kind) => {
  const m = new RegExp('^' + kind + ':(\\\\d+):(x+):end$').exec(text);
  return m && m[2].length === 65536 ? m[1] : undefined;
};
while (Atomics.load(shared, 0) === 0) {
  try {
    if (mode === 'pair') {
      const gen = realpathSync(join(dir, '..data'));
      const key = parse(readFileSync(join(gen, 'tls.key'), 'latin1'), 'key');
      const crt = parse(readFileSync(join(gen, 'tls.crt'), 'latin1'), 'crt');
      if (key === undefined || crt === undefined) stats.partial++;
      else if (key !== crt) stats.mismatches++;
      else stats.seen.add(key);
    } else {
      const key = parse(readFileSync(join(dir, 'tls.key'), 'latin1'), 'key');
      if (key === undefined) stats.partial++;
      else stats.seen.add(key);
    }
    stats.reads++;
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    stats.retries++;
  }
}
parentPort.postMessage({ ...stats, seen: stats.seen.size });
`;

interface ReaderStats {
  reads: number;
  mismatches: number;
  partial: number;
  retries: number;
  seen: number;
}

t.test('hammer: readers never see a mixed pair or a partial file over 200 swaps', async (t) => {
  // On tmpfs, like the data root in bind mode.
  const dir = await tempDir(t, 'cert-csi-hammer-', await tmpfsBase());
  const pad = 'x'.repeat(65536);
  const payload = (i: number) => ({
    'tls.key': bytes(`key:${i}:${pad}:end`),
    'tls.crt': bytes(`crt:${i}:${pad}:end`),
  });
  await writeAtomically(dir, payload(0));
  const stop = new SharedArrayBuffer(4);
  const start = (mode: string) => {
    const worker = new Worker(READER, { eval: true, workerData: { dir, mode, stop } });
    return new Promise<ReaderStats>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  };
  const readers = [start('pair'), start('file')] as const;
  // readAtomically in this thread interleaves with the writer at every await: on tmpfs both are
  // synchronous calls between microtasks, so the reader must not wait for a timer, which would
  // only fire after the last write.
  let writing = true;
  const inProcess = { reads: 0, mismatches: 0 };
  const readLoop = (async () => {
    while (writing) {
      const files = await readAtomically(dir);
      const key = files?.get('tls.key')?.toString('latin1').split(':')[1];
      const crt = files?.get('tls.crt')?.toString('latin1').split(':')[1];
      if (key === undefined || key !== crt || files?.size !== 2) inProcess.mismatches++;
      inProcess.reads++;
    }
  })();
  const began = Date.now();
  for (let i = 1; i <= 200; i++) await writeAtomically(dir, payload(i));
  const elapsed = Date.now() - began;
  writing = false;
  await readLoop;
  t.equal(inProcess.mismatches, 0, `readAtomically: ${inProcess.reads} consistent sets`);
  t.ok(inProcess.reads > 200, 'readAtomically ran between the steps of the writes');
  Atomics.store(new Int32Array(stop), 0, 1);
  const [pair, file] = await Promise.all(readers);
  t.comment(
    `200 generations in ${elapsed} ms; pair reader ${JSON.stringify(pair)}; per-file reader ${JSON.stringify(file)}`,
  );
  t.equal(pair.mismatches, 0, 'no key/cert pair from two generations');
  t.equal(pair.partial, 0, 'no partial file');
  t.ok(pair.reads > 0, 'the pair reader did read');
  t.equal(file.partial, 0, 'a per-file read never sees a half-written file');
  t.ok(file.reads > 0);
  t.ok(pair.seen > 2 && file.seen > 2, 'readers saw many generations');
  t.equal((await generations(dir)).length, 1, 'only the last generation is left');
  t.equal(await readFile(join(dir, 'tls.key'), 'latin1'), `key:200:${pad}:end`);
});
