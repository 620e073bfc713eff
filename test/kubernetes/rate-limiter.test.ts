import t from 'tap';
import { ManualClock } from '../../src/base/clock.js';
import { RateLimiter } from '../../src/store/kubernetes/rate-limiter.js';

t.test('a burst passes at once, then requests are spaced at qps, in arrival order', async (t) => {
  const clock = new ManualClock();
  const limiter = new RateLimiter(10, 3, clock);
  const passed: number[] = [];
  for (let i = 0; i < 6; i++) void limiter.take().then(() => passed.push(i));
  await Promise.resolve();
  await Promise.resolve();
  t.same(passed, [0, 1, 2], 'the burst of 3 is not delayed');
  clock.advance(99);
  await Promise.resolve();
  t.same(passed, [0, 1, 2], 'nothing more before 100 ms at 10 qps');
  clock.advance(1);
  await Promise.resolve();
  t.same(passed, [0, 1, 2, 3], 'one more after 100 ms');
  clock.advance(200);
  await Promise.resolve();
  await Promise.resolve();
  t.same(passed, [0, 1, 2, 3, 4, 5], 'then one per 100 ms, in order');
});

t.test('idle time refills the bucket up to the burst, not beyond', async (t) => {
  const clock = new ManualClock();
  const limiter = new RateLimiter(1, 2, clock);
  await limiter.take();
  await limiter.take();
  clock.advance(60_000);
  const passed: number[] = [];
  for (let i = 0; i < 3; i++) void limiter.take().then(() => passed.push(i));
  await Promise.resolve();
  await Promise.resolve();
  t.same(passed, [0, 1], 'a minute idle gives back only the burst of 2');
});

t.test('a bad rate is refused with the values named', async (t) => {
  t.throws(() => new RateLimiter(0, 1), /qps > 0.*got 0, 1/);
  t.throws(() => new RateLimiter(5, 0), /burst >= 1/);
  t.throws(() => new RateLimiter(5, 1.5), /whole burst/);
});
