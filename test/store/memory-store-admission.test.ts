import t from 'tap';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import type { AdmissionHook } from '../../src/store/admission.js';
import { isStoreError, StoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { invalidObject } from '../../src/store/object-rules.js';
import type { WatchEvent } from '../../src/store/resource-store.js';
import { StateDirectory } from '../../src/store/state-directory/state-directory.js';
import { rejection } from '../support/eventually.js';
import {
  flush,
  GadgetKind,
  gadget,
  ThingKind,
  type Widget,
  WidgetKind,
  widget,
} from '../support/store-fixtures.js';

interface Call {
  kind: string;
  object: KubeObject;
  old: KubeObject | undefined;
  write: Parameters<AdmissionHook>[3];
}

/**
 * A hook refusing Widgets whose spec.size is negative (one error per problem) and a status
 * phase "Bogus", recording its calls.
 */
function sizeRule(): { admit: AdmissionHook; calls: Call[] } {
  const calls: Call[] = [];
  const admit: AdmissionHook = (kind, object, old, write) => {
    calls.push({ kind: kind.kind, object, old, write });
    if (kind.kind !== 'Widget') return [];
    if ((object as Widget).status?.phase === 'Bogus') {
      return ['status.phase: Unsupported value: "Bogus"'];
    }
    const size = (object as Widget).spec?.size ?? 0;
    const errors: string[] = [];
    if (size < 0) errors.push(`spec.size: Invalid value: ${size}: must be at least 0`);
    if (size < -10) errors.push('spec.size: Invalid value: much too small');
    if (size < -100) errors.push('spec.size: Invalid value: much too small');
    return errors;
  };
  return { admit, calls };
}

const sized = (name: string, size: number, extra: Partial<Widget> = {}) =>
  widget(name, 'default', { spec: { size }, ...extra });

t.test('the API server wording: one error alone, several in brackets, repeats once', async (t) => {
  t.equal(
    invalidObject(WidgetKind, 'w', ['a: Required value']).message,
    'Widget.example.cert-csi.io "w" is invalid: a: Required value',
  );
  t.equal(
    invalidObject(ThingKind, 't', ['a: x', 'b: y', 'a: x']).message,
    'Thing "t" is invalid: [a: x, b: y]',
    'a core kind has no group',
  );
  const err = invalidObject(WidgetKind, 'n'.repeat(150), ['a: x']);
  t.equal(err.reason, 'Invalid');
  t.equal(err.code, 422);
  t.equal(
    err.message,
    `Widget.example.cert-csi.io "${'n'.repeat(100)}"…(150 characters) is invalid: a: x`,
    'a long name is echoed shortened',
  );
  const many = Array.from(
    { length: 2_000 },
    (_, i) => `spec.list[${i}]: Invalid value: ${'v'.repeat(40)}`,
  );
  const capped = invalidObject(WidgetKind, 'w', many).message;
  t.ok(Buffer.byteLength(capped) <= 16 * 1024, 'cut at 16 KiB');
  t.match(
    capped,
    /^Widget\.example\.cert-csi\.io "w" is invalid: \[spec\.list\[0\]: .*…\(\d+ more bytes left out\)$/,
  );
});

t.test('create: refused objects are not stored, seen or counted', async (t) => {
  const { admit, calls } = sizeRule();
  const store = new MemoryStore({ admit });
  const events: WatchEvent<KubeObject>[] = [];
  const watch = store.watch(WidgetKind, {}, { onEvent: (e) => events.push(e), onError: t.fail });
  t.teardown(() => watch.stop());
  const before = store.resourceVersion;

  const one = await rejection(store.create(WidgetKind, sized('w', -1)));
  t.ok(isStoreError(one, 'Invalid'), 'Invalid');
  t.equal(
    (one as Error).message,
    'Widget.example.cert-csi.io "w" is invalid: spec.size: Invalid value: -1: must be at least 0',
  );
  const many = await rejection(store.create(WidgetKind, sized('w', -200)));
  t.equal(
    (many as Error).message,
    'Widget.example.cert-csi.io "w" is invalid: [spec.size: Invalid value: -200: must be at least 0, spec.size: Invalid value: much too small]',
    'every error, each once',
  );
  t.equal(store.resourceVersion, before, 'no resourceVersion used');
  t.same((await store.list(WidgetKind)).items, [], 'nothing stored');
  await flush();
  t.same(events, [], 'no watch event');

  const created = await store.create<Widget>(WidgetKind, sized('w', 1, { status: { phase: 'x' } }));
  const seen = calls.at(-1);
  t.equal(seen?.old, undefined, 'a create has no old object');
  const { resourceVersion: _rv, ...storedMetadata } = created.metadata;
  t.same(
    seen?.object,
    { ...created, metadata: storedMetadata },
    'the hook sees the object as it will be stored: uid, timestamp, generation, no status',
  );
  t.equal(seen?.object.metadata.resourceVersion, undefined, 'only the version comes later');

  await store.create(GadgetKind, gadget('g'));
  t.equal(calls.at(-1)?.kind, 'Gadget', 'every kind goes through the hook');

  const taken = await rejection(store.create(WidgetKind, sized('w', -1)));
  t.ok(isStoreError(taken, 'Invalid'), 'an invalid object is Invalid even when its name is taken');
});

t.test('createWithStatus: one write judged as a create, then as its status write', async (t) => {
  const { admit, calls } = sizeRule();
  const store = new MemoryStore({ admit });
  const events: WatchEvent<KubeObject>[] = [];
  const watch = store.watch(WidgetKind, {}, { onEvent: (e) => events.push(e), onError: t.fail });
  t.teardown(() => watch.stop());

  const created = await store.createWithStatus<Widget>(
    WidgetKind,
    sized('w', 1, { status: { phase: 'Ready' } }),
  );
  t.same(created.status, { phase: 'Ready' }, 'the status is kept');
  t.same(
    calls.map((c) => c.write),
    ['create', 'status'],
  );
  t.equal((calls[0]?.object as Widget | undefined)?.status, undefined, 'the create: no status');
  t.same(calls[1]?.old, calls[0]?.object, 'the status write against the object created');
  t.same((calls[1]?.object as Widget | undefined)?.status, { phase: 'Ready' });
  await flush();
  t.same(
    events.map((e) => [e.type, (e.object as Widget).status]),
    [['ADDED', { phase: 'Ready' }]],
    'watchers see one event, with the status',
  );

  const before = store.resourceVersion;
  const refused = await rejection(
    store.createWithStatus(WidgetKind, sized('v', 1, { status: { phase: 'Bogus' } })),
  );
  t.equal(
    (refused as Error).message,
    'Widget.example.cert-csi.io "v" is invalid: status.phase: Unsupported value: "Bogus"',
    'a refused status refuses the create',
  );
  t.equal(store.resourceVersion, before, 'nothing stored');
  t.ok(isStoreError(await rejection(store.get(WidgetKind, 'v', 'default')), 'NotFound'));
  const plain = await store.create<Widget>(WidgetKind, sized('u', 1, { status: { phase: 'x' } }));
  t.equal(plain.status, undefined, 'create still drops the status');
});

t.test('generateName: the hook sees, and the message names, the generated name', async (t) => {
  const { admit, calls } = sizeRule();
  const store = new MemoryStore({ admit, randomSuffix: () => 'abcde' });
  const err = await rejection(
    store.create(WidgetKind, {
      ...sized('', -1),
      metadata: { name: '', generateName: 'w-', namespace: 'default' },
    }),
  );
  t.match((err as Error).message, /^Widget\.example\.cert-csi\.io "w-abcde" is invalid: /);
  t.equal(calls[0]?.object.metadata.name, 'w-abcde');
});

t.test(
  'update and status writes: checked against the stored object; deletes are not',
  async (t) => {
    const { admit, calls } = sizeRule();
    const store = new MemoryStore({ admit });
    const created = await store.create<Widget>(WidgetKind, sized('w', 1));
    const withStatus = await store.updateStatus<Widget>(WidgetKind, {
      ...created,
      status: { phase: 'Ready' },
    });
    t.equal(calls.length, 2, 'a status write is admitted too');
    t.equal(calls[1]?.write, 'status');
    t.same(calls[1]?.old, created, 'against the stored object');
    t.same((calls[1]?.object as Widget | undefined)?.status, { phase: 'Ready' });
    await store.updateStatus<Widget>(WidgetKind, withStatus);
    t.equal(calls.length, 2, 'a status write that changes nothing is not admitted');
    const bogus = await rejection(
      store.updateStatus(WidgetKind, { ...withStatus, status: { phase: 'Bogus' } }),
    );
    t.equal(
      (bogus as Error).message,
      'Widget.example.cert-csi.io "w" is invalid: status.phase: Unsupported value: "Bogus"',
      'a status the hook refuses is Invalid',
    );
    t.same(await store.get(WidgetKind, 'w', 'default'), withStatus, 'and not stored');
    const err = await rejection(
      store.update(WidgetKind, { ...withStatus, spec: { size: -5 }, status: { phase: 'x' } }),
    );
    t.equal(
      (err as Error).message,
      'Widget.example.cert-csi.io "w" is invalid: spec.size: Invalid value: -5: must be at least 0',
    );
    const seen = calls.at(-1);
    t.equal(seen?.write, 'update');
    t.same(seen?.old, withStatus, 'old is the stored object');
    t.same(
      (seen?.object as Widget | undefined)?.status,
      { phase: 'Ready' },
      'the new object keeps the stored status',
    );
    t.same(
      await store.get(WidgetKind, 'w', 'default'),
      withStatus,
      'the stored object is unchanged',
    );

    const stale = await rejection(store.update(WidgetKind, { ...created, spec: { size: -5 } }));
    t.ok(isStoreError(stale, 'Conflict'), 'a stale resourceVersion is Conflict before validation');

    const updated = await store.update<Widget>(WidgetKind, { ...withStatus, spec: { size: 2 } });
    t.equal(updated.metadata.generation, 2, 'a valid update goes through');
    const failed = await store.updateStatus<Widget>(WidgetKind, {
      ...updated,
      spec: { size: -5 },
      status: { phase: 'Failed' },
    });
    t.equal(failed.status?.phase, 'Failed', 'a status write is judged with the stored spec');
    t.equal(failed.spec?.size, 2, 'whose spec it keeps');
    const count = calls.length;
    await store.delete(WidgetKind, 'w', 'default');
    t.equal(calls.length, count, 'a delete is not admitted');
  },
);

t.test('the hook gets frozen objects, and its failures are the store’s own errors', async (t) => {
  let scribble = false;
  const scribbler: AdmissionHook = (_kind, object, old) => {
    if (!scribble) return [];
    if (old) old.metadata.name = 'scribbled';
    object.metadata.labels = { scribbled: 'yes' };
    return [];
  };
  const store = new MemoryStore({ admit: scribbler });
  const created = await store.create<Widget>(WidgetKind, sized('w', 1));
  scribble = true;
  const scribbled = await rejection(store.create(WidgetKind, sized('v', 1)));
  t.ok(
    isStoreError(scribbled, 'InternalError'),
    'a hook that changes the new object fails the write',
  );
  t.match(
    (scribbled as Error).message,
    /^admission of widgets.example.cert-csi.io "v" failed: .*(read only|not extensible)/,
  );
  t.ok(
    isStoreError(
      await rejection(store.update(WidgetKind, { ...created, spec: { size: 3 } })),
      'InternalError',
    ),
    'so does one that changes the stored object',
  );
  const stored = await store.get<Widget>(WidgetKind, 'w', 'default');
  t.equal(stored.metadata.name, 'w');
  t.equal(stored.metadata.labels, undefined);
  t.same(stored.spec, { size: 1 }, 'nothing the hook did reached the store');
  t.same((await store.list(WidgetKind)).items.length, 1);

  const broken = new MemoryStore({
    admit: () => {
      throw new TypeError('spec.x.map is not a function');
    },
  });
  const err = await rejection(broken.create(WidgetKind, sized('w', 1)));
  t.ok(isStoreError(err, 'InternalError'), 'a hook that throws is an InternalError');
  t.equal(
    (err as Error).message,
    'admission of widgets.example.cert-csi.io "w" failed: spec.x.map is not a function',
  );
  const forbidding = new MemoryStore({
    admit: () => {
      throw new StoreError('Forbidden', 'not you');
    },
  });
  t.ok(
    isStoreError(await rejection(forbidding.create(WidgetKind, sized('w', 1))), 'Forbidden'),
    'a StoreError from the hook is passed on',
  );
});

t.test(
  'persistence: refused writes reach no file; loaded objects are not admitted again',
  async (t) => {
    const stateDir = t.testdir();
    const first = await MemoryStore.open({ persistence: new StateDirectory(stateDir) });
    await first.create(WidgetKind, sized('old', -1));
    await first.close();

    const refuseAll: AdmissionHook = (kind: ResourceKind) => [`${kind.kind}: Forbidden: nothing`];
    const second = await MemoryStore.open({
      persistence: new StateDirectory(stateDir),
      admit: refuseAll,
    });
    t.equal(
      (await second.get<Widget>(WidgetKind, 'old', 'default')).spec?.size,
      -1,
      'loaded as stored',
    );
    t.ok(isStoreError(await rejection(second.create(WidgetKind, sized('new', 1))), 'Invalid'));
    await second.close();

    const third = await MemoryStore.open({ persistence: new StateDirectory(stateDir) });
    t.same(
      (await third.list(WidgetKind)).items.map((w) => w.metadata.name),
      ['old'],
      'the refused object was never persisted',
    );
    await third.close();
  },
);
