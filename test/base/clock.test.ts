import t from 'tap';
import { ManualClock, systemClock } from '../../src/base/clock.js';

t.test('ManualClock fires due timers in order as time advances', async (t) => {
  const clock = new ManualClock(1_000);
  t.equal(clock.now(), 1_000);
  t.equal(new ManualClock().now(), Date.UTC(2026, 0, 1), 'a fixed default start');
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 200);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
  clock.setTimeout(() => fired.push(`a2@${clock.now()}`), 100);
  const cancelled = clock.setTimeout(() => fired.push('cancelled'), 150);
  clock.setTimeout(() => {
    fired.push(`c@${clock.now()}`);
    clock.setTimeout(() => fired.push(`chained@${clock.now()}`), 50);
    clock.setTimeout(() => fired.push('too late'), 500);
  }, 250);
  clock.setTimeout(() => fired.push(`negative@${clock.now()}`), -5);
  clock.clearTimeout(cancelled);
  clock.clearTimeout({});
  t.equal(clock.pendingTimers(), 5);
  t.equal(clock.nextTimerAt(), 1_000);
  clock.advance(99);
  t.same(fired, ['negative@1000']);
  clock.advance(301);
  t.same(fired, ['negative@1000', 'a@1100', 'a2@1100', 'b@1200', 'c@1250', 'chained@1300']);
  t.equal(clock.now(), 1_400);
  t.equal(clock.pendingTimers(), 1);
  t.equal(clock.nextTimerAt(), 1_750);
  clock.advance(-10);
  t.equal(clock.now(), 1_400, 'time never goes back');
  clock.advance(1_000);
  t.equal(fired.at(-1), 'too late');
  t.equal(clock.nextTimerAt(), undefined);
});

t.test('systemClock uses real time and timers', async (t) => {
  const before = Date.now();
  t.ok(systemClock.now() >= before);
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 1));
  let fired = false;
  const handle = systemClock.setTimeout(() => {
    fired = true;
  }, 1);
  systemClock.clearTimeout(handle);
  systemClock.clearTimeout({});
  // A later timer firing proves the earlier, cleared one had its chance.
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 5));
  t.notOk(fired, 'a cleared timer does not fire');
});

t.test('systemClock re-arms waits longer than Node can time', async (t) => {
  const { setTimeout: realSetTimeout } = globalThis;
  const steps: number[] = [];
  // Stand-in timers that fire at once, recording the requested delays.
  globalThis.setTimeout = ((fn: () => void, ms: number) => {
    steps.push(ms);
    return realSetTimeout(fn, 0);
  }) as typeof setTimeout;
  try {
    const day = 24 * 3600 * 1000;
    await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 60 * day));
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  t.same(steps, [2 ** 31 - 1, 2 ** 31 - 1, 60 * 24 * 3600 * 1000 - 2 * (2 ** 31 - 1)]);
});
