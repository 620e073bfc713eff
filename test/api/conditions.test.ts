import t from 'tap';
import {
  findCondition,
  formatTimestamp,
  isConditionTrue,
  setCondition,
} from '../../src/api/conditions.js';

const t0 = new Date('2026-11-21T10:00:00.123Z');
const t1 = new Date('2026-11-21T10:05:00.000Z');

t.test('timestamps have second precision like the Kubernetes API', async (t) => {
  t.equal(formatTimestamp(t0), '2026-11-21T10:00:00Z');
});

t.test('a new condition gets the transition time now', async (t) => {
  const list = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Pending' }, t0);
  t.same(list, [
    {
      type: 'Ready',
      status: 'False',
      reason: 'Pending',
      lastTransitionTime: '2026-11-21T10:00:00Z',
    },
  ]);
});

t.test('the same status keeps lastTransitionTime even when reason or message change', async (t) => {
  const first = setCondition([], { type: 'Ready', status: 'False', reason: 'Pending' }, t0);
  const second = setCondition(
    first,
    { type: 'Ready', status: 'False', reason: 'Failed', message: 'boom' },
    t1,
  );
  t.equal(second.length, 1);
  t.equal(second[0]?.lastTransitionTime, '2026-11-21T10:00:00Z');
  t.equal(second[0]?.reason, 'Failed');
  t.equal(second[0]?.message, 'boom');
  t.equal(first[0]?.reason, 'Pending', 'the input list is not mutated');
});

t.test('a status change moves lastTransitionTime', async (t) => {
  const first = setCondition([], { type: 'Ready', status: 'False', reason: 'Pending' }, t0);
  const second = setCondition(first, { type: 'Ready', status: 'True', reason: 'Issued' }, t1);
  t.equal(second[0]?.lastTransitionTime, '2026-11-21T10:05:00Z');
});

t.test('other condition types are left in place', async (t) => {
  let list = setCondition([], { type: 'Approved', status: 'True', reason: 'cert-manager.io' }, t0);
  list = setCondition(list, { type: 'Ready', status: 'True', reason: 'Issued' }, t1);
  t.same(
    list.map((c) => c.type),
    ['Approved', 'Ready'],
  );
  t.equal(findCondition(list, 'Approved')?.lastTransitionTime, '2026-11-21T10:00:00Z');
  t.ok(isConditionTrue(list, 'Ready'));
  t.notOk(isConditionTrue(list, 'Denied'));
  t.notOk(isConditionTrue(undefined, 'Ready'));
});
