import t from 'tap';
import type { KubeObject } from '../../src/api/meta.js';
import { isStoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { WatchEvent, WatchOptions } from '../../src/store/resource-store.js';
import {
  flush,
  GadgetKind,
  gadget,
  type Widget,
  WidgetKind,
  widget,
} from '../support/store-fixtures.js';

interface Seen {
  type: string;
  key: string;
  rv: string;
  size: number | undefined;
}

function describe(event: WatchEvent<Widget>): Seen {
  const { namespace, name, resourceVersion } = event.object.metadata;
  return {
    type: event.type,
    key: `${namespace}/${name}`,
    rv: resourceVersion ?? '',
    size: event.object.spec?.size,
  };
}

/** Collects a watch's events and errors. */
function collect(store: MemoryStore, options: WatchOptions) {
  const events: Seen[] = [];
  const errors: Error[] = [];
  const watch = store.watch<Widget>(WidgetKind, options, {
    onEvent: (event) => events.push(describe(event)),
    onError: (err) => errors.push(err),
  });
  return { events, errors, watch };
}

/** A deterministic pseudo-random sequence. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** One random mutation of widgets (and gadgets, which share the counter). */
async function mutate(store: MemoryStore, next: () => number, step: number): Promise<void> {
  const name = `w${Math.floor(next() * 8)}`;
  const namespace = next() < 0.5 ? 'a' : 'b';
  const existing = await store.get<Widget>(WidgetKind, name, namespace).catch(() => undefined);
  const roll = next();
  if (!existing) {
    await store.create(WidgetKind, widget(name, namespace, { spec: { size: step } }));
  } else if (roll < 0.2) {
    await store.delete(WidgetKind, name, namespace);
  } else if (roll < 0.6) {
    await store.update(WidgetKind, { ...existing, spec: { size: step } });
  } else if (roll < 0.8) {
    await store.updateStatus(WidgetKind, { ...existing, status: { count: step } });
  } else {
    await store.create(GadgetKind, gadget(`g${step}`));
  }
}

t.test(
  'a watch from rv N sees every later change exactly once, in order, across replay and live',
  async (t) => {
    const store = new MemoryStore();
    const full = collect(store, {});
    const next = random(42);
    for (let step = 0; step < 100; step++) await mutate(store, next, step);
    const middle = 57;
    const resumed = collect(store, { resourceVersion: String(middle) });
    t.same(resumed.events, [], 'nothing is delivered synchronously');
    // Live changes that commit while the replay is still queued, before any await.
    const live: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) live.push(store.create(WidgetKind, widget(`live${i}`, 'c')));
    await Promise.all(live);
    for (let step = 100; step < 200; step++) await mutate(store, next, step);
    await flush();

    t.ok(full.events.length > 120, `the full watch saw ${full.events.length} widget changes`);
    const rvs = full.events.map((e) => Number(e.rv));
    t.same(
      rvs,
      [...rvs].sort((a, b) => a - b),
      'in increasing resourceVersion order',
    );
    t.equal(new Set(rvs).size, rvs.length, 'each change once');
    const expected = full.events.filter((e) => Number(e.rv) > middle);
    t.same(resumed.events, expected, 'the resumed watch equals the full one after N');
    t.same(full.errors, []);
    t.same(resumed.errors, []);

    // The final state matches what the events say.
    const state = new Map<string, number | undefined>();
    for (const event of full.events) {
      if (event.type === 'DELETED') state.delete(event.key);
      else state.set(event.key, event.size);
    }
    const listed = await store.list<Widget>(WidgetKind);
    t.same(
      new Map(
        listed.items.map((item) => [
          `${item.metadata.namespace}/${item.metadata.name}`,
          item.spec?.size,
        ]),
      ),
      state,
    );
    full.watch.stop();
    resumed.watch.stop();
  },
);

t.test('event contents', async (t) => {
  const store = new MemoryStore();
  const seen: WatchEvent<Widget>[] = [];
  const watch = store.watch<Widget>(
    WidgetKind,
    { resourceVersion: '0' },
    { onEvent: (e) => seen.push(e), onError: t.fail },
  );
  const created = await store.create<Widget>(
    WidgetKind,
    widget('w', 'default', { spec: { size: 1 } }),
  );
  const updated = await store.update<Widget>(WidgetKind, { ...created, spec: { size: 2 } });
  await store.delete(WidgetKind, 'w', 'default');
  await flush();
  t.same(
    seen.map((e) => e.type),
    ['ADDED', 'MODIFIED', 'DELETED'],
  );
  t.same(seen[0]?.object, created);
  t.same(seen[1]?.object, updated);
  t.same(
    seen[2]?.object,
    { ...updated, metadata: { ...updated.metadata, resourceVersion: '3' } },
    'DELETED: last state, deletion rv',
  );
  t.throws(() => {
    (seen[1] as WatchEvent<Widget>).object.spec = { size: 100 };
  }, TypeError);
  t.ok(Object.isFrozen(seen[2]?.object.metadata), 'a DELETED state is frozen too');
  watch.stop();
});

t.test('every watch gets the one frozen object of a change', async (t) => {
  const store = new MemoryStore();
  const first: WatchEvent<Widget>[] = [];
  const second: WatchEvent<Widget>[] = [];
  const handlers = (into: WatchEvent<Widget>[]) => ({
    onEvent: (e: WatchEvent<Widget>) => into.push(e),
    onError: t.fail,
  });
  const watches = [
    store.watch<Widget>(WidgetKind, {}, handlers(first)),
    store.watch<Widget>(WidgetKind, { namespace: 'default' }, handlers(second)),
  ];
  await flush();
  const created = await store.create<Widget>(
    WidgetKind,
    widget('w', 'default', { spec: { size: 1 } }),
  );
  await flush();
  t.equal(first[0]?.object, second[0]?.object, 'the same object, not two copies');
  t.equal(first[0]?.object, created, 'and the one the writer got back');
  t.throws(() => {
    (first[0]?.object.spec as { size: number }).size = 2;
  }, TypeError);
  const late: WatchEvent<Widget>[] = [];
  watches.push(store.watch<Widget>(WidgetKind, {}, handlers(late)));
  await flush();
  t.equal(late[0]?.object, created, 'a new watch starts from the same stored object');
  t.same((await store.get<Widget>(WidgetKind, 'w', 'default')).spec, { size: 1 });
  for (const watch of watches) watch.stop();
});

t.test('watch filters by namespace and kind', async (t) => {
  const store = new MemoryStore();
  const ns = collect(store, { namespace: 'a' });
  await store.create(WidgetKind, widget('x', 'a'));
  await store.create(WidgetKind, widget('x', 'b'));
  await store.create(GadgetKind, gadget('g'));
  await flush();
  t.same(
    ns.events.map((e) => e.key),
    ['a/x'],
  );
  ns.watch.stop();
});

t.test('label selector watches see objects enter and leave', async (t) => {
  const store = new MemoryStore();
  const web = collect(store, { labelSelector: 'app=web' });
  const labelled = (app: string, size: number) =>
    widget('w', 'default', { metadata: { name: 'w', labels: { app } }, spec: { size } });
  await store.create(WidgetKind, labelled('db', 1)); // rv 1: not selected
  await store.update(WidgetKind, labelled('web', 2)); // rv 2: enters
  await store.update(WidgetKind, labelled('web', 3)); // rv 3: stays
  await store.update(WidgetKind, labelled('db', 4)); // rv 4: leaves
  await store.update(WidgetKind, labelled('db', 5)); // rv 5: still out
  await store.update(WidgetKind, labelled('web', 6)); // rv 6: enters again
  await store.delete(WidgetKind, 'w', 'default'); // rv 7: deleted while selected
  await store.create(WidgetKind, labelled('db', 8)); // rv 8
  await store.delete(WidgetKind, 'w', 'default'); // rv 9: deleted while not selected
  await flush();
  t.same(web.events, [
    { type: 'ADDED', key: 'default/w', rv: '2', size: 2 },
    { type: 'MODIFIED', key: 'default/w', rv: '3', size: 3 },
    { type: 'DELETED', key: 'default/w', rv: '4', size: 3 },
    { type: 'ADDED', key: 'default/w', rv: '6', size: 6 },
    { type: 'DELETED', key: 'default/w', rv: '7', size: 6 },
  ]);
  const replayed = collect(store, { labelSelector: 'app=web', resourceVersion: '3' });
  await flush();
  t.same(replayed.events, web.events.slice(2), 'replay applies the same transitions');
  web.watch.stop();
  replayed.watch.stop();
});

t.test('field selector watches see objects enter and leave, as label ones do', async (t) => {
  const store = new MemoryStore();
  const blue = collect(store, { fieldSelector: 'spec.colour=blue' });
  const blueWeb = collect(store, { fieldSelector: 'spec.colour=blue', labelSelector: 'app=web' });
  const painted = (colour: string, size: number, app = 'web') =>
    widget('w', 'default', { metadata: { name: 'w', labels: { app } }, spec: { colour, size } });
  await store.create(WidgetKind, painted('red', 1)); // rv 1: not selected
  await store.update(WidgetKind, painted('blue', 2)); // rv 2: enters
  await store.update(WidgetKind, painted('blue', 3)); // rv 3: stays
  await store.update(WidgetKind, painted('red', 4)); // rv 4: leaves
  await store.update(WidgetKind, painted('red', 5)); // rv 5: still out
  await store.update(WidgetKind, painted('blue', 6)); // rv 6: enters again
  await store.update(WidgetKind, painted('blue', 7, 'db')); // rv 7: leaves the labels only
  await store.delete(WidgetKind, 'w', 'default'); // rv 8: deleted while selected by colour
  await store.create(WidgetKind, painted('red', 9)); // rv 9
  await store.delete(WidgetKind, 'w', 'default'); // rv 10: deleted while not selected
  await flush();
  const colourEvents = [
    { type: 'ADDED', key: 'default/w', rv: '2', size: 2 },
    { type: 'MODIFIED', key: 'default/w', rv: '3', size: 3 },
    { type: 'DELETED', key: 'default/w', rv: '4', size: 3 },
    { type: 'ADDED', key: 'default/w', rv: '6', size: 6 },
  ];
  t.same(
    blue.events,
    [
      ...colourEvents,
      { type: 'MODIFIED', key: 'default/w', rv: '7', size: 7 },
      { type: 'DELETED', key: 'default/w', rv: '8', size: 7 },
    ],
    'leaving: DELETED with the last matching state at the change, as the API server sends it',
  );
  t.same(
    blueWeb.events,
    [...colourEvents, { type: 'DELETED', key: 'default/w', rv: '7', size: 6 }],
    'with a label selector too, both must hold',
  );
  const replayed = collect(store, { fieldSelector: 'spec.colour=blue', resourceVersion: '3' });
  await flush();
  t.same(replayed.events, blue.events.slice(2), 'replay applies the same transitions');
  for (const watch of [blue, blueWeb, replayed]) watch.watch.stop();
});

t.test('Gone for a resourceVersion older than the history', async (t) => {
  const store = new MemoryStore({ historySize: 5 });
  for (let i = 0; i < 10; i++) await store.create(GadgetKind, gadget(`g${i}`));
  const old = collect(store, { resourceVersion: '4' });
  const edge = collect(store, { resourceVersion: '5' });
  t.same(old.errors, [], 'errors are asynchronous too');
  await flush();
  t.equal(old.errors.length, 1);
  t.ok(isStoreError(old.errors[0], 'Gone'));
  t.equal(old.errors[0]?.message, 'too old resource version: 4 (5)');
  t.equal((old.errors[0] as { code?: number }).code, 410);
  await store.create(WidgetKind, widget('w'));
  await flush();
  t.same(old.events, [], 'a Gone watch has ended');

  t.same(edge.errors, []);
  t.same(
    edge.events.map((e) => e.rv),
    ['11'],
    'from the oldest held rv every later change is there',
  );
  edge.watch.stop();
});

t.test('history survives many changes', async (t) => {
  const store = new MemoryStore({ historySize: 3000 });
  for (let i = 0; i < 5000; i++) await store.create(GadgetKind, gadget(`g${i}`));
  const seen: string[] = [];
  const watch = store.watch(
    GadgetKind,
    { resourceVersion: '2000' },
    { onEvent: (e) => seen.push(e.object.metadata.name), onError: t.fail },
  );
  await flush();
  t.equal(seen.length, 3000);
  t.equal(seen[0], 'g2000');
  watch.stop();
  const gone = collect(store, { resourceVersion: '1999' });
  await flush();
  t.match(gone.errors[0]?.message, 'too old resource version: 1999 (2000)');
});

t.test('a small history keeps only its window through many changes', async (t) => {
  const store = new MemoryStore({ historySize: 10 });
  for (let i = 0; i < 3000; i++) await store.create(GadgetKind, gadget(`g${i}`));
  const seen: string[] = [];
  const watch = store.watch(
    GadgetKind,
    { resourceVersion: '2990' },
    { onEvent: (e) => seen.push(e.object.metadata.name), onError: t.fail },
  );
  await flush();
  t.same(seen, [
    'g2990',
    'g2991',
    'g2992',
    'g2993',
    'g2994',
    'g2995',
    'g2996',
    'g2997',
    'g2998',
    'g2999',
  ]);
  watch.stop();
  const gone = collect(store, { resourceVersion: '2989' });
  await flush();
  t.equal(gone.errors[0]?.message, 'too old resource version: 2989 (2990)');
});

t.test('no resourceVersion: the current objects as ADDED, then changes', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('b', 'default', { spec: { size: 1 } }));
  await store.create(WidgetKind, widget('a', 'default', { spec: { size: 2 } }));
  await store.create(WidgetKind, widget('c', 'other'));
  const omitted = collect(store, { namespace: 'default' });
  const empty = collect(store, { resourceVersion: '' });
  await store.create(WidgetKind, widget('after'));
  await flush();
  t.same(
    omitted.events,
    [
      { type: 'ADDED', key: 'default/a', rv: '2', size: 2 },
      { type: 'ADDED', key: 'default/b', rv: '1', size: 1 },
      { type: 'ADDED', key: 'default/after', rv: '4', size: undefined },
    ],
    'the matching objects by name, then the change',
  );
  t.same(
    empty.events.map((e) => e.key),
    ['default/a', 'default/b', 'other/c', 'default/after'],
    'an empty resourceVersion is none',
  );
  omitted.watch.stop();
  empty.watch.stop();
});

t.test(
  'resourceVersion 0: from the start while the history holds it, else as omitted',
  async (t) => {
    const store = new MemoryStore({ historySize: 3 });
    await store.create(WidgetKind, widget('gone'));
    await store.create(WidgetKind, widget('kept'));
    await store.delete(WidgetKind, 'gone', 'default');
    const whole = collect(store, { resourceVersion: '0' });
    await store.create(WidgetKind, widget('after'));
    const compacted = collect(store, { resourceVersion: '0' });
    await store.create(WidgetKind, widget('later'));
    await flush();
    t.same(
      whole.events.map((e) => `${e.type} ${e.key} ${e.rv}`),
      [
        'ADDED default/gone 1',
        'ADDED default/kept 2',
        'DELETED default/gone 3',
        'ADDED default/after 4',
        'ADDED default/later 5',
      ],
      'every change since the start, as after a list of a never-written store',
    );
    t.same(
      compacted.events.map((e) => `${e.type} ${e.key} ${e.rv}`),
      ['ADDED default/after 4', 'ADDED default/kept 2', 'ADDED default/later 5'],
      'once the history has dropped changes: the current state, then changes',
    );
    t.same([...whole.errors, ...compacted.errors], [], 'never Gone');
    whole.watch.stop();
    compacted.watch.stop();
  },
);

t.test('a resourceVersion from the future waits for it', async (t) => {
  const store = new MemoryStore();
  const ahead = collect(store, { resourceVersion: '2' });
  await store.create(WidgetKind, widget('one'));
  await store.create(WidgetKind, widget('two'));
  await store.create(WidgetKind, widget('three'));
  await flush();
  t.same(
    ahead.events.map((e) => e.rv),
    ['3'],
  );
  ahead.watch.stop();
});

t.test('invalid watch options end the watch with an error, asynchronously', async (t) => {
  const store = new MemoryStore();
  for (const [options, reason] of [
    [{ resourceVersion: 'abc' }, 'Invalid'],
    [{ resourceVersion: '-1' }, 'Invalid'],
    [{ labelSelector: 'a in b' }, 'BadRequest'],
    [{ fieldSelector: 'spec.size' }, 'BadRequest'],
  ] as const) {
    const bad = collect(store, options);
    t.same(bad.errors, []);
    await flush();
    t.equal(bad.errors.length, 1, JSON.stringify(options));
    t.ok(isStoreError(bad.errors[0], reason), `${JSON.stringify(options)}: ${reason}`);
  }
  const errors: Error[] = [];
  store.watch(
    GadgetKind,
    { namespace: 'x' },
    { onEvent: t.fail, onError: (err) => errors.push(err) },
  );
  await flush();
  t.match(errors[0]?.message, /cluster-scoped/);
});

t.test('stop ends delivery at once, even with events queued', async (t) => {
  const store = new MemoryStore();
  const stopped = collect(store, {});
  const created = store.create(WidgetKind, widget('a'));
  stopped.watch.stop();
  await created;
  stopped.watch.stop();
  await flush();
  t.same(stopped.events, [], 'the queued event was not delivered');

  const seen: string[] = [];
  const inside = store.watch<Widget>(
    WidgetKind,
    { resourceVersion: store.resourceVersion },
    {
      onEvent: (event) => {
        seen.push(event.object.metadata.name);
        inside.stop();
      },
      onError: t.fail,
    },
  );
  void store.create(WidgetKind, widget('b'));
  void store.create(WidgetKind, widget('c'));
  await flush();
  t.same(seen, ['b'], 'stop inside a handler stops the rest of the batch');
});

t.test('a throwing handler ends its watch with an error', async (t) => {
  const store = new MemoryStore();
  const errors: Error[] = [];
  let calls = 0;
  store.watch(
    WidgetKind,
    {},
    {
      onEvent: () => {
        calls++;
        throw new Error('boom');
      },
      onError: (err) => errors.push(err),
    },
  );
  await store.create(WidgetKind, widget('a'));
  await store.create(WidgetKind, widget('b'));
  await flush();
  t.equal(calls, 1);
  t.equal(errors.length, 1);
  t.ok(isStoreError(errors[0], 'InternalError'));
  t.match(errors[0]?.message, /handler threw: Error: boom/);
  t.match((errors[0] as Error & { cause?: Error }).cause?.message, 'boom');
});

t.test('close ends every watch and refuses new ones', async (t) => {
  const store = new MemoryStore();
  const open = collect(store, {});
  const created = store.create(WidgetKind, widget('a'));
  const closed = store.close();
  await created;
  await closed;
  await flush();
  t.same(open.events, [], 'closing dropped the queued event');
  t.same(open.errors, []);
  const late = collect(store, {});
  await flush();
  t.match(late.errors[0]?.message, /store is closed/);
});

t.test('watch handlers run after the mutation resolves, never inside it', async (t) => {
  const store = new MemoryStore();
  const order: string[] = [];
  const watch = store.watch<KubeObject>(
    WidgetKind,
    {},
    { onEvent: () => order.push('event'), onError: t.fail },
  );
  const pending = store.create(WidgetKind, widget('a'));
  order.push('returned');
  await pending;
  await flush();
  t.same(order, ['returned', 'event']);
  watch.stop();
});
