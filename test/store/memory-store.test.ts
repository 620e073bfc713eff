import t from 'tap';
import { ClusterTrustBundleKind } from '../../src/api/cluster-trust-bundle.js';
import type { KubeObject } from '../../src/api/meta.js';
import { ManualClock } from '../../src/base/clock.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  GadgetKind,
  gadget,
  type Thing,
  ThingKind,
  type Widget,
  WidgetKind,
  widget,
} from '../support/store-fixtures.js';

const clock = () => new ManualClock(Date.UTC(2026, 10, 21, 10, 0, 0, 456));

t.test('create fills the server-owned fields', async (t) => {
  const store = new MemoryStore({ clock: clock() });
  const created = await store.create(
    WidgetKind,
    widget('w1', 'default', {
      spec: { size: 1 },
      status: { phase: 'ignored' },
      metadata: { name: 'w1', resourceVersion: '99', uid: 'mine', labels: { app: 'x' } },
    }),
  );
  t.equal(created.metadata.name, 'w1');
  t.equal(created.metadata.namespace, 'default');
  t.equal(created.metadata.resourceVersion, '1', 'a given resourceVersion is ignored');
  t.match(created.metadata.uid, /^[0-9a-f-]{36}$/);
  t.not(created.metadata.uid, 'mine');
  t.equal(created.metadata.creationTimestamp, '2026-11-21T10:00:00Z');
  t.equal(created.metadata.generation, 1);
  t.same(created.metadata.labels, { app: 'x' });
  t.equal(created.status, undefined, 'status is not set by create (status subresource)');
  t.same(await store.get(WidgetKind, 'w1', 'default'), created);
  t.equal(store.resourceVersion, '1');
});

t.test('create sets apiVersion and kind, and rejects mismatches', async (t) => {
  const store = new MemoryStore();
  const created = await store.create(WidgetKind, { ...widget('w1'), apiVersion: '', kind: '' });
  t.equal(created.apiVersion, 'example.cert-csi.io/v1');
  t.equal(created.kind, 'Widget');
  await t.rejects(store.create(WidgetKind, { ...widget('w2'), apiVersion: 'v1' }), {
    reason: 'Invalid',
    message: /apiVersion "v1" does not match example.cert-csi.io\/v1/,
  });
  // A kind served in several versions: any of them is the same object, kept in the preferred.
  const versioned = { ...WidgetKind, version: 'v2', versions: ['v2', 'v1beta1'] };
  const older = await store.create(versioned, {
    ...widget('w4'),
    apiVersion: 'example.cert-csi.io/v1beta1',
  });
  t.equal(older.apiVersion, 'example.cert-csi.io/v2', 'stored in the preferred version');
  await t.rejects(
    store.create(versioned, { ...widget('w5'), apiVersion: 'example.cert-csi.io/v1' }),
    {
      reason: 'Invalid',
      message: /apiVersion "example.cert-csi.io\/v1" does not match example.cert-csi.io\/v2/,
    },
  );
  await t.rejects(store.create(WidgetKind, { ...widget('w2'), kind: 'Gadget' }), {
    reason: 'Invalid',
    message: /kind "Gadget" does not match Widget/,
  });
  await t.rejects(store.create(WidgetKind, { apiVersion: '', kind: '' } as unknown as Widget), {
    reason: 'Invalid',
    message: /metadata: Required value/,
  });
  const cyclic = widget('w3') as Widget & { self?: unknown };
  cyclic.self = cyclic;
  await t.rejects(store.create(WidgetKind, cyclic), {
    reason: 'Invalid',
    message: /not representable as JSON/,
  });
  await t.rejects(store.create({ ...WidgetKind, plural: 'Bad/Plural' }, widget('w4')), {
    reason: 'Invalid',
    message: /invalid resource kind Widget/,
  });
});

t.test('create: AlreadyExists', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('w1'));
  await t.rejects(store.create(WidgetKind, widget('w1')), {
    reason: 'AlreadyExists',
    code: 409,
    message: 'widgets.example.cert-csi.io "w1" already exists (namespace "default")',
  });
  await store.create(WidgetKind, widget('w1', 'other'));
  await store.create(ThingKind, {
    apiVersion: 'v1',
    kind: 'Thing',
    metadata: { name: 'w1', namespace: 'default' },
  });
  await store.create(GadgetKind, gadget('g1'));
  await t.rejects(store.create(GadgetKind, gadget('g1')), {
    reason: 'AlreadyExists',
    message: 'gadgets.example.cert-csi.io "g1" already exists',
  });
  t.equal(store.resourceVersion, '4', 'one counter across kinds; failures do not bump it');
});

t.test('create: generateName', async (t) => {
  const store = new MemoryStore();
  const created = await store.create(WidgetKind, {
    ...widget(''),
    metadata: { name: '', namespace: 'default', generateName: 'req-' },
  });
  t.match(created.metadata.name, /^req-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  t.equal(created.metadata.generateName, 'req-');
  const long = await store.create(WidgetKind, {
    ...widget(''),
    metadata: { name: '', namespace: 'default', generateName: `${'a'.repeat(70)}-` },
  });
  t.equal(long.metadata.name.length, 63, 'the prefix is cut so the name fits a label');
  await t.rejects(
    store.create(WidgetKind, {
      ...widget(''),
      metadata: { name: '', namespace: 'default', generateName: 'Bad-' },
    }),
    { reason: 'Invalid', message: /metadata.generateName "Bad-": Invalid value: "Bad-/ },
  );
  await t.rejects(
    store.create(WidgetKind, { ...widget(''), metadata: { name: '', namespace: 'default' } }),
    {
      reason: 'Invalid',
      message: /name or generateName is required/,
    },
  );
});

t.test('create: generateName retries a taken name, then gives up', async (t) => {
  const suffixes = ['aaaaa', 'aaaaa', 'bbbbb'];
  const store = new MemoryStore({ randomSuffix: () => suffixes.shift() ?? 'aaaaa' });
  const generated = {
    ...widget(''),
    metadata: { name: '', namespace: 'default', generateName: 'x-' },
  };
  t.equal((await store.create(WidgetKind, generated)).metadata.name, 'x-aaaaa');
  t.equal((await store.create(WidgetKind, generated)).metadata.name, 'x-bbbbb', 'retried');
  await t.rejects(
    store.create(WidgetKind, generated),
    { name: 'StoreError', reason: 'AlreadyExists' },
    'after 8 tries',
  );
});

t.test('names must be DNS-1123 subdomains', async (t) => {
  const store = new MemoryStore();
  for (const name of [
    'UPPER',
    'under_score',
    '-lead',
    'trail-',
    'a..b',
    '../x',
    'x/y',
    'a'.repeat(254),
  ]) {
    await t.rejects(store.create(WidgetKind, widget(name)), { reason: 'Invalid', code: 422 }, name);
  }
  for (const name of ['a', 'a.b-c', '0', 'a'.repeat(253)]) {
    await store.create(WidgetKind, widget(name));
  }
  t.equal((await store.list(WidgetKind)).items.length, 4);
});

t.test("ClusterTrustBundle names may join subdomains with ':', and nothing else", async (t) => {
  const store = new MemoryStore();
  const bundle = (name: string) => ({
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'ClusterTrustBundle',
    metadata: { name },
    spec: { trustBundle: '' },
  });
  for (const name of ['under_score:x', '.hidden', 'a::b', 'x/y:z', ':primary', 'Upper:x']) {
    await t.rejects(
      store.create(ClusterTrustBundleKind, bundle(name)),
      {
        reason: 'Invalid',
        message: /every ':'-separated part must be a lowercase RFC 1123 subdomain$/,
      },
      name,
    );
  }
  for (const name of [
    'roots',
    'example.com:spiffe:primary',
    'issuers.cert-manager.io:ns.ca:primary',
  ]) {
    await store.create(ClusterTrustBundleKind, bundle(name));
  }
  t.equal((await store.list(ClusterTrustBundleKind)).items.length, 3);
});

t.test('namespace rules', async (t) => {
  const store = new MemoryStore();
  await t.rejects(store.create(WidgetKind, widget('w', '')), {
    reason: 'Invalid',
    message: 'widgets.example.cert-csi.io is namespaced: metadata.namespace is required',
  });
  await t.rejects(store.create(WidgetKind, widget('w', 'Bad_NS')), {
    reason: 'Invalid',
    message: /namespace "Bad_NS" is invalid/,
  });
  await t.rejects(store.get(WidgetKind, 'w'), { name: 'StoreError', reason: 'Invalid' });
  await t.rejects(store.get(GadgetKind, 'g', 'default'), { name: 'StoreError', reason: 'Invalid' });
  await t.rejects(store.list(GadgetKind, { namespace: 'default' }), {
    name: 'StoreError',
    reason: 'Invalid',
  });
  await t.rejects(store.delete(WidgetKind, 'w'), { name: 'StoreError', reason: 'Invalid' });
  await t.rejects(store.get(GadgetKind, 'g', 'default'), {
    message: 'gadgets.example.cert-csi.io is cluster-scoped: namespace "default" must be empty',
  });
  const long = `Bad_${'n'.repeat(400)}`;
  const refused = await store.create(WidgetKind, widget(long)).catch((err: Error) => err);
  t.equal(
    (refused as Error).message,
    `Widget "${long.slice(0, 100)}"…(404 characters) is invalid: metadata.name: Invalid value: "${long.slice(0, 100)}"…(404 characters): a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', must start and end with an alphanumeric character, and be at most 253 characters`,
    'a long bad name is echoed shortened',
  );
  // Writes drop a cluster-scoped object's namespace, as the API server does.
  const g = await store.create(GadgetKind, {
    ...gadget('g'),
    metadata: { name: 'g', namespace: 'default' },
  });
  t.equal(g.metadata.namespace, undefined);
  t.same(await store.get(GadgetKind, 'g'), g);
  const labelled = await store.update(GadgetKind, {
    ...g,
    metadata: { ...g.metadata, namespace: 'default', labels: { a: 'b' } },
  });
  t.equal(labelled.metadata.namespace, undefined);
  t.same(labelled.metadata.labels, { a: 'b' });
});

t.test('get and NotFound', async (t) => {
  const store = new MemoryStore();
  await t.rejects(store.get(WidgetKind, 'nope', 'default'), {
    reason: 'NotFound',
    code: 404,
    message: 'widgets.example.cert-csi.io "nope" not found (namespace "default")',
  });
  await t.rejects(store.get(GadgetKind, 'nope'), {
    message: 'gadgets.example.cert-csi.io "nope" not found',
  });
  await store.create(WidgetKind, widget('w', 'default', { spec: { size: 1 } }));
  const stored = await store.get<Widget>(WidgetKind, 'w', 'default');
  t.throws(() => {
    stored.spec = { size: 99 };
  }, TypeError);
  t.throws(() => {
    stored.metadata.labels = { hacked: 'yes' };
  }, TypeError);
  t.throws(
    () => {
      (stored.spec as { size: number }).size = 99;
    },
    TypeError,
    'frozen all the way down',
  );
  const again = await store.get<Widget>(WidgetKind, 'w', 'default');
  t.same(again.spec, { size: 1 }, 'no caller can change what the store holds');
  t.equal(again.metadata.labels, undefined);
  t.equal(again, stored, 'every reader gets the one frozen object');
  t.equal((await store.list<Widget>(WidgetKind)).items[0], stored, 'list hands out the same');
  const changed = await store.update<Widget>(WidgetKind, { ...stored, spec: { size: 2 } });
  t.ok(Object.isFrozen(changed) && Object.isFrozen(changed.metadata), 'a write returns it too');
  t.equal(changed, await store.get<Widget>(WidgetKind, 'w', 'default'));
  t.same(stored.spec, { size: 1 }, 'an earlier state stays as it was');
});

t.test('update: optimistic concurrency', async (t) => {
  const store = new MemoryStore();
  const created = await store.create<Widget>(
    WidgetKind,
    widget('w', 'default', { spec: { size: 1 } }),
  );
  const first = await store.update<Widget>(WidgetKind, { ...created, spec: { size: 2 } });
  t.equal(first.metadata.resourceVersion, '2');
  await t.rejects(store.update(WidgetKind, { ...created, spec: { size: 3 } }), {
    reason: 'Conflict',
    code: 409,
    message:
      'Operation cannot be fulfilled on widgets.example.cert-csi.io "w": the object has been modified; please apply your changes to the latest version and try again (namespace "default", resourceVersion "1", current "2")',
  });
  const unconditional = await store.update<Widget>(WidgetKind, {
    ...created,
    metadata: { ...created.metadata, resourceVersion: '' },
    spec: { size: 4 },
  });
  t.equal(unconditional.metadata.resourceVersion, '3', 'no resourceVersion: unconditional');
  const withoutRv = widget('w', 'default', { spec: { size: 5 } });
  t.equal((await store.update<Widget>(WidgetKind, withoutRv)).spec?.size, 5);
  await t.rejects(store.update(WidgetKind, widget('missing')), {
    reason: 'NotFound',
    message: 'widgets.example.cert-csi.io "missing" not found (namespace "default")',
  });
  await t.rejects(
    store.update(WidgetKind, { ...widget('x'), metadata: { name: '', namespace: 'default' } }),
    {
      reason: 'Invalid',
      message: /metadata.name: Required value/,
    },
  );
});

t.test(
  'update keeps status and server-owned metadata, bumps generation on spec changes only',
  async (t) => {
    const store = new MemoryStore();
    const created = await store.create<Widget>(
      WidgetKind,
      widget('w', 'default', { spec: { size: 1 } }),
    );
    const withStatus = await store.updateStatus<Widget>(WidgetKind, {
      ...created,
      status: { phase: 'Ready' },
    });
    t.equal(withStatus.metadata.generation, 1, 'a status write does not change generation');

    const updated = await store.update<Widget>(WidgetKind, {
      ...withStatus,
      metadata: {
        ...withStatus.metadata,
        uid: 'forged',
        creationTimestamp: '1999-01-01T00:00:00Z',
        generation: 42,
        labels: { a: 'b' },
      },
      spec: { size: 2 },
      status: { phase: 'Forged' },
    });
    t.equal(updated.metadata.uid, created.metadata.uid);
    t.equal(updated.metadata.creationTimestamp, created.metadata.creationTimestamp);
    t.same(updated.status, { phase: 'Ready' }, 'update ignores status');
    t.equal(updated.metadata.generation, 2, 'spec change bumps generation');
    t.same(updated.metadata.labels, { a: 'b' });

    const relabelled = await store.update<Widget>(WidgetKind, {
      ...updated,
      metadata: { ...updated.metadata, labels: { a: 'c' }, annotations: { note: 'x' } },
    });
    t.equal(relabelled.metadata.generation, 2, 'metadata changes keep generation');
    t.equal(relabelled.metadata.resourceVersion, '4');

    const noStatus = await store.create<Widget>(WidgetKind, widget('n', 'default'));
    const stillNoStatus = await store.update<Widget>(WidgetKind, {
      ...noStatus,
      status: { phase: 'x' },
    });
    t.equal(stillNoStatus.status, undefined, 'update cannot add a status either');
    t.equal(
      stillNoStatus.metadata.resourceVersion,
      noStatus.metadata.resourceVersion,
      'so nothing changed',
    );
  },
);

t.test('generation counts changes to other top-level fields, like Secret data', async (t) => {
  const store = new MemoryStore();
  const thing = await store.create<Thing>(ThingKind, {
    apiVersion: 'v1',
    kind: 'Thing',
    metadata: { name: 's', namespace: 'default' },
    data: { a: 'YQ==' },
  });
  const changed = await store.update<Thing>(ThingKind, { ...thing, data: { a: 'Yg==' } });
  t.equal(changed.metadata.generation, 2);
  t.same(changed.data, { a: 'Yg==' });
});

t.test('no-op updates do not bump resourceVersion', async (t) => {
  const store = new MemoryStore();
  const created = await store.create<Widget>(
    WidgetKind,
    widget('w', 'default', { spec: { size: 1, colour: 'red' } }),
  );
  const events: string[] = [];
  const watch = store.watch(
    WidgetKind,
    { resourceVersion: store.resourceVersion },
    { onEvent: (e) => events.push(e.type), onError: t.fail },
  );
  const same = await store.update<Widget>(WidgetKind, {
    ...created,
    spec: { colour: 'red', size: 1 },
  });
  t.same(same, created, 'key order does not matter');
  const undefinedFields = await store.update<Widget>(WidgetKind, {
    ...created,
    status: undefined,
  } as unknown as Widget);
  t.same(undefinedFields, created);
  const sameStatus = await store.updateStatus<Widget>(WidgetKind, created);
  t.same(sameStatus, created);
  t.equal(store.resourceVersion, '1');
  await store.update<Widget>(WidgetKind, { ...created, spec: { size: 2 } });
  await new Promise((resolve) => setImmediate(resolve));
  t.same(events, ['MODIFIED'], 'only the real change is an event');
  watch.stop();
});

t.test('updateStatus replaces only status', async (t) => {
  const store = new MemoryStore();
  const created = await store.create<Widget>(
    WidgetKind,
    widget('w', 'default', { spec: { size: 1 } }),
  );
  const updated = await store.updateStatus<Widget>(WidgetKind, {
    ...created,
    metadata: { ...created.metadata, labels: { ignored: 'yes' } },
    spec: { size: 100 },
    status: { phase: 'Ready', count: 1 },
  });
  t.same(updated.spec, { size: 1 }, 'spec is not changed by updateStatus');
  t.equal(updated.metadata.labels, undefined, 'nor metadata');
  t.same(updated.status, { phase: 'Ready', count: 1 });
  t.equal(updated.metadata.resourceVersion, '2');
  await t.rejects(store.updateStatus(WidgetKind, { ...created, status: { phase: 'Stale' } }), {
    name: 'StoreError',
    reason: 'Conflict',
  });
  const cleared = await store.updateStatus<Widget>(WidgetKind, {
    ...updated,
    status: undefined,
  } as unknown as Widget);
  t.equal(cleared.status, undefined, 'status can be removed');
  await t.rejects(store.updateStatus(WidgetKind, widget('missing')), {
    name: 'StoreError',
    reason: 'NotFound',
  });
});

t.test('delete', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('w'));
  await store.delete(WidgetKind, 'w', 'default');
  t.equal(store.resourceVersion, '2', 'delete bumps the counter');
  await t.rejects(store.get(WidgetKind, 'w', 'default'), {
    name: 'StoreError',
    reason: 'NotFound',
  });
  await t.rejects(store.delete(WidgetKind, 'w', 'default'), {
    reason: 'NotFound',
    message: 'widgets.example.cert-csi.io "w" not found (namespace "default")',
  });
  const again = await store.create(WidgetKind, widget('w'));
  t.equal(again.metadata.resourceVersion, '3');
});

t.test(
  'list filters by namespace and selector, sorted, with the current resourceVersion',
  async (t) => {
    const store = new MemoryStore();
    const make = (name: string, namespace: string, labels: Record<string, string>) =>
      store.create(WidgetKind, widget(name, namespace, { metadata: { name, labels } }));
    await make('b', 'ns-b', { app: 'web' });
    await make('a', 'ns-b', { app: 'db' });
    await make('z', 'ns-a', { app: 'web', tier: 'front' });
    await make('a', 'ns-a-x', { app: 'web' });
    await store.create(GadgetKind, gadget('g'));
    const names = (items: KubeObject[]) =>
      items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`);

    const all = await store.list(WidgetKind);
    t.same(names(all.items), ['ns-a/z', 'ns-a-x/a', 'ns-b/a', 'ns-b/b']);
    t.equal(all.resourceVersion, '5');
    t.same(names((await store.list(WidgetKind, { namespace: 'ns-b' })).items), [
      'ns-b/a',
      'ns-b/b',
    ]);
    t.same(names((await store.list(WidgetKind, { labelSelector: 'app=web' })).items), [
      'ns-a/z',
      'ns-a-x/a',
      'ns-b/b',
    ]);
    t.same(
      names((await store.list(WidgetKind, { namespace: 'ns-a', labelSelector: 'tier' })).items),
      ['ns-a/z'],
    );
    t.same((await store.list(ThingKind)).items, [], 'an unknown kind is empty');
    await t.rejects(store.list(WidgetKind, { labelSelector: 'app in web' }), {
      name: 'StoreError',
      reason: 'BadRequest',
      code: 400,
    });
    // Any dotted path is a field label here: the store knows no per-kind lists.
    t.same(
      names((await store.list(WidgetKind, { fieldSelector: 'metadata.namespace=ns-b' })).items),
      ['ns-b/a', 'ns-b/b'],
    );
    t.same(
      names(
        (
          await store.list(WidgetKind, {
            fieldSelector: 'metadata.name!=z,metadata.labels.app=web',
            labelSelector: 'app',
          })
        ).items,
      ),
      ['ns-a-x/a', 'ns-b/b'],
    );
    t.same(
      names((await store.list(WidgetKind, { namespace: 'ns-a', fieldSelector: 'spec.x=' })).items),
      ['ns-a/z'],
      'a missing field is empty',
    );
    await t.rejects(store.list(WidgetKind, { fieldSelector: 'metadata.name' }), {
      name: 'StoreError',
      reason: 'BadRequest',
      code: 400,
      message: "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    });
    const listed = await store.list<Widget>(WidgetKind);
    t.throws(() => {
      (listed.items[0] as Widget).metadata.name = 'changed';
    }, TypeError);
    t.same(names((await store.list(WidgetKind)).items)[0], 'ns-a/z', 'list items are frozen');
  },
);

t.test('close refuses later writes', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('w'));
  await store.close();
  await t.rejects(store.create(WidgetKind, widget('x')), {
    reason: 'InternalError',
    message: /store is closed/,
  });
  t.ok(await store.get(WidgetKind, 'w', 'default'), 'reads still work');
});
