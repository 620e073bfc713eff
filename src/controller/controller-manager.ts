import { discardEvents, type EventRecorder } from '../api/event.js';
import { type Logger, silentLogger } from '../api/logger.js';
import { type Clock, systemClock } from '../base/clock.js';
import { errorMessage } from '../base/error-message.js';
import { publishFact } from '../base/telemetry.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';
import { WorkQueue } from '../store/work-queue.js';
import {
  type ControllerDefinition,
  ITEM_BASED_RETRY,
  type RetryPolicy,
} from './controller-definition.js';
import { SharedInformers } from './shared-informers.js';

export interface StartControllersOptions<Config> {
  store: ResourceStore;
  /** The registry to run from (see selectControllers for which of them). */
  controllers: readonly ControllerDefinition<Config>[];
  /** The names to run; every controller given when absent. */
  enabled?: ReadonlySet<string>;
  config: Config;
  /** The process's informers, when something else (the node plugin) shares them; stopped by their owner. */
  informers?: SharedInformers;
  events?: EventRecorder;
  logger?: Logger;
  clock?: Clock;
  /** Replaces every controller's retry backoff (tests use milliseconds). */
  retry?: Partial<RetryPolicy>;
  /** Aborting it before the caches are synced makes the start give up (reject). */
  signal?: AbortSignal;
}

/** Controllers that run until stop(). */
export interface RunningControllers {
  /** The names of the controllers running, in registry order. */
  names: readonly string[];
  /** The informers they use (for readiness and for tests). */
  informers: SharedInformers;
  /** Stops every controller; resolves when in-flight syncs ended. */
  stop(): Promise<void>;
}

/**
 * Builds the enabled controllers, starts the informers they asked for, waits until every
 * cache is synced, then starts each controller's workers on its own rate-limited queue. Keys
 * enqueued by the first list wait in the queues until then, as client-go's WaitForCacheSync.
 */
export async function startControllers<Config>(
  options: StartControllersOptions<Config>,
): Promise<RunningControllers> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const ownInformers = options.informers === undefined;
  const informers =
    options.informers ??
    new SharedInformers(options.store, {
      clock,
      // Retried anyway; logged so a cache that cannot sync (API down, RBAC) says why.
      onError: (err) => logger.warn({ err: err.message }, 'list or watch failed, will retry'),
    });
  const selected = options.controllers.filter(
    (definition) => options.enabled === undefined || options.enabled.has(definition.name),
  );
  const enabled: ReadonlySet<string> = new Set(selected.map((definition) => definition.name));
  const built = selected.map((definition) => {
    const log = logger.child({ controller: definition.name });
    const retry = { ...(definition.retry ?? ITEM_BASED_RETRY), ...options.retry };
    const queue = new WorkQueue<string>({ ...retry, clock });
    const controller = definition.setup({
      store: options.store,
      informers,
      events: options.events ?? discardEvents,
      logger: log,
      clock,
      now: () => new Date(clock.now()),
      config: options.config,
      enabled,
    });
    const unsubscribe = controller.watches.map((watch) => watch.subscribe((key) => queue.add(key)));
    return { definition, log, queue, controller, unsubscribe };
  });

  const stopAll = () => {
    for (const { queue, unsubscribe } of built) {
      queue.shutDown();
      for (const remove of unsubscribe) remove();
    }
    if (ownInformers) informers.stop();
  };
  informers.start();
  try {
    await informers.waitForSync(options.signal);
  } catch (err) {
    stopAll();
    throw err;
  }

  const runs = built.map(({ definition, log, queue, controller }) =>
    queue.run(async (key) => {
      let result: Awaited<ReturnType<typeof controller.sync>>;
      try {
        result = await controller.sync(key);
      } catch (err) {
        publishFact('sync', { controller: definition.name, error: true });
        // A conflict only means the cache was behind; it is routine, not a warning.
        const level = isStoreError(err, 'Conflict') ? 'debug' : 'warn';
        log[level]({ key, err: errorMessage(err) }, 'sync failed, will retry');
        throw err;
      }
      publishFact('sync', { controller: definition.name, error: false });
      if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
    }, definition.workers?.(options.config) ?? 1),
  );
  logger.info({ controllers: selected.map((d) => d.name) }, 'controllers started');
  return {
    names: selected.map((definition) => definition.name),
    informers,
    async stop() {
      stopAll();
      await Promise.all(runs);
    },
  };
}
