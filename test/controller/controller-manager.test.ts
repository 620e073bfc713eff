import t from 'tap';
import type { Logger } from '../../src/api/logger.js';
import type { KubeObject } from '../../src/api/meta.js';
import {
  defineController,
  keyOf,
  watchInformer,
} from '../../src/controller/controller-definition.js';
import { startControllers } from '../../src/controller/controller-manager.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { StoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { until } from '../support/eventually.js';
import { FaultyStore } from '../support/faulty-store.js';
import { GadgetKind, gadget, type Widget, WidgetKind, widget } from '../support/store-fixtures.js';

/** A logger that keeps `level message key` lines. */
function recording(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    lines.push(`${level} ${msg} ${String(obj.key ?? obj.controllers ?? '')}`);
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return { logger, lines };
}

t.test('events map to keys; workers start only after every cache synced', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('w', 'ns', { spec: { colour: 'g1' } }));
  await store.create(GadgetKind, gadget('g1'));
  const synced: string[] = [];
  const seenSynced: boolean[] = [];
  // Widgets sync by their own key; a Gadget change syncs the widgets whose colour names it.
  const controller = defineController<{ prefix: string }>({
    name: 'widgets',
    setup({ informers, config }) {
      const widgets = informers.informer<Widget>(WidgetKind);
      const gadgets = informers.informer<KubeObject>(GadgetKind);
      return {
        watches: [
          watchInformer(widgets),
          watchInformer(gadgets, (g) =>
            widgets
              .list()
              .filter((w) => w.spec?.colour === g.metadata.name)
              .map(keyOf),
          ),
        ],
        async sync(key) {
          seenSynced.push(informers.hasSynced());
          synced.push(`${config.prefix}${key}`);
          return undefined;
        },
      };
    },
  });
  const running = await startControllers({
    store,
    controllers: [controller],
    config: { prefix: '>' },
  });
  t.teardown(() => running.stop());
  t.same(running.names, ['widgets']);
  await until(() => synced.length > 0, { what: 'the first sync' });
  t.same(synced, ['>ns/w'], 'the initial add, once, though two watches saw it');
  const g = await store.get(GadgetKind, 'g1');
  await store.update(GadgetKind, { ...g, metadata: { ...g.metadata, labels: { x: 'y' } } });
  await until(() => synced.length > 1, { what: 'the gadget change' });
  t.same(synced, ['>ns/w', '>ns/w'], 'a gadget change syncs the widget that names it');
  t.ok(seenSynced.every(Boolean), 'every sync ran with synced caches');
});

t.test('a failed sync is retried with the backoff; requeueAfter looks again later', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('w', 'ns'));
  const { logger, lines } = recording();
  let calls = 0;
  const controller = defineController<undefined>({
    name: 'flaky',
    setup({ informers }) {
      return {
        watches: [watchInformer(informers.informer(WidgetKind))],
        async sync() {
          calls++;
          if (calls === 1) throw new Error('boom');
          if (calls === 2) throw new StoreError('Conflict', 'stale');
          if (calls === 3) return { requeueAfterMs: 5 };
          return undefined;
        },
      };
    },
  });
  const running = await startControllers({
    store,
    controllers: [controller],
    config: undefined,
    logger,
    retry: { baseDelayMs: 5, maxDelayMs: 10 },
  });
  t.teardown(() => running.stop());
  await until(() => calls >= 4, { what: 'four syncs' });
  t.ok(lines.includes('warn sync failed, will retry ns/w'), 'an error is a warning');
  t.ok(lines.includes('debug sync failed, will retry ns/w'), 'a conflict is routine');
  t.match(lines, [/info controllers started flaky/]);
});

t.test('only the enabled controllers run, and each knows who runs beside it', async (t) => {
  const store = new MemoryStore();
  await store.create(WidgetKind, widget('w', 'ns'));
  const ran: string[] = [];
  const neighbours: string[][] = [];
  const make = (name: string) =>
    defineController<undefined>({
      name,
      workers: () => 2,
      setup({ informers, enabled }) {
        neighbours.push([...enabled]);
        return {
          watches: [watchInformer(informers.informer(WidgetKind))],
          async sync(key) {
            ran.push(`${name} ${key}`);
            return undefined;
          },
        };
      },
    });
  const running = await startControllers({
    store,
    controllers: [make('a'), make('b'), make('c')],
    enabled: new Set(['a', 'c']),
    config: undefined,
  });
  t.teardown(() => running.stop());
  t.same(running.names, ['a', 'c']);
  await until(() => ran.length === 2, { what: 'both controllers' });
  t.same(ran.sort(), ['a ns/w', 'c ns/w']);
  t.same(neighbours, [
    ['a', 'c'],
    ['a', 'c'],
  ]);
});

t.test('stop ends the workers; shared informers are left to their owner', async (t) => {
  const store = new MemoryStore();
  const informers = new SharedInformers(store);
  t.teardown(() => informers.stop());
  let syncs = 0;
  const controller = defineController<undefined>({
    name: 'x',
    setup({ informers: shared }) {
      return {
        watches: [watchInformer(shared.informer(WidgetKind), undefined, { deletes: true })],
        async sync() {
          syncs++;
          return undefined;
        },
      };
    },
  });
  const running = await startControllers({
    store,
    controllers: [controller],
    config: undefined,
    informers,
  });
  t.equal(running.informers, informers);
  await store.create(WidgetKind, widget('w', 'ns'));
  await until(() => syncs === 1, { what: 'the add' });
  await store.delete(WidgetKind, 'w', 'ns');
  await until(() => syncs === 2, { what: 'the delete (watched with deletes)' });
  await running.stop();
  t.ok(informers.informer(WidgetKind).hasSynced(), 'the shared informer still runs');
  await store.create(WidgetKind, widget('v', 'ns'));
  await until(() => informers.informer(WidgetKind).get('v', 'ns'), { what: 'the cache' });
  t.equal(syncs, 2, 'no sync after stop');
});

t.test('a start whose caches cannot sync gives up when aborted', async (t) => {
  const memory = new MemoryStore();
  const down = new FaultyStore(memory);
  down.listsFailWith = new Error('API down');

  const abort = new AbortController();
  const controller = defineController<undefined>({
    name: 'x',
    setup({ informers }) {
      return {
        watches: [watchInformer(informers.informer(WidgetKind))],
        sync: async () => undefined,
      };
    },
  });
  const starting = startControllers({
    store: down,
    controllers: [controller],
    config: undefined,
    signal: abort.signal,
  });
  setImmediate(() => abort.abort());
  await t.rejects(starting, /stopped before its cache synced/);
});
