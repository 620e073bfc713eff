import t from 'tap';
import { ByteBudget } from '../../../src/admission/webhook/byte-budget.js';

t.test('a take that does not fit is refused whole; given back, bytes fit again', async (t) => {
  const budget = new ByteBudget(100);
  t.equal(budget.capacity, 100);
  t.ok(budget.take(60));
  t.ok(budget.take(40), 'up to the capacity exactly');
  t.notOk(budget.take(1), 'not one byte more');
  t.equal(budget.inUse, 100, 'a refused take takes nothing');
  budget.give(60);
  t.notOk(budget.take(61));
  t.ok(budget.take(60));
  t.equal(budget.inUse, 100);
  t.ok(budget.take(0), 'nothing always fits');
});
