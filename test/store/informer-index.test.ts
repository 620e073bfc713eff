import t from 'tap';
import type { IndexDefinition } from '../../src/store/informer.js';
import { Informer } from '../../src/store/informer.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { flush, type Widget, WidgetKind, widget } from '../support/store-fixtures.js';

const byColour: IndexDefinition<Widget> = {
  name: 'colour',
  values: (w) => (w.spec?.colour ? [w.spec.colour] : []),
};

const names = (items: Widget[]) => items.map((w) => `${w.metadata.namespace}/${w.metadata.name}`);

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await flush();
}

t.test('an index finds objects by value and follows adds, updates and deletes', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('b', 'ns1', { spec: { colour: 'red' } }));
  await store.create(WidgetKind, widget('a', 'ns2', { spec: { colour: 'red' } }));
  await store.create(WidgetKind, widget('c', 'ns1', { spec: { colour: 'blue' } }));
  await store.create(WidgetKind, widget('d', 'ns1'));
  const informer = new Informer<Widget>(store, WidgetKind);
  informer.start();
  t.teardown(() => informer.stop());
  await informer.waitForSync();
  // Added after the cache filled: it indexes what the cache already holds.
  informer.addIndex(byColour);
  informer.addIndex(byColour); // the same definition again: a no-op
  t.same(names(informer.byIndex(byColour, 'red')), ['ns1/b', 'ns2/a'], 'sorted like list');
  t.same(names(informer.byIndex(byColour, 'blue')), ['ns1/c']);
  t.same(informer.byIndex(byColour, 'green'), []);

  const b = await store.get<Widget>(WidgetKind, 'b', 'ns1');
  await store.update(WidgetKind, { ...b, spec: { colour: 'blue' } });
  await store.create(WidgetKind, widget('e', 'ns3', { spec: { colour: 'red' } }));
  await store.delete(WidgetKind, 'c', 'ns1');
  await settle();
  t.same(names(informer.byIndex(byColour, 'red')), ['ns2/a', 'ns3/e'], 'b moved out, e came in');
  t.same(names(informer.byIndex(byColour, 'blue')), ['ns1/b'], 'c deleted, b moved in');
  t.equal(informer.getByKey('ns1/b')?.spec?.colour, 'blue');
  t.equal(informer.getByKey('ns1/c'), undefined);
});

t.test('an index is kept through a relist', async (t) => {
  // A restarted informer lists again and turns the difference into deletes and adds.
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('a', 'ns', { spec: { colour: 'red' } }));
  const informer = new Informer<Widget>(store, WidgetKind, { relistBackoffMs: 1 });
  informer.addIndex(byColour);
  informer.start();
  t.teardown(() => informer.stop());
  await informer.waitForSync();
  informer.stop();
  await store.delete(WidgetKind, 'a', 'ns');
  await store.create(WidgetKind, widget('b', 'ns', { spec: { colour: 'red' } }));
  await store.create(WidgetKind, widget('c', 'ns', { spec: { colour: 'green' } }));
  await store.create(WidgetKind, widget('d', 'ns', { spec: { colour: 'green' } }));
  informer.start();
  await informer.waitForSync();
  t.same(names(informer.byIndex(byColour, 'red')), ['ns/b'], 'a gone, b found');
  t.same(names(informer.byIndex(byColour, 'green')), ['ns/c', 'ns/d']);
});

t.test('two definitions under one name, or an index never added, are bugs', async (t) => {
  const informer = new Informer<Widget>(new MemoryStore(), WidgetKind);
  informer.addIndex(byColour);
  t.throws(
    () => informer.addIndex({ name: 'colour', values: () => [] }),
    /index "colour" is already defined/,
  );
  t.throws(
    () => informer.byIndex({ name: 'size', values: () => [] }, 'x'),
    /index "size" was not added/,
  );
  t.throws(
    () => informer.byIndex({ name: 'colour', values: () => [] }, 'x'),
    /index "colour" was not added/,
    'a look-up must use the definition that was added',
  );
});
