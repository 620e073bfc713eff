import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { KubeObject } from '../../src/api/meta.js';
import { type Clock, ManualClock } from '../../src/base/clock.js';
import * as regularFile from '../../src/fs/regular-file.js';
import { isStoreError, type StoreError } from '../../src/store/errors.js';
import { MemoryStore, type MemoryStoreOptions } from '../../src/store/memory-store.js';
import {
  STATE_OBJECT_MAX_BYTES,
  StateDirectory,
} from '../../src/store/state-directory/state-directory.js';
import type { CorruptFileHandler } from '../../src/store/state-persistence.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { importedUrl, moduleFileUrl } from '../support/project-files.js';
import {
  flush,
  GadgetKind,
  gadget,
  type Thing,
  ThingKind,
  type Widget,
  WidgetKind,
  widget,
} from '../support/store-fixtures.js';

/** Store options persisting to stateDir, as the embedded mode opens its store. */
function persisted(options: {
  stateDir: string;
  clock?: Clock;
  onCorrupt?: CorruptFileHandler;
}): MemoryStoreOptions {
  const { stateDir, ...rest } = options;
  return {
    ...(rest.clock ? { clock: rest.clock } : {}),
    persistence: new StateDirectory(stateDir, rest),
  };
}

const widgetDir = (root: string, namespace: string) =>
  join(root, 'example.cert-csi.io', 'widgets', namespace);

async function everything(store: MemoryStore) {
  return {
    widgets: await store.list(WidgetKind),
    gadgets: await store.list(GadgetKind),
    things: await store.list(ThingKind),
  };
}

t.test('a restarted store returns the same objects, rvs, uids and timestamps', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  const w = await store.create<Widget>(
    WidgetKind,
    widget('w', 'default', { spec: { size: 1 }, metadata: { name: 'w', labels: { a: 'b' } } }),
  );
  await store.updateStatus<Widget>(WidgetKind, { ...w, status: { phase: 'Ready' } });
  await store.create(GadgetKind, gadget('g'));
  await store.create<Thing>(ThingKind, {
    apiVersion: 'v1',
    kind: 'Thing',
    metadata: { name: 's', namespace: 'kube-system' },
    data: { k: 'dg==' },
  });
  const longName = `${'x'.repeat(240)}.example`;
  await store.create(WidgetKind, widget(longName, 'default'));
  await store.create(WidgetKind, widget('gone', 'default'));
  await store.delete(WidgetKind, 'gone', 'default');
  const before = await everything(store);
  await store.close();

  const reopened = await MemoryStore.open(persisted({ stateDir }));
  t.same(await everything(reopened), before, 'deep-equal after restart');
  t.equal(reopened.resourceVersion, '7', 'the counter includes the last delete');
  const next = await reopened.create(WidgetKind, widget('next'));
  t.equal(next.metadata.resourceVersion, '8', 'the counter continues');

  t.same(
    (await readdir(widgetDir(stateDir, 'default'))).sort().length,
    3,
    'w, the long name and next',
  );
  const onDisk = JSON.parse(await readFile(join(widgetDir(stateDir, 'default'), 'w.json'), 'utf8'));
  t.same(
    onDisk,
    before.widgets.items.find((i) => i.metadata.name === 'w'),
  );
  t.ok(await stat(join(stateDir, 'example.cert-csi.io', 'gadgets', '_cluster', 'g.json')));
  t.ok(await stat(join(stateDir, 'core', 'things', 'kube-system', 's.json')));
  t.equal(
    (await stat(join(stateDir, 'core', 'things', 'kube-system', 's.json'))).mode & 0o777,
    0o600,
    'private files',
  );
  t.equal((await readFile(join(stateDir, 'resource-version'), 'utf8')).trim(), '7');
  await reopened.close();
});

t.test('the counter is the larger of the saved counter and the newest object', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  await store.create(WidgetKind, widget('a'));
  await store.delete(WidgetKind, 'a', 'default'); // counter file: 2
  await store.create(WidgetKind, widget('b')); // rv 3, only in b.json
  await store.close();
  const reopened = await MemoryStore.open(persisted({ stateDir }));
  t.equal(reopened.resourceVersion, '3');
  t.equal((await reopened.create(WidgetKind, widget('c'))).metadata.resourceVersion, '4');
});

t.test('a mutation resolves once its file is durable, and delete removes it', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  const created = await store.create(WidgetKind, widget('w'));
  const file = join(widgetDir(stateDir, 'default'), 'w.json');
  t.same(JSON.parse(await readFile(file, 'utf8')), created);
  await store.delete(WidgetKind, 'w', 'default');
  await t.rejects(stat(file), { code: 'ENOENT' });
  t.same(await readdir(widgetDir(stateDir, 'default')), [], 'no temp files left');
});

t.test('concurrent writes: last state wins on disk, events in rv order', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  await store.create(WidgetKind, widget('w', 'default', { spec: { size: 0 } }));
  const rvs: number[] = [];
  const watch = store.watch<Widget>(
    WidgetKind,
    { resourceVersion: store.resourceVersion },
    { onEvent: (e) => rvs.push(Number(e.object.metadata.resourceVersion)), onError: t.fail },
  );
  const writes: Promise<unknown>[] = [];
  for (let i = 1; i <= 30; i++) {
    writes.push(store.update(WidgetKind, widget('w', 'default', { spec: { size: i } })));
    writes.push(store.create(WidgetKind, widget(`other${i}`, `ns${i % 3}`)));
  }
  const results = (await Promise.all(writes)) as KubeObject[];
  await flush();
  t.equal(rvs.length, 60);
  t.same(
    rvs,
    [...rvs].sort((a, b) => a - b),
    'events arrive in resourceVersion order',
  );
  t.same(new Set(results.map((r) => r.metadata.resourceVersion)).size, 60, 'each write its own rv');
  const onDisk = JSON.parse(await readFile(join(widgetDir(stateDir, 'default'), 'w.json'), 'utf8'));
  t.equal(onDisk.spec.size, 30, 'the last update wins on disk');
  t.same(onDisk, await store.get(WidgetKind, 'w', 'default'));
  watch.stop();
  await store.close();
  const reopened = await MemoryStore.open(persisted({ stateDir }));
  t.equal((await reopened.list(WidgetKind)).items.length, 31);
});

t.test('updates with a stale rv conflict even while writes are in flight', async (t) => {
  const store = await MemoryStore.open(persisted({ stateDir: t.testdir() }));
  const created = await store.create<Widget>(WidgetKind, widget('w'));
  const first = store.update<Widget>(WidgetKind, { ...created, spec: { size: 1 } });
  const second = store.update<Widget>(WidgetKind, { ...created, spec: { size: 2 } });
  t.equal((await first).spec?.size, 1);
  await t.rejects(second, { name: 'StoreError', reason: 'Conflict' });
  const same = await store.update<Widget>(WidgetKind, await first);
  t.equal(
    same.metadata.resourceVersion,
    (await first).metadata.resourceVersion,
    'no-op: no write, no rv',
  );
});

t.test('corrupt files are moved aside and reported; start-up goes on', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  await store.create(WidgetKind, widget('good'));
  await store.create(WidgetKind, widget('other'));
  await store.close();
  const dir = widgetDir(stateDir, 'default');
  await writeFile(join(dir, 'bad.json'), '{"metadata": {"name": "bad", "resour');
  await writeFile(join(dir, 'array.json'), '[]');
  await writeFile(join(dir, 'nometa.json'), '{}');
  await writeFile(join(dir, 'noname.json'), '{"metadata": {}}');
  await writeFile(join(dir, 'norv.json'), '{"metadata": {"name": "norv"}}');
  await writeFile(
    join(dir, 'badrv.json'),
    '{"metadata": {"name": "badrv", "resourceVersion": "x"}}',
  );
  await writeFile(
    join(dir, 'elsewhere.json'),
    JSON.stringify({ metadata: { name: 'elsewhere', namespace: 'other', resourceVersion: '1' } }),
  );
  await writeFile(
    join(dir, 'other.json'),
    JSON.stringify({ metadata: { name: 'renamed', namespace: 'default', resourceVersion: '1' } }),
  );
  await writeFile(join(dir, '.good.json.tmp-abc123'), 'half a write');
  await writeFile(join(dir, 'README'), 'not state');
  await writeFile(join(stateDir, 'resource-version'), 'garbage');

  const reports: Array<{ error: StoreError; path: string; movedTo: string }> = [];
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 10, 0, 0));
  const reopened = await MemoryStore.open(
    persisted({
      stateDir,
      clock,
      onCorrupt: (error, path, movedTo) => reports.push({ error, path, movedTo }),
    }),
  );
  t.same(
    (await reopened.list(WidgetKind)).items.map((i) => i.metadata.name),
    ['good'],
  );
  t.equal(
    reopened.resourceVersion,
    '1',
    'the counter comes from the objects when its file is corrupt',
  );
  t.same(reports.map((r) => r.path.slice(stateDir.length + 1)).sort(), [
    'example.cert-csi.io/widgets/default/array.json',
    'example.cert-csi.io/widgets/default/bad.json',
    'example.cert-csi.io/widgets/default/badrv.json',
    'example.cert-csi.io/widgets/default/elsewhere.json',
    'example.cert-csi.io/widgets/default/nometa.json',
    'example.cert-csi.io/widgets/default/noname.json',
    'example.cert-csi.io/widgets/default/norv.json',
    'example.cert-csi.io/widgets/default/other.json',
    'resource-version',
  ]);
  for (const report of reports) {
    t.ok(isStoreError(report.error, 'InternalError'));
    t.equal(report.movedTo, `${report.path}.corrupt-2026-11-21T10-00-00-000Z`);
    t.match(report.error.message, `corrupt state file ${report.path} moved to ${report.movedTo}`);
    t.ok(await stat(report.movedTo));
  }
  t.match(
    reports.find((r) => r.path.endsWith('other.json'))?.error.message,
    /does not match the file name/,
  );
  t.match(
    reports.find((r) => r.path.endsWith('elsewhere.json'))?.error.message,
    /does not match the directory/,
  );
  const files = await readdir(dir);
  t.notOk(files.includes('.good.json.tmp-abc123'), 'stale temp files are removed');
  t.ok(files.includes('README'), 'unknown files are left alone');
  await reopened.close();

  const third = await MemoryStore.open(
    persisted({ stateDir, onCorrupt: () => t.fail('nothing is corrupt') }),
  );
  t.same(
    (await third.list(WidgetKind)).items.map((i) => i.metadata.name),
    ['good'],
    'moved-aside files stay ignored',
  );
});

t.test('watch history does not survive a restart', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  for (let i = 0; i < 3; i++) await store.create(WidgetKind, widget(`w${i}`));
  await store.close();
  const reopened = await MemoryStore.open(persisted({ stateDir }));
  const errors: Error[] = [];
  reopened.watch(
    WidgetKind,
    { resourceVersion: '2' },
    { onEvent: t.fail, onError: (err) => errors.push(err) },
  );
  const seen: string[] = [];
  const current = reopened.watch(
    WidgetKind,
    { resourceVersion: '3' },
    { onEvent: (e) => seen.push(e.object.metadata.name), onError: t.fail },
  );
  await reopened.create(WidgetKind, widget('after'));
  await flush();
  t.equal(errors[0]?.message, 'too old resource version: 2 (3)');
  t.same(seen, ['after'], 'from the restored rv on, watches work');
  current.stop();
});

t.test('a store made with new MemoryStore waits for its load', async (t) => {
  const stateDir = t.testdir();
  const first = await MemoryStore.open(persisted({ stateDir }));
  await first.create(WidgetKind, widget('w'));
  await first.close();
  const store = new MemoryStore(persisted({ stateDir }));
  const seen: string[] = [];
  const watch = store.watch(
    WidgetKind,
    { resourceVersion: '1' },
    { onEvent: (e) => seen.push(e.type), onError: t.fail },
  );
  const stopped = store.watch(WidgetKind, {}, { onEvent: t.fail, onError: t.fail });
  stopped.stop();
  t.same((await store.get(WidgetKind, 'w', 'default')).metadata.resourceVersion, '1');
  await store.delete(WidgetKind, 'w', 'default');
  await flush();
  t.same(seen, ['DELETED']);
  watch.stop();
});

t.test('a state dir that cannot be loaded fails open, reads and watches', async (t) => {
  const root = t.testdir({ file: 'not a directory' });
  const stateDir = join(root, 'file');
  await t.rejects(MemoryStore.open(persisted({ stateDir })));
  const store = new MemoryStore(persisted({ stateDir }));
  const errors: Error[] = [];
  store.watch(WidgetKind, {}, { onEvent: t.fail, onError: (err) => errors.push(err) });
  store.watch(WidgetKind, {}, { onEvent: t.fail, onError: t.fail }).stop();
  await t.rejects(store.get(WidgetKind, 'w', 'default'));
  await flush();
  t.equal(errors.length, 1);
  await store.close();
});

t.test('a directory in place of the counter is moved aside', async (t) => {
  const stateDir = t.testdir({ 'resource-version': { 'not-a-file': '' } });
  const reports: string[] = [];
  const store = await MemoryStore.open(
    persisted({
      stateDir,
      onCorrupt: (error) => reports.push(error.message),
    }),
  );
  t.equal(store.resourceVersion, '0');
  t.match(reports, [
    /resource-version moved to .*: it is not a regular file but a directory: only regular files are read$/,
  ]);
  await store.delete(WidgetKind, 'x', 'default').catch(() => undefined);
  await store.create(WidgetKind, widget('x'));
  await store.delete(WidgetKind, 'x', 'default');
  t.equal((await readFile(join(stateDir, 'resource-version'), 'utf8')).trim(), '2');
});

t.test('an unreadable counter stops the load', async (t) => {
  const stateDir = t.testdir({ 'resource-version': '7\n' });
  // An I/O error: neither "missing" nor a file refused for what it is.
  const failing = Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
  const { StateDirectory: Failing } = await t.mockImport<
    typeof import('../../src/store/state-directory/state-directory.js')
  >(moduleFileUrl('src/store/state-directory/state-directory.ts'), {
    [importedUrl('src/fs/regular-file.ts')]: {
      ...regularFile,
      readRegularFile: async () => {
        throw failing;
      },
    },
  });
  await t.rejects(MemoryStore.open({ persistence: new Failing(stateDir) }), { code: 'EIO' });
  t.equal(await readFile(join(stateDir, 'resource-version'), 'utf8'), '7\n', 'left in place');
});

t.test('odd entries named as state files are set aside at once, never waited on', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  await store.create(WidgetKind, widget('good'));
  await store.close();
  const dir = widgetDir(stateDir, 'default');
  const make = await oddFileMaker(t);
  for (const kind of ODD_KINDS) {
    // A link's target is a valid object: only following the link would load it.
    const object = { metadata: { name: kind, namespace: 'default', resourceVersion: '9' } };
    await make(join(dir, `${kind}.json`), kind, JSON.stringify(object));
  }
  await rm(join(stateDir, 'resource-version'), { force: true });
  await make(join(stateDir, 'resource-version'), 'fifo');
  await writeFile(join(dir, 'huge.json'), ' '.repeat(STATE_OBJECT_MAX_BYTES + 1));
  const reports: string[] = [];
  const reopened = await MemoryStore.open(
    persisted({ stateDir, onCorrupt: (error) => reports.push(error.message) }),
  );
  t.same(
    (await reopened.list(WidgetKind)).items.map((i) => i.metadata.name),
    ['good'],
    'only the regular file is loaded',
  );
  t.equal(reopened.resourceVersion, '1', 'the counter comes from the objects');
  const reasons = Object.fromEntries(
    reports.map((message) => {
      const [, name, reason] = /\/([^/]+) moved to \S+: (.*)$/.exec(message) ?? [];
      return [name, reason];
    }),
  );
  t.same(reasons, {
    'fifo.json': 'it is not a regular file but a FIFO: only regular files are read',
    'link-to-fifo.json':
      'it is not a regular file but a symbolic link: only regular files are read',
    'socket.json': 'it is not a regular file but a socket: only regular files are read',
    'directory.json': 'it is not a regular file but a directory: only regular files are read',
    'link-to-file.json':
      'it is not a regular file but a symbolic link: only regular files are read',
    'huge.json': 'it is larger than 16 MiB, the most read for it: not read',
    'resource-version': 'it is not a regular file but a FIFO: only regular files are read',
  });
  await reopened.close();
});

t.test('an object larger than a state file may be is refused, nothing changed', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  const thing = (data: Record<string, string>): Thing => ({
    apiVersion: 'v1',
    kind: 'Thing',
    metadata: { name: 'big', namespace: 'default' },
    data,
  });
  await store.create<Thing>(ThingKind, thing({ k: 'c21hbGw=' }));
  const huge = thing({ k: 'x'.repeat(STATE_OBJECT_MAX_BYTES) });
  await t.rejects(store.update(ThingKind, huge), {
    reason: 'InternalError',
    message:
      /could not persist MODIFIED .*: the object is \d+ bytes as stored, more than the 16 MiB a state file may have/,
  });
  t.same((await store.get<Thing>(ThingKind, 'big', 'default')).data, { k: 'c21hbGw=' }, 'kept');
  await store.close();
});

t.test('a failed write leaves the store unchanged', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  await store.create(WidgetKind, widget('w'));
  // A file where the namespace directory should be makes every write there fail.
  await writeFile(widgetDir(stateDir, 'broken'), 'in the way');
  await t.rejects(store.create(WidgetKind, widget('w', 'broken')), {
    reason: 'InternalError',
    message:
      /could not persist ADDED of widgets.example.cert-csi.io "w" in namespace "broken" at resourceVersion 2/,
  });
  await t.rejects(store.get(WidgetKind, 'w', 'broken'), { name: 'StoreError', reason: 'NotFound' });
  t.equal(store.resourceVersion, '1');
  const next = await store.create(WidgetKind, widget('x'));
  t.ok(Number(next.metadata.resourceVersion) > 2, 'the failed rv is never reused');

  // The counter must be durable before a delete; if it cannot be written, nothing is deleted.
  await rm(join(stateDir, 'resource-version'), { force: true });
  await mkdir(join(stateDir, 'resource-version'));
  await t.rejects(store.delete(WidgetKind, 'x', 'default'), {
    reason: 'InternalError',
    message: /could not persist DELETED/,
  });
  t.ok(await store.get(WidgetKind, 'x', 'default'), 'still there');
  await store.close();
});

t.test('close waits for writes in flight', async (t) => {
  const stateDir = t.testdir();
  const store = await MemoryStore.open(persisted({ stateDir }));
  const pending = store.create(WidgetKind, widget('w'));
  await store.close();
  t.ok(await stat(join(widgetDir(stateDir, 'default'), 'w.json')), 'durable when close resolves');
  await pending;
});
