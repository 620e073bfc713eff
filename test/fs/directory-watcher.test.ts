import { EventEmitter } from 'node:events';
import type { FSWatcher } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import { watchDirectory } from '../../src/fs/directory-watcher.js';
import type { FsError } from '../../src/fs/errors.js';
import { until } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';

/** A stand-in for fs.watch: each watcher it made, to fire events and errors on by hand. */
function fakeWatchers(fail?: (path: string) => unknown) {
  const made: Array<{
    path: string;
    listener: () => void;
    watcher: EventEmitter;
    closed: boolean;
  }> = [];
  const watchDir = (path: string, listener: () => void): FSWatcher => {
    const problem = fail?.(path);
    if (problem !== undefined) throw problem;
    const watcher = new EventEmitter();
    const entry = { path, listener, watcher, closed: false };
    Object.assign(watcher, {
      close() {
        entry.closed = true;
      },
    });
    made.push(entry);
    return watcher as unknown as FSWatcher;
  };
  return { made, watchDir };
}

const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code });

t.test('follows subdirectories and stops on close', async (t) => {
  const root = await tempDir(t);
  await mkdir(join(root, 'csi-a'));
  await writeFile(join(root, 'a-file'), '');
  let changes = 0;
  const watch = watchDirectory({ root, subdirectories: true, onChange: () => changes++ });
  t.teardown(() => watch.close());
  await watch.ready;
  t.same(watch.watchedPaths().sort(), [root, join(root, 'csi-a')].sort(), 'dirs only');
  await rm(join(root, 'csi-a'), { recursive: true });
  await until(() => changes > 0, { what: 'the removal seen' });
  t.same(watch.watchedPaths(), [root], 'the removed dir is no longer watched');
  await mkdir(join(root, 'csi-b'));
  await until(() => watch.watchedPaths().includes(join(root, 'csi-b')), {
    what: 'the new dir watched',
  });
  const seen = changes;
  await writeFile(join(root, 'csi-b', 'metadata.json'), '{}');
  await until(() => changes > seen, { what: 'a change in the new dir' });
  watch.close();
  t.same(watch.watchedPaths(), []);
});

t.test('without subdirectories only the root is watched', async (t) => {
  const root = await tempDir(t);
  await mkdir(join(root, 'sub'));
  const watch = watchDirectory({ root, onChange: () => {} });
  await watch.ready;
  t.same(watch.watchedPaths(), [root]);
  watch.close();
});

t.test('a burst of events gives one onChange, settleMs after the first', async (t) => {
  const { made, watchDir } = fakeWatchers();
  const times: number[] = [];
  const watch = watchDirectory({
    root: '/fake',
    onChange: () => times.push(performance.now()),
    settleMs: 50,
    resyncMs: 600_000,
    watchDir,
  });
  t.teardown(() => watch.close());
  await watch.ready;
  const first = performance.now();
  for (let i = 0; i < 10; i++) made[0]?.listener();
  await until(() => times.length > 0, { what: 'the change' });
  await delay(150);
  t.equal(times.length, 1, 'one onChange for ten events');
  t.ok((times[0] ?? 0) - first >= 45, 'not before settleMs');
  made[0]?.listener();
  await until(() => times.length > 1, { what: 'the next burst' });
  t.equal(times.length, 2, 'the next event starts the next burst');
});

t.test('every resyncMs: onChange without events, and a missing root is looked for', async (t) => {
  const dir = await tempDir(t);
  const root = join(dir, 'not-there-yet');
  let changes = 0;
  const watch = watchDirectory({
    root,
    subdirectories: true,
    onChange: () => changes++,
    resyncMs: 20,
  });
  t.teardown(() => watch.close());
  await watch.ready;
  t.same(watch.watchedPaths(), [], 'nothing to watch yet');
  await until(() => changes >= 3, { what: 'resyncs without any event' });
  await mkdir(join(root, 'csi-a'), { recursive: true });
  await until(() => watch.watchedPaths().length === 2, { what: 'the root and its dir watched' });
  t.same(watch.watchedPaths().sort(), [root, join(root, 'csi-a')].sort());
});

t.test('a watcher that fails is dropped, counted as a change, and set up again', async (t) => {
  const { made, watchDir } = fakeWatchers();
  let changes = 0;
  const errors: FsError[] = [];
  const watch = watchDirectory({
    root: '/fake',
    onChange: () => changes++,
    onError: (err) => errors.push(err),
    settleMs: 10,
    resyncMs: 600_000,
    watchDir,
  });
  t.teardown(() => watch.close());
  await watch.ready;
  t.equal(made.length, 1);
  const cause = new Error('EPERM');
  made[0]?.watcher.emit('error', cause);
  t.equal(made[0]?.closed, true, 'the failed watcher is closed');
  t.same(watch.watchedPaths(), []);
  await until(() => changes === 1, { what: 'the failure wakes the reader' });
  t.equal(made.length, 2, 'the next sync watches the root again');
  t.same(watch.watchedPaths(), ['/fake']);
  t.equal(errors.length, 1, 'the failure is told');
  t.match(errors[0], { name: 'FsError', path: '/fake', message: 'cannot watch /fake: EPERM' });
  t.equal(errors[0]?.cause, cause);

  // A late error of the watcher already replaced changes nothing.
  made[0]?.watcher.emit('error', new Error('late'));
  await delay(50);
  t.equal(changes, 1, 'no change for a late error');
  t.same(watch.watchedPaths(), ['/fake'], 'the current watcher stays');
  t.equal(made.length, 2);
  made[1]?.watcher.emit('error', new Error('EPERM again'));
  await until(() => changes === 2, { what: 'the second failure seen' });
  t.equal(made.length, 3, 'watched again');
  t.equal(errors.length, 1, 'a directory is told once');
});

t.test('a failed watcher of a dir that is gone meanwhile is not told', async (t) => {
  const root = await tempDir(t);
  await mkdir(join(root, 'csi-a'));
  const { made, watchDir } = fakeWatchers();
  let changes = 0;
  const errors: FsError[] = [];
  const watch = watchDirectory({
    root,
    subdirectories: true,
    onChange: () => changes++,
    onError: (err) => errors.push(err),
    settleMs: 10,
    resyncMs: 600_000,
    watchDir,
  });
  t.teardown(() => watch.close());
  await watch.ready;
  await rm(join(root, 'csi-a'), { recursive: true });
  made.find((m) => m.path === join(root, 'csi-a'))?.watcher.emit('error', new Error('EPERM'));
  await until(() => changes === 1, { what: 'the change' });
  t.same(watch.watchedPaths(), [root]);
  t.same(errors, [], 'removing a dir is no failure');
});

t.test('a dir that cannot be watched is told once; a gone one is not told', async (t) => {
  const root = await tempDir(t);
  await mkdir(join(root, 'full'));
  await mkdir(join(root, 'plain'));
  await mkdir(join(root, 'gone'));
  const problems: Record<string, unknown> = {
    [join(root, 'full')]: errno('ENOSPC'),
    [join(root, 'plain')]: new Error('no code'),
    [join(root, 'gone')]: errno('ENOENT'),
  };
  const { watchDir } = fakeWatchers((path) => problems[path]);
  let changes = 0;
  const errors: FsError[] = [];
  const watch = watchDirectory({
    root,
    subdirectories: true,
    onChange: () => changes++,
    onError: (err) => errors.push(err),
    resyncMs: 20,
    watchDir,
  });
  t.teardown(() => watch.close());
  await watch.ready;
  t.same(
    errors.map((e) => e.path).sort(),
    [join(root, 'full'), join(root, 'plain')].sort(),
    'ENOSPC and an uncoded error told, ENOENT not',
  );
  t.match(errors.find((e) => e.path === join(root, 'full'))?.message, /ENOSPC/);
  t.same(watch.watchedPaths(), [root], 'the others are watched');
  await until(() => changes >= 2, { what: 'two resyncs' });
  t.equal(errors.length, 2, 'not told again at each resync');
  await rm(join(root, 'full'), { recursive: true });
  const resyncs = changes;
  await until(() => changes >= resyncs + 2, { what: 'a resync without it' });
  await mkdir(join(root, 'full'));
  await until(() => errors.length === 3, { what: 'the dir that came back told again' });
  t.equal(errors[2]?.path, join(root, 'full'));

  // Without onError a failure only leaves the dir unwatched.
  const quiet = watchDirectory({ root, subdirectories: true, onChange: () => {}, watchDir });
  await quiet.ready;
  t.same(quiet.watchedPaths(), [root]);
  quiet.close();
});

t.test('no onChange after close, also when closed during a sync', async (t) => {
  const root = await tempDir(t);
  // Closed while the first listing is in flight: nothing gets watched.
  const early = watchDirectory({ root, subdirectories: true, onChange: () => t.fail('early') });
  early.close();
  await early.ready;
  t.same(early.watchedPaths(), [], 'closed before the listing came back');

  // Closed by onError during a sync: the dirs after it are not watched, no onChange follows.
  const failing = new Set<string>();
  const { made, watchDir } = fakeWatchers((path) =>
    failing.has(path) ? errno('ENOSPC') : undefined,
  );
  let changes = 0;
  const watch = watchDirectory({
    root,
    subdirectories: true,
    onChange: () => changes++,
    onError: () => watch.close(),
    settleMs: 10,
    resyncMs: 600_000,
    watchDir,
  });
  await watch.ready;
  t.same(watch.watchedPaths(), [root]);
  for (const name of ['c', 'd']) {
    await mkdir(join(root, name));
    failing.add(join(root, name));
  }
  made[0]?.listener();
  await until(() => made.every((m) => m.closed), { what: 'the watch closed' });
  await delay(50);
  t.equal(changes, 0, 'closed during the sync: no onChange');
  t.same(watch.watchedPaths(), []);

  // Closed with a burst settling: its timer is cancelled. The settle time is long against the
  // event's arrival (a busy machine must not fire it before the close) and waited out after.
  const settling = watchDirectory({
    root,
    onChange: () => t.fail('settling'),
    settleMs: 1_000,
    resyncMs: 600_000,
  });
  await settling.ready;
  await writeFile(join(root, 'x'), '');
  await delay(100);
  settling.close();
  await delay(1_200);
  t.same(settling.watchedPaths(), []);
});

t.test('a root that loops is told, not thrown', async (t) => {
  const dir = await tempDir(t);
  const root = join(dir, 'loop');
  await symlink('loop', root);
  const errors: FsError[] = [];
  const watch = watchDirectory({ root, onChange: () => {}, onError: (err) => errors.push(err) });
  await watch.ready;
  watch.close();
  t.equal(errors.length, 1);
  t.match(errors[0]?.message, /^cannot watch .*loop: ELOOP/);
});
