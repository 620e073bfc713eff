import t from 'tap';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { until } from '../support/eventually.js';
import { FaultyStore } from '../support/faulty-store.js';
import { GadgetKind, gadget, type Widget, WidgetKind, widget } from '../support/store-fixtures.js';

t.test('one informer per kind, however many ask; listed once', async (t) => {
  const memory = new MemoryStore();
  await memory.create(WidgetKind, widget('a', 'ns'));
  const store = new FaultyStore(memory);
  const lists = store.listCalls;
  const informers = new SharedInformers(store);
  t.teardown(() => informers.stop());
  const first = informers.informer<Widget>(WidgetKind);
  const second = informers.informer<Widget>(WidgetKind);
  t.equal(first, second, 'the same informer');
  t.notOk(informers.hasSynced(), 'not started yet');
  informers.start();
  await informers.waitForSync();
  t.ok(informers.hasSynced());
  t.same(lists, ['widgets'], 'one list for two users');
  t.equal(first.get('a', 'ns')?.metadata.name, 'a');
});

t.test('an informer asked for after start starts at once', async (t) => {
  const memory = new MemoryStore();
  await memory.create(GadgetKind, gadget('g'));
  const informers = new SharedInformers(memory);
  t.teardown(() => informers.stop());
  informers.start();
  const late = informers.informer(GadgetKind);
  await informers.waitForSync();
  t.equal(late.get('g')?.metadata.name, 'g');
});

t.test('a scope limits what the process lists of one kind', async (t) => {
  const memory = new MemoryStore();
  await memory.create(
    WidgetKind,
    widget('mine', 'ns', { metadata: { name: 'mine', labels: { node: 'a' } } }),
  );
  await memory.create(
    WidgetKind,
    widget('other', 'ns', { metadata: { name: 'other', labels: { node: 'b' } } }),
  );
  await memory.create(GadgetKind, gadget('g'));
  const store = new FaultyStore(memory);
  const lists = store.listCalls;
  const informers = new SharedInformers(store, {
    scopes: new Map([['widgets.example.cert-csi.io', { labelSelector: 'node=a' }]]),
  });
  t.teardown(() => informers.stop());
  const widgets = informers.informer<Widget>(WidgetKind);
  informers.informer(GadgetKind);
  informers.start();
  await informers.waitForSync();
  t.same(lists.sort(), ['gadgets', 'widgets?node=a']);
  t.same(
    widgets.list().map((w) => w.metadata.name),
    ['mine'],
  );
});

t.test('a scope may select by field too: the informer lists and watches with it', async (t) => {
  const memory = new MemoryStore();
  await memory.create(WidgetKind, widget('mine', 'ns', { spec: { colour: 'blue' } }));
  await memory.create(WidgetKind, widget('other', 'ns', { spec: { colour: 'red' } }));
  const store = new FaultyStore(memory);
  const informers = new SharedInformers(store, {
    scopes: new Map([['widgets.example.cert-csi.io', { fieldSelector: 'spec.colour=blue' }]]),
  });
  t.teardown(() => informers.stop());
  const widgets = informers.informer<Widget>(WidgetKind);
  informers.start();
  await informers.waitForSync();
  t.same(
    widgets.list().map((w) => w.metadata.name),
    ['mine'],
  );
  t.same(
    store.watchCalls.map((options) => options.fieldSelector),
    ['spec.colour=blue'],
    'the watch selects too',
  );
});

t.test(
  'aborting a wait for a cache that cannot sync stops the informers and rejects',
  async (t) => {
    const memory = new MemoryStore();
    const failing = new FaultyStore(memory);
    failing.listsFailWith = new Error('API down');
    const errors: string[] = [];
    const informers = new SharedInformers(failing, {
      onError: (err) => errors.push(err.message),
    });
    informers.informer(WidgetKind);
    informers.start();
    const abort = new AbortController();
    const waiting = informers.waitForSync(abort.signal);
    await until(() => errors.includes('API down'), { what: 'the list failure' });
    abort.abort();
    await t.rejects(waiting, /stopped before its cache synced/);
    const already = new AbortController();
    already.abort();
    await t.rejects(informers.waitForSync(already.signal), /stopped before its cache synced/);
  },
);
