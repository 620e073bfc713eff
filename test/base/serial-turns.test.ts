import { setImmediate as nextTurn } from 'node:timers/promises';
import t from 'tap';
import { SerialTurns } from '../../src/base/serial-turns.js';

t.test('tasks run one at a time, in order, each in a later event-loop turn', async (t) => {
  const turns = new SerialTurns();
  const events: string[] = [];
  const results = [1, 2, 3].map((n) =>
    turns.run(() => {
      events.push(`task ${n}`);
      return n * 10;
    }),
  );
  events.push('queued');
  // I/O and immediates queued meanwhile run between the tasks, never after all of them.
  const between = (async () => {
    for (let i = 0; i < 4; i++) {
      await nextTurn();
      events.push(`turn ${i}`);
    }
  })();
  t.same(await Promise.all(results), [10, 20, 30]);
  await between;
  t.equal(events[0], 'queued', 'no task runs at once');
  const order = events.filter((e) => e.startsWith('task'));
  t.same(order, ['task 1', 'task 2', 'task 3']);
  const task2 = events.indexOf('task 2');
  const task1 = events.indexOf('task 1');
  t.ok(
    events.slice(task1 + 1, task2).some((e) => e.startsWith('turn')),
    `something else ran between two tasks: ${events.join(', ')}`,
  );
});

t.test('a task that throws fails its caller only; the next one still runs', async (t) => {
  const turns = new SerialTurns();
  const failed = turns.run(() => {
    throw new Error('not JSON');
  });
  const next = turns.run(() => 'parsed');
  await t.rejects(failed, { message: 'not JSON' });
  t.equal(await next, 'parsed');
});
