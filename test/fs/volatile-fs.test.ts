import { execFileSync } from 'node:child_process';
import fs, { statfsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import t from 'tap';
import {
  durableFileOps,
  type FileOps,
  fileOpsFor,
  isOnTmpfs,
  pinFileOps,
  TMPFS_MAGIC,
  volatileFileOps,
} from '../../src/fs/volatile-fs.js';
import { mountContaining, readMountInfo } from '../../src/volume/mountinfo.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { moduleFileUrl } from '../support/project-files.js';
import { tempDir } from '../support/temp-dir.js';

const SHM = '/dev/shm';
const shmIsTmpfs = (() => {
  try {
    return statfsSync(SHM).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
})();
const needsShm = shmIsTmpfs ? {} : { skip: `${SHM} is not a tmpfs here` };
const isRoot = process.getuid?.() === 0;
const GROUP = isRoot ? 2000 : (process.getgid?.() ?? 0);

// Everything under dir: path, type, mode, group and content or link target.
async function snapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path);
    const mode = (info.mode & 0o7777).toString(8);
    const name = relative(dir, path) || '.';
    if (info.isSymbolicLink()) {
      out.push(`${name} link ${mode} ${info.gid} -> ${await readlink(path)}`);
    } else if (info.isDirectory()) {
      out.push(`${name} dir ${mode} ${info.gid}`);
      for (const entry of (await readdir(path)).sort()) await walk(join(path, entry));
    } else {
      out.push(`${name} file ${mode} ${info.gid} ${(await readFile(path)).toString('hex')}`);
    }
  };
  await walk(dir);
  return out;
}

// Every operation once, and what the reads saw.
async function exercise(ops: FileOps, dir: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  await ops.mkdir(join(dir, 'sub'), { mode: 0o750 });
  seen.push(
    relative(
      dir,
      (await ops.mkdir(join(dir, 'a', 'b', 'c'), { recursive: true, mode: 0o700 })) ?? '',
    ),
  );
  seen.push(await ops.mkdir(join(dir, 'a', 'b'), { recursive: true, mode: 0o700 }));
  await ops.writeNewFile(join(dir, 'sub', 'plain'), 'text ✓', { openMode: 0o666 });
  await ops.writeNewFile(join(dir, 'sub', 'exact'), new Uint8Array([0, 1, 255]), {
    openMode: 0o600,
    mode: 0o440,
    gid: GROUP,
  });
  await ops.symlink('sub/exact', join(dir, 'link'));
  await ops.symlink('sub/plain', join(dir, 'gone'));
  await ops.unlink(join(dir, 'gone'));
  await ops.symlink('sub/plain', join(dir, 'gone too'));
  seen.push(await ops.unlinkIfExists(join(dir, 'gone too')));
  seen.push(await ops.unlinkIfExists(join(dir, 'gone too')));
  await ops.rename(join(dir, 'sub', 'plain'), join(dir, 'renamed'));
  await ops.chmod(join(dir, 'sub'), 0o755);
  await ops.chown(join(dir, 'sub'), -1, GROUP);
  await ops.rmdir(join(dir, 'a', 'b', 'c'));
  await ops.mkdir(join(dir, 'tree', 'deep'), { recursive: true, mode: 0o700 });
  await writeFile(join(dir, 'tree', 'deep', 'f'), 'x');
  await ops.removeTree(join(dir, 'tree'));
  await ops.removeTree(join(dir, 'tree'));
  await ops.syncDir(dir);
  await ops.syncDir(join(dir, 'sub'));
  seen.push((await ops.readFile(join(dir, 'renamed'), 64)).toString('utf8'));
  seen.push((await ops.readdir(dir)).sort());
  seen.push(await ops.readlink(join(dir, 'link')));
  seen.push(relative(dir, await ops.realpath(join(dir, 'link'))));
  seen.push((await ops.lstat(join(dir, 'link'))).isSymbolicLink());
  seen.push((await ops.lstatIfExists(join(dir, 'link')))?.isSymbolicLink());
  seen.push(await ops.lstatIfExists(join(dir, 'missing')));
  seen.push((await ops.stat(join(dir, 'link'))).isFile());
  seen.push((await ops.statIfExists(join(dir, 'link')))?.isFile());
  seen.push(await ops.statIfExists(join(dir, 'missing')));
  return seen;
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (err: unknown) => (err as NodeJS.ErrnoException).code,
  );

t.test('isOnTmpfs: /dev/shm is, the repo disk is not', needsShm, async (t) => {
  const shm = await tempDir(t, 'cert-csi-vfs-', SHM);
  t.equal(isOnTmpfs(SHM), true);
  t.equal(isOnTmpfs(shm), true);
  t.equal(isOnTmpfs(join(shm, 'missing', 'deeper')), true, 'a missing path: its nearest parent');
  await writeFile(join(shm, 'file'), 'x');
  t.equal(isOnTmpfs(join(shm, 'file', 'below')), true, 'below a file: the file');
  t.equal(isOnTmpfs(shm, 'darwin'), false, 'other kernels number filesystems differently');
  await symlink('loop', join(shm, 'loop'));
  t.equal(isOnTmpfs(join(shm, 'loop')), false, 'an error other than ENOENT counts as not tmpfs');

  // The mount table says which filesystem holds the repo.
  const repo = import.meta.dirname;
  const home = mountContaining(await readMountInfo(), repo);
  t.equal(isOnTmpfs(repo), home?.fsType === 'tmpfs', `the repo is on ${home?.fsType}`);
  t.equal(isOnTmpfs('/'), mountContaining(await readMountInfo(), '/')?.fsType === 'tmpfs');
});

t.test('fileOpsFor picks the flavour per directory', needsShm, async (t) => {
  const shm = await tempDir(t, 'cert-csi-vfs-', SHM);
  t.equal(fileOpsFor(shm), volatileFileOps);
  t.equal(fileOpsFor(shm).volatile, true);
  const disk = t.testdir();
  t.equal(fileOpsFor(disk), isOnTmpfs(disk) ? volatileFileOps : durableFileOps);
  t.equal(durableFileOps.volatile, false);
});

// statfs follows a symlink: disk/link -> a tmpfs dir is on tmpfs, so the link tells a statfs
// answer (volatile) from one that did not ask (the disk's, durable).
t.test('fileOpsFor remembers an answer for one event-loop turn only', needsShm, async (t) => {
  const disk = t.testdir();
  if (isOnTmpfs(disk)) {
    t.pass('the repo is on tmpfs here', { skip: true });
    return;
  }
  const shm = await tempDir(t, 'cert-csi-vfs-', SHM);
  const link = join(disk, 'link');
  await symlink(shm, link);
  t.equal(fileOpsFor(link), volatileFileOps, 'statfs through the link');
  fs.unlinkSync(link);
  fs.mkdirSync(link);
  t.equal(fileOpsFor(link), volatileFileOps, 'the same turn: the same answer');
  t.equal(isOnTmpfs(link), false, 'what a statfs says now');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(fileOpsFor(link), durableFileOps, 'the next turn asks again');
});

t.test('pinFileOps settles a root and everything under it until unpinned', needsShm, async (t) => {
  const disk = t.testdir();
  if (isOnTmpfs(disk)) {
    t.pass('the repo is on tmpfs here', { skip: true });
    return;
  }
  const shm = await tempDir(t, 'cert-csi-vfs-', SHM);
  await symlink(shm, join(disk, 'link'));
  const unpin = pinFileOps(disk);
  t.equal(fileOpsFor(disk), durableFileOps);
  t.equal(fileOpsFor(join(disk, 'link')), durableFileOps, 'under the root: no statfs');
  t.equal(fileOpsFor(join(disk, 'link', 'missing')), durableFileOps);
  // A name the root's is a prefix of is not under the root.
  const sibling = `${disk}-sibling`;
  await symlink(shm, sibling);
  t.teardown(() => fs.unlinkSync(sibling));
  t.equal(fileOpsFor(sibling), volatileFileOps, 'a sibling sharing the prefix: statfs');
  const shmUnpin = pinFileOps(shm);
  t.equal(
    fileOpsFor(join(shm, 'a', 'b')),
    volatileFileOps,
    'a tmpfs root pins the volatile flavour',
  );
  shmUnpin();
  unpin();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(fileOpsFor(join(disk, 'link')), volatileFileOps, 'unpinned: statfs again');
});

t.test('both flavours produce identical files, modes and groups', needsShm, async (t) => {
  const results: Array<[string, string[], unknown[]]> = [];
  for (const [base, where] of [
    [t.testdir(), 'disk'],
    [SHM, 'tmpfs'],
  ] as const) {
    for (const [ops, flavour] of [
      [durableFileOps, 'durable'],
      [volatileFileOps, 'volatile'],
    ] as const) {
      const dir = await tempDir(t, 'cert-csi-vfs-', base);
      const seen = await exercise(ops, dir);
      results.push([`${flavour} on ${where}`, await snapshot(dir), seen]);
    }
  }
  const [first, ...rest] = results;
  if (!first) throw new Error('no results');
  t.match(first[1], [/^\. dir /], 'a tree was written');
  t.ok(
    first[1].some((line) => / file 440 /.test(line) && line.includes(` ${GROUP} 0001ff`)),
    'exact mode and group of the file',
  );
  t.same(first[2], [
    'a',
    undefined,
    true,
    false,
    'text ✓',
    ['a', 'link', 'renamed', 'sub'],
    'sub/exact',
    'sub/exact',
    true,
    true,
    undefined,
    true,
    true,
    undefined,
  ]);
  for (const [name, tree, seen] of rest) {
    t.same(tree, first[1], `${name}: same tree as ${first[0]}`);
    t.same(seen, first[2], `${name}: same reads as ${first[0]}`);
  }
});

t.test(
  'writeNewFile gives the exact mode under a umask that masks it (a process with umask 077)',
  needsShm,
  async (t) => {
    const dirs = [await tempDir(t, 'cert-csi-vfs-'), await tempDir(t, 'cert-csi-vfs-', SHM)];
    // The umask is read once per process: a child whose umask masks group and other bits.
    const script = `process.umask(0o077);
      const { durableFileOps, volatileFileOps } = await import(${JSON.stringify(moduleFileUrl('src/fs/volatile-fs.ts'))});
      const { statSync } = await import('node:fs');
      const modes = [];
      for (const dir of ${JSON.stringify(dirs)}) {
        for (const [flavour, ops] of [['durable', durableFileOps], ['volatile', volatileFileOps]]) {
          for (const mode of [0o440, 0o644, 0o600]) {
            const path = dir + '/' + flavour + '-' + mode.toString(8);
            await ops.writeNewFile(path, 'x', { openMode: 0o600, mode });
            modes.push([path, (statSync(path).mode & 0o7777).toString(8)]);
          }
          const plain = dir + '/' + flavour + '-open-mode';
          await ops.writeNewFile(plain, 'x', { openMode: 0o644 });
          modes.push([plain, (statSync(plain).mode & 0o7777).toString(8)]);
        }
      }
      console.log(JSON.stringify(modes));`;
    const out = execFileSync(
      process.execPath,
      [...process.execArgv, '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    );
    const modes = JSON.parse(out) as Array<[string, string]>;
    t.equal(modes.length, 16, 'every file written');
    for (const [path, mode] of modes) {
      const want = path.endsWith('-open-mode') ? '600' : (path.split('-').at(-1) ?? '');
      t.equal(mode, want, `${relative(dirname(dirname(path)), path)}`);
    }
  },
);

t.test('errors are the same in both flavours; a failed write leaves no file', async (t) => {
  for (const ops of [durableFileOps, volatileFileOps]) {
    const dir = t.testdir({ existing: 'x' });
    const name = ops.volatile ? 'volatile' : 'durable';
    t.equal(
      await codeOf(ops.writeNewFile(join(dir, 'existing'), 'y', { openMode: 0o600 })),
      'EEXIST',
      `${name}: never replaces a file`,
    );
    t.equal(await readFile(join(dir, 'existing'), 'utf8'), 'x');
    t.equal(await codeOf(ops.readFile(join(dir, 'missing'), 64)), 'ENOENT', name);
    t.equal(await codeOf(ops.mkdir(join(dir, 'no', 'parent'), { mode: 0o700 })), 'ENOENT', name);
    t.equal(await codeOf(ops.rmdir(dir)), 'ENOTEMPTY', name);
    t.equal(await codeOf(ops.syncDir(join(dir, 'missing'))), ops.volatile ? 'resolved' : 'ENOENT');
    // An invalid group fails after the open: the file it created goes again.
    t.equal(
      await codeOf(ops.writeNewFile(join(dir, 'new'), 'y', { openMode: 0o600, gid: -2 })),
      'ERR_OUT_OF_RANGE',
      name,
    );
    t.same(await readdir(dir), ['existing'], `${name}: nothing left behind`);
    await mkdir(join(dir, 'd'));
    t.equal(await codeOf(ops.unlink(join(dir, 'd'))), 'EISDIR', name);
    t.equal(await codeOf(ops.unlinkIfExists(join(dir, 'd'))), 'EISDIR', name);
    t.equal(await codeOf(ops.lstatIfExists(join(dir, 'existing', 'x'))), 'ENOTDIR', name);
  }
});

t.test('readFile reads only regular files up to its cap, in both flavours', async (t) => {
  const make = await oddFileMaker(t);
  for (const ops of [durableFileOps, volatileFileOps]) {
    const name = ops.volatile ? 'volatile' : 'durable';
    const dir = await tempDir(t);
    await writeFile(join(dir, 'file'), '12345');
    t.equal((await ops.readFile(join(dir, 'file'), 5)).toString(), '12345', `${name}: at the cap`);
    t.match(
      await ops.readFile(join(dir, 'file'), 4).catch((err: Error) => err),
      { name: 'RefusedFileError', message: /is larger than 4 bytes/ },
      `${name}: over the cap`,
    );
    for (const kind of ODD_KINDS) {
      await make(join(dir, kind), kind);
      t.match(
        await ops.readFile(join(dir, kind), 1024).catch((err: Error) => err),
        { name: 'RefusedFileError', message: /is not a regular file but a/ },
        `${name}: ${kind}`,
      );
    }
    // A FIFO where a dir was expected fails at once instead of waiting for a writer.
    t.equal(await codeOf(ops.syncDir(join(dir, 'fifo'))), ops.volatile ? 'resolved' : 'ENOTDIR');
  }
});

t.test('unlinkIfExists: a file removed by someone else meanwhile counts as missing', async (t) => {
  const { volatileFileOps: racing } = await t.mockImport<
    typeof import('../../src/fs/volatile-fs.js')
  >(moduleFileUrl('src/fs/volatile-fs.ts'), {
    'node:fs': {
      ...fs,
      // Another process removes the file between the lookup and the unlink.
      unlinkSync: (path: string) => {
        fs.unlinkSync(path);
        fs.unlinkSync(path);
      },
    },
  });
  const dir = t.testdir({ f: 'x' });
  t.equal(await racing.unlinkIfExists(join(dir, 'f')), false);
  t.same(await readdir(dir), []);
});

// Counts the event loop's turns (one setImmediate each) until stopped.
function turnCounter(): { readonly turns: number; stop(): void } {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turns() {
      return turns;
    },
    stop: () => {
      running = false;
    },
  };
}

t.test('back-to-back tmpfs calls still give the event loop a turn', async (t) => {
  const dir = t.testdir();
  const loop = turnCounter();
  let timerRan = false;
  setTimeout(() => {
    timerRan = true;
  }, 1);
  // Each call settles in a microtask: only the budget lets the loop turn at all. Calls go on
  // until the loop turned a few times; without the budget it never does, and they end at the
  // deadline instead. (Not a window of wall time: a machine that stalls the process for the
  // whole window would leave no turn in it.)
  const deadline = performance.now() + 20_000;
  let calls = 0;
  while ((loop.turns < 3 || !timerRan) && performance.now() < deadline) {
    await volatileFileOps.stat(dir);
    calls++;
  }
  loop.stop();
  t.ok(timerRan, 'a timer ran meanwhile');
  t.ok(loop.turns >= 3, `${loop.turns} event-loop turns within ${calls} back-to-back calls`);
});

t.test('callers of tmpfs calls at the same time take turns call by call', async (t) => {
  const dir = t.testdir();
  // A reader polling beside a writer: each must get about as many calls as the other, also
  // across the turns the budget gives the event loop (one caller must not run alone for a
  // whole budget while the other waits a turn per call).
  const counts = [0, 0];
  // Until the event loop turned a few times (counted, not a window of wall time that a stalled
  // machine could fill without one).
  const loop = turnCounter();
  const deadline = performance.now() + 20_000;
  const caller = async (i: 0 | 1) => {
    while ((loop.turns < 4 || (counts[i] ?? 0) <= 30) && performance.now() < deadline) {
      await volatileFileOps.stat(dir);
      counts[i] = (counts[i] ?? 0) + 1;
    }
  };
  await Promise.all([caller(0), caller(1)]);
  loop.stop();
  const [a = 0, b = 0] = counts;
  t.ok(loop.turns >= 4, `across ${loop.turns} event-loop turns`);
  t.ok(Math.abs(a - b) <= 1, `calls alternate: ${a} and ${b}`);
  t.ok(a > 30, 'many calls each');
});

t.test(
  'removeTree removes a whole tree and follows no symlink, in both flavours',
  needsShm,
  async (t) => {
    for (const [ops, flavour] of [
      [durableFileOps, 'durable'],
      [volatileFileOps, 'volatile'],
    ] as const) {
      const dir = await tempDir(t, 'cert-csi-vfs-rm-', SHM);
      // What the links point at, outside the trees removed: it must stay whole.
      await mkdir(join(dir, 'outside', 'inner'), { recursive: true });
      await writeFile(join(dir, 'outside', 'inner', 'keep'), 'k');
      await mkdir(join(dir, 'tree', 'a', 'b'), { recursive: true });
      await writeFile(join(dir, 'tree', 'a', 'b', 'f'), 'x');
      await writeFile(join(dir, 'tree', 'g'), 'y');
      await symlink(join(dir, 'outside'), join(dir, 'tree', 'a', 'to-dir'));
      await symlink(join(dir, 'outside', 'inner', 'keep'), join(dir, 'tree', 'to-file'));
      await symlink('nowhere', join(dir, 'tree', 'dangling'));
      // Node has no mkfifo.
      execFileSync('mkfifo', [join(dir, 'tree', 'fifo')]);
      await ops.removeTree(join(dir, 'tree'));
      t.same(await readdir(dir), ['outside'], `${flavour}: the tree is gone`);

      await symlink(join(dir, 'outside'), join(dir, 'link-to-dir'));
      await ops.removeTree(join(dir, 'link-to-dir'));
      t.same(await readdir(dir), ['outside'], `${flavour}: a link at the path is unlinked`);
      t.equal(
        await readFile(join(dir, 'outside', 'inner', 'keep'), 'utf8'),
        'k',
        `${flavour}: nothing followed`,
      );

      await writeFile(join(dir, 'file'), 'z');
      await ops.removeTree(join(dir, 'file'));
      await ops.removeTree(join(dir, 'missing'));
      t.same(await readdir(dir), ['outside'], `${flavour}: a file, and nothing for a missing path`);
    }
  },
);
