import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ECHO_LIMIT } from '../../src/api/echoed-value.js';
import {
  byteSizeText,
  type RefusedFileError,
  type RegularFileOptions,
  readRegularFile,
  readRegularFileSync,
  readRegularFileWithStats,
  readRegularFileWithStatsSync,
} from '../../src/fs/regular-file.js';
import { rejection } from '../support/eventually.js';
import { ODD_KINDS, type OddKind, oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

type Read = (path: string, options: RegularFileOptions) => Promise<Buffer>;

// Both forms, the synchronous one wrapped: every case runs against each.
const readers: Array<[string, Read]> = [
  ['async', readRegularFile],
  ['sync', async (path, options) => readRegularFileSync(path, options)],
];

const openFds = () => readdirSync('/proc/self/fd').length;

t.test('byteSizeText names whole KiB and MiB, else bytes', async (t) => {
  for (const [n, text] of [
    [0, '0 bytes'],
    [1000, '1000 bytes'],
    [1024, '1 KiB'],
    [4096, '4 KiB'],
    [1536, '1536 bytes'],
    [1024 * 1024, '1 MiB'],
    [16 * 1024 * 1024, '16 MiB'],
    [1024 * 1024 + 1024, '1025 KiB'],
  ] as const) {
    t.equal(byteSizeText(n), text, String(n));
  }
});

for (const [form, read] of readers) {
  t.test(`${form}: a regular file is read whole, up to and including the cap`, async (t) => {
    const dir = await tempDir(t);
    const path = join(dir, 'data');
    await writeFile(path, 'x'.repeat(100));
    t.equal((await read(path, { maxBytes: 100 })).toString(), 'x'.repeat(100), 'exactly the cap');
    t.equal((await read(path, { maxBytes: 1 << 20 })).length, 100, 'well under the cap');
    await writeFile(join(dir, 'empty'), '');
    t.equal((await read(join(dir, 'empty'), { maxBytes: 0 })).length, 0, 'an empty file');
    // Larger than one read chunk (64 KiB after the first).
    const big = Buffer.alloc(300 * 1024, 7);
    await writeFile(join(dir, 'big'), big);
    t.ok((await read(join(dir, 'big'), { maxBytes: big.length })).equals(big), 'a large file');
  });

  t.test(`${form}: a file larger than the cap is refused, naming it and the cap`, async (t) => {
    const dir = await tempDir(t);
    const path = join(dir, 'data');
    await writeFile(path, 'x'.repeat(4097));
    const err = (await rejection(read(path, { maxBytes: 4096 }))) as RefusedFileError;
    t.equal(err.name, 'RefusedFileError');
    t.equal(err.path, path);
    t.equal(
      err.message,
      `file ${JSON.stringify(path)} is larger than 4 KiB, the most read for it: not read`,
    );
    t.equal(err.problem, 'is larger than 4 KiB, the most read for it: not read');
  });

  t.test(`${form}: a file that reports no size is still cut at the cap`, async (t) => {
    // The kernel reports st_size 0 for /proc files, as for a file that grows after fstat.
    const status = '/proc/self/status';
    t.equal((await stat(status)).size, 0, 'the premise: no size reported');
    const err = (await rejection(read(status, { maxBytes: 16 }))) as RefusedFileError;
    t.match(err.message, /"\/proc\/self\/status" is larger than 16 bytes/);
    t.match((await read(status, { maxBytes: 1 << 20 })).toString(), /^Name:/m, 'read whole');
  });

  t.test(`${form}: every entry that is not a regular file is refused at once`, async (t) => {
    const dir = await tempDir(t);
    const make = await oddFileMaker(t);
    const expected: Record<OddKind, string> = {
      fifo: 'is not a regular file but a FIFO',
      'link-to-fifo': 'is not a regular file but a symbolic link',
      socket: 'is not a regular file but a socket',
      directory: 'is not a regular file but a directory',
      'link-to-file': 'is not a regular file but a symbolic link',
    };
    const before = openFds();
    for (const kind of ODD_KINDS) {
      const path = join(dir, kind);
      await make(path, kind);
      const err = (await rejection(read(path, { maxBytes: 1024 }))) as RefusedFileError;
      t.equal(err.name, 'RefusedFileError', kind);
      t.equal(
        err.message,
        `file ${JSON.stringify(path)} ${expected[kind]}: only regular files are read`,
        kind,
      );
    }
    t.equal(openFds(), before, 'no descriptor left open');
  });

  t.test(
    `${form}: a device node is refused`,
    { skip: process.getuid?.() !== 0 && 'needs root for mknod' },
    async (t) => {
      const dir = await tempDir(t);
      const path = join(dir, 'null');
      // /dev/null's numbers: opening it has no effect anywhere.
      execFileSync('mknod', [path, 'c', '1', '3']);
      t.match((await rejection(read(path, { maxBytes: 1024 }))) as Error, {
        name: 'RefusedFileError',
        message: /is not a regular file but a device/,
      });
    },
  );

  t.test(
    `${form}: followSymlinks reads a link's regular file, still refusing the rest`,
    async (t) => {
      const dir = await tempDir(t);
      const make = await oddFileMaker(t);
      await make(join(dir, 'to-file'), 'link-to-file', 'kind: ConfigMap\n');
      await make(join(dir, 'to-fifo'), 'link-to-fifo');
      await symlink('loop', join(dir, 'loop'));
      const follow = { maxBytes: 1024, followSymlinks: true };
      t.equal((await read(join(dir, 'to-file'), follow)).toString(), 'kind: ConfigMap\n');
      t.match(await rejection(read(join(dir, 'to-fifo'), follow)), {
        message: /is not a regular file but a FIFO/,
      });
      t.match(await rejection(read(join(dir, 'loop'), follow)), {
        message: /is not a regular file but a loop of symbolic links/,
      });
    },
  );

  t.test(`${form}: other errors are open(2)'s own`, async (t) => {
    const dir = await tempDir(t);
    t.match(await rejection(read(join(dir, 'missing'), { maxBytes: 1 })), { code: 'ENOENT' });
    await writeFile(join(dir, 'file'), 'x');
    t.match(await rejection(read(join(dir, 'file', 'below'), { maxBytes: 1 })), {
      code: 'ENOTDIR',
    });
  });
}

t.test(
  'the stated forms give the fstat of the file read, and refuse what the others refuse',
  async (t) => {
    const dir = await tempDir(t);
    const path = join(dir, 'data');
    await writeFile(path, 'x'.repeat(10), { mode: 0o640 });
    const forms = [
      ['async', readRegularFileWithStats],
      ['sync', async (p: string, o: RegularFileOptions) => readRegularFileWithStatsSync(p, o)],
    ] as const;
    for (const [form, read] of forms) {
      const { content, stats } = await read(path, { maxBytes: 10 });
      const seen = await stat(path);
      t.equal(content.toString(), 'x'.repeat(10), form);
      t.same([stats.ino, stats.size, stats.mode, stats.gid], [seen.ino, 10, seen.mode, seen.gid]);
      await t.rejects(
        read(path, { maxBytes: 9 }),
        { name: 'RefusedFileError' },
        `${form}: the cap`,
      );
      await symlink(path, join(dir, `link-${form}`));
      await t.rejects(
        read(join(dir, `link-${form}`), { maxBytes: 10 }),
        { name: 'RefusedFileError', message: /a symbolic link/ },
        `${form}: a link`,
      );
    }
  },
);

t.test('shortReadEnds: the same content in one read less, and never a cut file', async (t) => {
  const dir = await tempDir(t);
  for (const size of [0, 1, 100, 64 * 1024, 300 * 1024]) {
    const path = join(dir, `file-${size}`);
    const content = Buffer.alloc(size, 5);
    await writeFile(path, content);
    for (const options of [{ maxBytes: size }, { maxBytes: size + 10 }]) {
      const read = readRegularFileSync(path, { ...options, shortReadEnds: true });
      t.ok(read.equals(content), `${size} bytes, cap ${options.maxBytes}`);
    }
    if (size > 0) {
      t.throws(
        () => readRegularFileSync(path, { maxBytes: size - 1, shortReadEnds: true }),
        { name: 'RefusedFileError' },
        'the cap still applies',
      );
    }
  }
  // A file whose size fstat does not give (as one that grows after it) is read to its end.
  const status = readRegularFileSync('/proc/self/status', {
    maxBytes: 1 << 20,
    shortReadEnds: true,
  });
  t.match(status.toString(), /^Name:[\s\S]*\nnonvoluntary_ctxt_switches:\s+\d+\n$/, 'read whole');
});

t.test('a long path is shortened to its tail, the file name kept', async (t) => {
  const dir = await tempDir(t);
  const name = `${'n'.repeat(150)}.request`;
  const path = join(dir, name);
  await writeFile(path, 'too long');
  const err = (await rejection(readRegularFile(path, { maxBytes: 1 }))) as RefusedFileError;
  const tail = path.slice(-ECHO_LIMIT);
  t.equal(
    err.message,
    `file …${JSON.stringify(tail)}(${path.length} characters) is larger than 1 bytes, the most read for it: not read`,
  );
  t.equal(err.path, path, 'the error keeps the whole path');
});

t.test('FIFOs without a writer never take the thread pool', async (t) => {
  // libuv has four threads by default: a blocking open of each FIFO would park one for good,
  // and the stat below would then never answer.
  const dir = await tempDir(t);
  const make = await oddFileMaker(t);
  const fifos = Array.from({ length: 12 }, (_, i) => join(dir, `${i}.request`));
  for (const path of fifos) await make(path, 'fifo');
  const refusals = await Promise.all(
    fifos.map((path) => rejection(readRegularFile(path, { maxBytes: 4096 }))),
  );
  t.ok(
    refusals.every((err) => (err as Error).name === 'RefusedFileError'),
    'each is refused',
  );
  t.equal((await readdir(dir)).length, 12, 'the thread pool still answers');
});
