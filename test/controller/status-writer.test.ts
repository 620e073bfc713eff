import t from 'tap';
import { writeStatusIfChanged } from '../../src/controller/status-writer.js';
import { isStoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { type Widget, WidgetKind, widget } from '../support/store-fixtures.js';

t.test('a status is written only when it changed', async (t) => {
  const store = new MemoryStore();
  const created = await store.create(WidgetKind, widget('w', 'ns'));
  t.equal(await writeStatusIfChanged(store, WidgetKind, created, { phase: 'a', count: 1 }), true);
  const written = await store.get<Widget>(WidgetKind, 'w', 'ns');
  t.same(written.status, { phase: 'a', count: 1 });
  const rv = written.metadata.resourceVersion;
  // The same status in another key order, with an undefined field: nothing to write.
  t.equal(
    await writeStatusIfChanged(store, WidgetKind, written, {
      count: 1,
      phase: 'a',
      other: undefined,
    } as Widget['status']),
    false,
  );
  t.equal((await store.get<Widget>(WidgetKind, 'w', 'ns')).metadata.resourceVersion, rv);
  t.equal(await writeStatusIfChanged(store, WidgetKind, created, {}), false, 'none and empty');
});

t.test('a deleted object is nothing to write; a stale one is a Conflict to retry', async (t) => {
  const store = new MemoryStore();
  const created = await store.create(WidgetKind, widget('w', 'ns'));
  await store.update(WidgetKind, { ...created, spec: { size: 2 } });
  const conflict = await writeStatusIfChanged(store, WidgetKind, created, { phase: 'x' }).catch(
    (err: unknown) => err,
  );
  t.ok(isStoreError(conflict, 'Conflict'), 'thrown on');
  await store.delete(WidgetKind, 'w', 'ns');
  t.equal(await writeStatusIfChanged(store, WidgetKind, created, { phase: 'x' }), false);
});
