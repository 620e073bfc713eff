// A state dir on tmpfs (an embedded plugin's state under /dev/shm) is loaded with synchronous
// reads, as the volume files there are; on disk through the thread pool. Same objects either way,
// and the same refusals of what is no regular file.
import { cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { isOnTmpfs } from '../../src/fs/volatile-fs.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StateDirectory } from '../../src/store/state-directory/state-directory.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { flush, WidgetKind, widget } from '../support/store-fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { countFsRequests } from '../volume/fixtures/fs-request-counter.js';
import { spyOnFsync } from '../volume/fixtures/fsync-spy.js';

const OBJECTS = 200;

t.test(
  'a state dir on tmpfs loads with synchronous reads, the same objects as on disk',
  async (t) => {
    const shm = await tempDir(t, 'cert-csi-state-', '/dev/shm').catch(() => undefined);
    if (shm === undefined || !isOnTmpfs(shm)) {
      t.pass('needs /dev/shm on tmpfs', { skip: true });
      return;
    }
    const onTmpfs = join(shm, 'state');
    const first = await MemoryStore.open({ persistence: new StateDirectory(onTmpfs) });
    for (let i = 0; i < OBJECTS; i++) await first.create(WidgetKind, widget(`w${i}`));
    await flush();
    await first.close();
    const disk = t.testdir();
    const onDisk = join(disk, 'state');
    await cp(onTmpfs, onDisk, { recursive: true });
    const dir = join(onTmpfs, 'example.cert-csi.io', 'widgets', 'default');
    const diskDir = join(onDisk, 'example.cert-csi.io', 'widgets', 'default');
    // A socket is moved into place: its maker's temp dir is on the same filesystem.
    for (const [base, make] of [
      [dir, await oddFileMaker(t, shm)],
      [diskDir, await oddFileMaker(t)],
    ] as const) {
      for (const kind of ODD_KINDS) {
        const object = { metadata: { name: kind, namespace: 'default', resourceVersion: '9' } };
        await make(join(base, `${kind}.json`), kind, JSON.stringify(object));
      }
    }

    const requests = countFsRequests(t);
    const reports: string[] = [];
    const fromTmpfs = await MemoryStore.open({
      persistence: new StateDirectory(onTmpfs, { onCorrupt: (e) => reports.push(e.message) }),
    });
    const tmpfsRequests = requests.count;
    t.ok(
      tmpfsRequests < OBJECTS / 10,
      `on tmpfs: no thread-pool call per object (${tmpfsRequests} for ${OBJECTS} objects)`,
    );
    const diskReports: string[] = [];
    const fromDisk = await MemoryStore.open({
      persistence: new StateDirectory(onDisk, { onCorrupt: (e) => diskReports.push(e.message) }),
    });
    t.ok(requests.count - tmpfsRequests > OBJECTS, 'on disk: thread-pool reads');

    const names = async (store: MemoryStore) =>
      (await store.list(WidgetKind)).items.map((w) => w.metadata.name).sort();
    t.equal((await names(fromTmpfs)).length, OBJECTS, 'every object loaded, none of the odd files');
    t.same(await names(fromTmpfs), await names(fromDisk));
    t.equal(fromTmpfs.resourceVersion, fromDisk.resourceVersion);
    t.equal(reports.length, ODD_KINDS.length, 'every odd file reported');
    const shown = (messages: string[], root: string) =>
      messages
        .map((m) => m.replaceAll(root, '<root>').replace(/corrupt-[^ ]+/, 'corrupt-…'))
        .sort();
    t.same(shown(reports, onTmpfs), shown(diskReports, onDisk), 'the same refusals');
    t.equal(
      (await readdir(dir)).filter((name) => name.includes('.corrupt-')).length,
      ODD_KINDS.length,
      'and set aside',
    );
    await fromTmpfs.close();
    await fromDisk.close();
  },
);

t.test(
  "a loaded state dir keeps its filesystem's durability for every write: fsyncs on disk, none on tmpfs",
  async (t) => {
    const disk = t.testdir();
    if (isOnTmpfs(disk)) {
      t.pass('the repo is on tmpfs here', { skip: true });
      return;
    }
    const shm = await tempDir(t, 'cert-csi-state-', '/dev/shm').catch(() => undefined);
    const roots: Array<[string, string]> = [[join(disk, 'state'), 'disk']];
    if (shm !== undefined && isOnTmpfs(shm)) roots.push([join(shm, 'state'), 'tmpfs']);
    else t.pass('needs /dev/shm on tmpfs for the tmpfs half', { skip: true });
    const syncs = await spyOnFsync(t);
    for (const [root, medium] of roots) {
      const store = await MemoryStore.open({ persistence: new StateDirectory(root) });
      // The first write of a kind creates its dirs; count the writes after it.
      await store.create(WidgetKind, widget('first'));
      await flush();
      const before = syncs.count;
      await store.create(WidgetKind, widget('second'));
      await store.delete(WidgetKind, 'second', 'default');
      await flush();
      const counted = syncs.count - before;
      // The create: the object's file and its dir. The delete: the dir of the removed file, and
      // the counter's file and dir (no object file carries a deletion's resourceVersion).
      t.equal(counted, medium === 'disk' ? 5 : 0, `${medium}: fsyncs of a create and a delete`);
      await store.close();
      const reopened = await MemoryStore.open({ persistence: new StateDirectory(root) });
      t.same(
        (await reopened.list(WidgetKind)).items.map((w) => w.metadata.name),
        ['first'],
        `${medium}: what was written is what loads`,
      );
      await reopened.close();
    }
  },
);
