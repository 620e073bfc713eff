import t from 'tap';
import { ManualClock } from '../../src/base/clock.js';
import { WorkQueue } from '../../src/store/work-queue.js';
import { flush } from '../support/store-fixtures.js';

/** A promise with its resolve and reject. */
function deferred<T = void>() {
  let resolve: (value: T) => void = () => undefined;
  let reject: (err: Error) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

async function take<K>(queue: WorkQueue<K>): Promise<K> {
  const item = await queue.get();
  if (item.done) throw new Error('queue shut down');
  return item.key;
}

t.test('a waiting key is not added twice', async (t) => {
  const queue = new WorkQueue({ clock: new ManualClock() });
  queue.add('a');
  queue.add('b');
  queue.add('a');
  t.equal(queue.len(), 2);
  t.equal(await take(queue), 'a');
  t.equal(await take(queue), 'b');
  t.equal(queue.len(), 0);
});

t.test('a key added while processing is queued again once, after done', async (t) => {
  const queue = new WorkQueue({ clock: new ManualClock() });
  queue.add('a');
  const key = await take(queue);
  queue.add('a');
  queue.add('a');
  t.equal(queue.len(), 0, 'not handed out while processing');
  const waiting = take(queue);
  await flush();
  queue.done(key);
  t.equal(await waiting, 'a', 'a waiting worker gets it');
  queue.done('a');
  t.equal(queue.len(), 0);
});

t.test('get waits for a key', async (t) => {
  const queue = new WorkQueue<number>({ clock: new ManualClock() });
  const next = queue.get();
  await flush();
  queue.add(7);
  t.same(await next, { done: false, key: 7 });
});

t.test('addAfter: in order of due time, the earliest add of a key wins', async (t) => {
  const clock = new ManualClock();
  const queue = new WorkQueue({ clock });
  queue.addAfter('slow', 300);
  queue.addAfter('fast', 100);
  queue.addAfter('middle', 200);
  queue.addAfter('moved-earlier', 500);
  queue.addAfter('moved-earlier', 50);
  queue.addAfter('kept-early', 60);
  queue.addAfter('kept-early', 400);
  clock.advance(99);
  t.equal(queue.len(), 2, 'moved-earlier and kept-early');
  clock.advance(300);
  const order: string[] = [];
  while (queue.len() > 0) order.push(await take(queue));
  t.same(order, ['moved-earlier', 'kept-early', 'fast', 'middle', 'slow']);
  clock.advance(1000);
  t.equal(queue.len(), 0, 'the replaced and ignored adds do not fire later');
  queue.addAfter('now', 0);
  t.equal(queue.len(), 1, 'a zero delay adds at once');
});

t.test('addRateLimited doubles from 5 s up to 300 s; forget resets', async (t) => {
  const clock = new ManualClock();
  const queue = new WorkQueue({ clock });
  const delays: number[] = [];
  for (let i = 0; i < 9; i++) {
    queue.addRateLimited('k');
    const due = clock.nextTimerAt() as number;
    delays.push(due - clock.now());
    clock.advance(due - clock.now() - 1);
    t.equal(queue.len(), 0, 'not before its time');
    clock.advance(1);
    t.equal(queue.len(), 1);
    queue.done(await take(queue));
  }
  t.same(delays, [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  t.equal(queue.numRequeues('k'), 9);
  t.equal(queue.numRequeues('other'), 0, 'failures are per key');
  queue.forget('k');
  t.equal(queue.numRequeues('k'), 0);
  queue.addRateLimited('k');
  t.equal((clock.nextTimerAt() as number) - clock.now(), 5_000);
});

t.test('custom delays', async (t) => {
  const clock = new ManualClock();
  const queue = new WorkQueue({ clock, baseDelayMs: 1_000, maxDelayMs: 30_000 });
  const delays: number[] = [];
  for (let i = 0; i < 7; i++) {
    queue.addRateLimited('k');
    const due = clock.nextTimerAt() as number;
    delays.push(due - clock.now());
    clock.advance(due - clock.now());
    queue.done(await take(queue));
  }
  t.same(delays, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
});

t.test('run: a throwing handler is retried with backoff, a succeeding one forgotten', async (t) => {
  const clock = new ManualClock();
  const failures: Array<[unknown, string]> = [];
  const queue = new WorkQueue({ clock, onError: (err, key) => failures.push([err, key]) });
  const calls: number[] = [];
  let called = deferred();
  const running = queue.run(async (key) => {
    t.equal(key, 'k');
    calls.push(clock.now() - start);
    called.resolve();
    if (calls.length < 3) throw new Error(`attempt ${calls.length}`);
  });
  const start = clock.now();
  queue.add('k');
  for (const delay of [5_000, 10_000]) {
    await called.promise;
    called = deferred();
    await flush();
    t.equal(queue.numRequeues('k'), calls.length);
    clock.advance(delay);
  }
  await called.promise;
  await flush();
  t.same(calls, [0, 5_000, 15_000]);
  t.equal(queue.numRequeues('k'), 0, 'success forgets the failures');
  t.same(
    failures.map(([err, key]) => [(err as Error).message, key]),
    [
      ['attempt 1', 'k'],
      ['attempt 2', 'k'],
    ],
  );
  queue.shutDown();
  await running;
});

t.test('handlers may ask for a recheck with addAfter', async (t) => {
  const clock = new ManualClock();
  const queue = new WorkQueue({ clock });
  const times: number[] = [];
  let called = deferred();
  const running = queue.run(async (key) => {
    times.push(clock.now());
    if (times.length === 1) queue.addAfter(key, 60_000);
    called.resolve();
  });
  queue.add('k');
  await called.promise;
  called = deferred();
  await flush();
  t.equal(queue.len(), 0);
  clock.advance(60_000);
  await called.promise;
  t.equal((times[1] as number) - (times[0] as number), 60_000);
  queue.shutDown();
  await running;
});

t.test('concurrency: keys in parallel, one key never twice at once', async (t) => {
  const clock = new ManualClock();
  const queue = new WorkQueue({ clock });
  const inFlight = new Set<string>();
  let parallel = 0;
  let maxParallel = 0;
  let processed = 0;
  const running = queue.run(async (key) => {
    t.notOk(inFlight.has(key), `${key} is not already being processed`);
    inFlight.add(key);
    parallel++;
    maxParallel = Math.max(maxParallel, parallel);
    // Re-add the key while it is processed: it must wait for this run to end.
    queue.add(key);
    await flush();
    inFlight.delete(key);
    parallel--;
    processed++;
  }, 4);
  for (let round = 0; round < 20; round++) {
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) queue.add(key);
    await flush();
  }
  queue.shutDown();
  await running;
  t.equal(maxParallel, 4, 'four workers ran at once');
  t.ok(processed >= 20, `processed ${processed} keys`);
});

t.test('shutDown drains waiting keys, drops delayed ones, ignores new ones', async (t) => {
  const clock = new ManualClock();
  const queue = new WorkQueue({ clock });
  const processed: string[] = [];
  const gate = deferred();
  const started = deferred();
  queue.add('a');
  queue.add('b');
  queue.add('c');
  queue.addAfter('delayed', 1_000);
  const running = queue.run(async (key) => {
    processed.push(key);
    if (key === 'a') {
      started.resolve();
      await gate.promise;
    }
    if (key === 'b') throw new Error('fails during the drain');
  });
  await started.promise;
  queue.shutDown();
  t.ok(queue.isShuttingDown());
  queue.add('late');
  queue.addAfter('late-delayed', 10);
  queue.addRateLimited('late-limited');
  t.equal(clock.pendingTimers(), 0, 'delayed adds dropped');
  gate.resolve();
  await running;
  t.same(
    processed,
    ['a', 'b', 'c'],
    'waiting keys drained, new ones ignored, failures not retried',
  );
  t.same(await queue.get(), { done: true });
});

t.test('shutDown wakes idle workers', async (t) => {
  const queue = new WorkQueue<string>();
  const running = queue.run(async () => undefined, 3);
  await flush();
  queue.shutDown();
  await running;
  t.pass('run resolved');
});

t.test('keys may be any value, including undefined', async (t) => {
  const queue = new WorkQueue<string | undefined>({ clock: new ManualClock() });
  queue.add(undefined);
  t.equal(queue.len(), 1);
  t.same(await queue.get(), { done: false, key: undefined });
});
