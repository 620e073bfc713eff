import t from 'tap';
import type { KubeObject } from '../../src/api/meta.js';
import { ManualClock } from '../../src/base/clock.js';
import { StoreError } from '../../src/store/errors.js';
import { Informer } from '../../src/store/informer.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { FaultyStore } from '../support/faulty-store.js';
import {
  flush,
  GadgetKind,
  gadget,
  type Widget,
  WidgetKind,
  widget,
} from '../support/store-fixtures.js';

/** Records an informer's events as short strings: `add a/x 3`, `update a/x 3->4`, `delete a/x`. */
function record(informer: Informer<Widget>): string[] {
  const log: string[] = [];
  const key = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
  informer.on('add', (o) => log.push(`add ${key(o)} ${o.metadata.resourceVersion}`));
  informer.on('update', (a, b) =>
    log.push(`update ${key(b)} ${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`),
  );
  informer.on('delete', (o) => log.push(`delete ${key(o)}`));
  return log;
}

async function settle(times = 5): Promise<void> {
  for (let i = 0; i < times; i++) await flush();
}

t.test('initial list fills the cache and fires add for each object', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('b', 'ns1', { spec: { size: 2 } }));
  await store.create(WidgetKind, widget('a', 'ns2'));
  await store.create(WidgetKind, widget('a', 'ns1'));
  const informer = new Informer<Widget>(store, WidgetKind);
  const log = record(informer);
  t.notOk(informer.hasSynced());
  const synced = informer.waitForSync();
  informer.start();
  informer.start(); // idempotent
  await synced;
  t.ok(informer.hasSynced());
  await informer.waitForSync();
  t.same(log, ['add ns1/a 3', 'add ns1/b 1', 'add ns2/a 2'], 'in list order');
  t.same(
    informer.list().map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    ['ns1/a', 'ns1/b', 'ns2/a'],
  );
  t.same(
    informer.list('ns2').map((o) => o.metadata.name),
    ['a'],
  );
  t.equal(informer.get('b', 'ns1')?.spec?.size, 2);
  t.equal(informer.get('b', 'ns2'), undefined);
  const cached = informer.get('b', 'ns1') as Widget;
  t.ok(Object.isFrozen(cached) && Object.isFrozen(cached.metadata) && Object.isFrozen(cached.spec));
  t.throws(() => {
    (cached.spec as { size: number }).size = 3;
  }, TypeError);
  informer.stop();
});

t.test('watch events become add, update and delete', async (t) => {
  const store = new MemoryStore();
  const informer = new Informer<Widget>(store, WidgetKind);
  const log = record(informer);
  informer.start();
  await informer.waitForSync();
  const created = await store.create<Widget>(WidgetKind, widget('w'));
  await store.update(WidgetKind, { ...created, spec: { size: 1 } });
  await store.updateStatus(WidgetKind, { ...widget('w'), status: { phase: 'Ready' } });
  await store.delete(WidgetKind, 'w', 'default');
  await settle();
  t.same(log, [
    'add default/w 1',
    'update default/w 1->2',
    'update default/w 2->3',
    'delete default/w',
  ]);
  t.same(informer.list(), []);
  informer.stop();
  await store.create(WidgetKind, widget('late'));
  await settle();
  t.equal(log.length, 4, 'nothing after stop');
});

t.test('namespace and label selector options', async (t) => {
  const store = new MemoryStore();
  await store.create(
    WidgetKind,
    widget('a', 'x', { metadata: { name: 'a', labels: { app: 'web' } } }),
  );
  await store.create(WidgetKind, widget('b', 'x'));
  await store.create(
    WidgetKind,
    widget('c', 'y', { metadata: { name: 'c', labels: { app: 'web' } } }),
  );
  const informer = new Informer<Widget>(store, WidgetKind, {
    namespace: 'x',
    labelSelector: 'app=web',
  });
  const log = record(informer);
  informer.start();
  await informer.waitForSync();
  await store.update(
    WidgetKind,
    widget('b', 'x', { metadata: { name: 'b', labels: { app: 'web' } } }),
  );
  await store.update(WidgetKind, widget('a', 'x'));
  await settle();
  t.same(log, ['add x/a 1', 'add x/b 4', 'delete x/a']);
  informer.stop();
});

t.test('a field selector caches only matching objects and drops one that stops', async (t) => {
  const store = new MemoryStore();
  const painted = (name: string, colour: string, labels: Record<string, string> = {}) =>
    widget(name, 'x', { metadata: { name, labels }, spec: { colour } });
  await store.create(WidgetKind, painted('a', 'blue'));
  await store.create(WidgetKind, painted('b', 'red'));
  const informer = new Informer<Widget>(store, WidgetKind, { fieldSelector: 'spec.colour=blue' });
  const log = record(informer);
  informer.start();
  await informer.waitForSync();
  t.same(
    informer.list().map((w) => w.metadata.name),
    ['a'],
    'listed: only the matching object',
  );
  await store.update(WidgetKind, painted('b', 'blue')); // rv 3: b starts matching
  await store.update(WidgetKind, painted('a', 'red')); // rv 4: a stops matching
  await store.update(WidgetKind, painted('a', 'red', { l: '1' })); // rv 5: a changes outside
  await store.create(WidgetKind, painted('c', 'green')); // rv 6: never matches
  await settle();
  t.same(log, ['add x/a 1', 'add x/b 3', 'delete x/a']);
  t.same(
    informer.list().map((w) => w.metadata.name),
    ['b'],
    'the one that stopped matching was dropped, the one that started was added',
  );
  t.equal(informer.get('a', 'x'), undefined);
  informer.stop();
});

t.test('a Gone watch relists and fires the differences', async (t) => {
  const inner = new MemoryStore({ historySize: 3 });
  const store = new FaultyStore(inner);
  for (const name of ['keep', 'change', 'remove']) await store.create(WidgetKind, widget(name));
  const informer = new Informer<Widget>(store, WidgetKind);
  const log = record(informer);
  // The watch starts late, after more changes than the history holds: the memory store
  // answers Gone by itself.
  store.hold();
  informer.start();
  await informer.waitForSync();
  await store.update(WidgetKind, widget('change', 'default', { spec: { size: 1 } }));
  await store.delete(WidgetKind, 'remove', 'default');
  await store.create(WidgetKind, widget('new'));
  await store.create(GadgetKind, gadget('filler'));
  store.release();
  await settle();
  t.equal(store.lists, 2, 'relisted once');
  t.same(log, [
    'add default/change 2',
    'add default/keep 1',
    'add default/remove 3',
    'update default/change 2->4',
    'add default/new 6',
    'delete default/remove',
  ]);
  t.same(
    informer.list().map((o) => o.metadata.name),
    (await store.list(WidgetKind)).items.map((o) => o.metadata.name),
  );
  await store.create(WidgetKind, widget('after'));
  await settle();
  t.equal(log.at(-1), 'add default/after 8', 'the new watch runs');
  informer.stop();
});

t.test('events lost on a broken watch are recovered by the relist after Gone', async (t) => {
  const store = new FaultyStore(new MemoryStore());
  await store.create(WidgetKind, widget('a'));
  const informer = new Informer<Widget>(store, WidgetKind);
  const log = record(informer);
  informer.start();
  await informer.waitForSync();
  store.drop(true);
  await store.update(WidgetKind, widget('a', 'default', { spec: { size: 5 } }));
  await store.create(WidgetKind, widget('b'));
  await settle();
  store.drop(false);
  store.fail(new StoreError('Gone', 'too old resource version: 1 (2)'));
  await settle();
  t.same(log, ['add default/a 1', 'update default/a 1->2', 'add default/b 3']);
  t.equal(store.watchCalls.at(-1)?.resourceVersion, '3', 'watches again from the new list');
  informer.stop();
});

t.test('other failures retry list and watch after an exponential backoff', async (t) => {
  const clock = new ManualClock();
  const store = new FaultyStore(new MemoryStore());
  await store.create(WidgetKind, widget('a'));
  const errors: Error[] = [];
  const informer = new Informer<Widget>(store, WidgetKind, {
    clock,
    relistBackoffMs: 100,
    maxRelistBackoffMs: 300,
    onError: (err) => errors.push(err),
  });
  const log = record(informer);
  store.listErrors.push(
    new Error('list 1'),
    new Error('list 2'),
    new Error('list 3'),
    new Error('list 4'),
  );
  informer.start();
  await settle();
  t.equal(store.lists, 1);
  t.notOk(informer.hasSynced());
  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    const due = clock.nextTimerAt() as number;
    delays.push(due - clock.now());
    clock.advance(due - clock.now());
    await settle();
  }
  t.same(delays, [100, 200, 300, 300], 'doubling, capped');
  t.equal(store.lists, 5);
  t.ok(informer.hasSynced());
  t.same(
    errors.map((e) => e.message),
    ['list 1', 'list 2', 'list 3', 'list 4'],
  );

  // A watch error: no relist until the backoff passes, then a fresh list and watch.
  await store.create(WidgetKind, widget('b'));
  await settle();
  store.fail(new StoreError('InternalError', 'connection reset'));
  await store.update(WidgetKind, widget('a', 'default', { spec: { size: 1 } }));
  await settle();
  t.equal(store.activeWatches, 0);
  t.equal((clock.nextTimerAt() as number) - clock.now(), 100, 'an event reset the failure streak');
  clock.advance(99);
  await settle();
  t.equal(store.lists, 5);
  clock.advance(1);
  await settle();
  t.equal(store.lists, 6);
  t.equal(store.activeWatches, 1);
  t.same(log, ['add default/a 1', 'add default/b 2', 'update default/a 1->3']);

  // A watch that fails at once, with no event, continues the streak ...
  store.listErrors.push(new Error('again'));
  store.fail(new StoreError('InternalError', 'reset 1'));
  await settle();
  t.equal((clock.nextTimerAt() as number) - clock.now(), 200, 'second failure in a row');
  clock.advance(200);
  await settle();
  t.equal((clock.nextTimerAt() as number) - clock.now(), 300, 'third, capped');
  clock.advance(300);
  await settle();
  t.equal(store.activeWatches, 1);
  clock.advance(1000);
  store.fail(new StoreError('InternalError', 'reset 2'));
  // ... but one that lived longer than the cap starts a fresh one.
  t.equal(
    (clock.nextTimerAt() as number) - clock.now(),
    100,
    'a long-lived watch resets the streak',
  );
  informer.stop();
  t.equal(clock.pendingTimers(), 0, 'stop cancels the retry');
});

t.test('handlers never see an older resourceVersion', async (t) => {
  const store = new FaultyStore(new MemoryStore());
  const created = await store.create<Widget>(WidgetKind, widget('a'));
  const updated = await store.update<Widget>(WidgetKind, { ...created, spec: { size: 1 } });
  const informer = new Informer<Widget>(store, WidgetKind);
  const log = record(informer);
  informer.start();
  await informer.waitForSync();
  store.inject({ type: 'MODIFIED', object: created });
  store.inject({ type: 'ADDED', object: updated });
  store.inject({ type: 'DELETED', object: created });
  store.inject({ type: 'DELETED', object: widget('unknown') });
  t.same(log, ['add default/a 2'], 'stale, duplicate and unknown events are ignored');
  store.inject({
    type: 'ADDED',
    object: { ...updated, metadata: { ...updated.metadata, resourceVersion: '10' } },
  });
  t.same(log.at(-1), 'update default/a 2->10', 'an ADDED for a cached object is an update');
  informer.stop();
});

t.test('resync fires update(obj, obj) for every cached object', async (t) => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('a'));
  await store.create(WidgetKind, widget('b'));
  const informer = new Informer<Widget>(store, WidgetKind, { clock, resyncMs: 1000 });
  const pairs: Array<[Widget, Widget]> = [];
  informer.on('update', (a, b) => pairs.push([a, b]));
  informer.start();
  await informer.waitForSync();
  clock.advance(999);
  t.equal(pairs.length, 0);
  clock.advance(1);
  t.equal(pairs.length, 2);
  t.ok(pairs.every(([a, b]) => a === b));
  clock.advance(1000);
  t.equal(pairs.length, 4, 'periodic');
  informer.stop();
  clock.advance(5000);
  t.equal(pairs.length, 4);
});

t.test('stop before sync rejects waitForSync; start again resumes with a diff', async (t) => {
  const clock = new ManualClock();
  const store = new FaultyStore(new MemoryStore());
  await store.create(WidgetKind, widget('a'));
  const informer = new Informer<Widget>(store, WidgetKind, { clock });
  const log = record(informer);
  store.listErrors.push(new Error('down'));
  informer.start();
  const waiting = informer.waitForSync();
  await settle();
  informer.stop();
  await t.rejects(waiting, /informer for Widget stopped before its cache synced/);

  informer.start();
  await informer.waitForSync();
  informer.stop();
  await store.delete(WidgetKind, 'a', 'default');
  await store.create(WidgetKind, widget('b'));
  t.equal(informer.list().length, 1, 'the cache is kept while stopped');
  informer.start();
  await settle();
  t.same(log, ['add default/a 1', 'add default/b 3', 'delete default/a']);
  informer.stop();
});

t.test('a list that resolves after stop is ignored', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('a'));
  const informer = new Informer<Widget>(store, WidgetKind);
  const log = record(informer);
  informer.start();
  informer.stop();
  await settle();
  t.same(log, []);
  t.notOk(informer.hasSynced());
});

t.test('a list error after stop is ignored', async (t) => {
  const clock = new ManualClock();
  const store = new FaultyStore(new MemoryStore());
  store.listErrors.push(new Error('late'));
  const errors: Error[] = [];
  const informer = new Informer<Widget>(store, WidgetKind, {
    clock,
    onError: (e) => errors.push(e),
  });
  informer.start();
  informer.stop();
  await settle();
  t.same(errors, []);
  t.equal(clock.pendingTimers(), 0);
});

t.test('without onError a handler exception is rethrown outside the informer', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('a'));
  const informer = new Informer<Widget>(store, WidgetKind);
  informer.on('add', () => {
    throw new Error('unhandled handler bug');
  });
  // Catch what would otherwise be an uncaught exception, to look at it.
  const realQueueMicrotask = globalThis.queueMicrotask;
  const thrown: unknown[] = [];
  globalThis.queueMicrotask = (fn) =>
    realQueueMicrotask(() => {
      try {
        fn();
      } catch (err) {
        thrown.push(err);
      }
    });
  try {
    informer.start();
    await informer.waitForSync();
    await flush();
  } finally {
    globalThis.queueMicrotask = realQueueMicrotask;
  }
  t.match(thrown, [{ message: 'unhandled handler bug' }]);
  t.equal(informer.list().length, 1, 'the cache is intact');
  informer.stop();
});

t.test('handler exceptions go to onError and do not break the cache', async (t) => {
  const store = new MemoryStore();
  const errors: Error[] = [];
  const informer = new Informer<Widget>(store, WidgetKind, { onError: (err) => errors.push(err) });
  const seen: string[] = [];
  informer.on('add', () => {
    throw new Error('handler bug');
  });
  const off = informer.on('add', (o) => seen.push(o.metadata.name));
  informer.on('update', () => {
    throw 'not an error';
  });
  informer.start();
  await informer.waitForSync();
  await store.create(WidgetKind, widget('a'));
  await store.update(WidgetKind, widget('a', 'default', { spec: { size: 1 } }));
  await settle();
  off();
  await store.create(WidgetKind, widget('b'));
  await settle();
  t.same(seen, ['a'], 'the other handler ran; a removed one does not');
  t.same(
    errors.map((e) => e.message),
    ['handler bug', 'not an error', 'handler bug'],
  );
  t.equal(informer.list().length, 2);
  informer.stop();
});
