import t from 'tap';
import { RecentResults } from '../../src/pki/recent-results.js';

t.test('holds the last maxEntries results, least recently used out first', async (t) => {
  const calls: string[] = [];
  const results = new RecentResults<{ of: string }>(2, 10);
  const compute = (key: string) => {
    calls.push(key);
    return { of: key };
  };
  const a = results.get('a', compute);
  t.equal(results.get('a', compute), a, 'the same result object, not computed again');
  results.get('b', compute);
  results.get('a', compute); // a is now the most recently used
  results.get('c', compute); // evicts b
  t.equal(results.size, 2, 'never more than maxEntries');
  t.equal(results.get('a', compute), a);
  results.get('b', compute);
  t.same(calls, ['a', 'b', 'c', 'b'], 'b computed again after its eviction');
});

t.test('a key longer than maxKeyLength is computed every time and never held', async (t) => {
  let calls = 0;
  const results = new RecentResults<number>(4, 3);
  for (let i = 0; i < 3; i++) results.get('long key', () => ++calls);
  t.equal(calls, 3);
  t.equal(results.size, 0);
});

t.test('a compute that throws is not held: the next call throws again', async (t) => {
  let calls = 0;
  const results = new RecentResults<number>(4, 100);
  const failing = () => {
    calls++;
    throw new Error('bad input');
  };
  t.throws(() => results.get('x', failing), { message: 'bad input' });
  t.throws(() => results.get('x', failing), { message: 'bad input' });
  t.equal(calls, 2);
  t.equal(results.size, 0);
  results.clear();
});

t.test('set holds a result as get would; has does not refresh it', async (t) => {
  const results = new RecentResults<number>(2, 5);
  results.set('a', 1);
  results.set('b', 2);
  t.ok(results.has('a'));
  results.set('c', 3); // a is the oldest: has did not make it recent
  t.notOk(results.has('a'));
  t.equal(
    results.get('b', () => 0),
    2,
  );
  results.set('too long', 4);
  t.notOk(results.has('too long'), 'a long key is never held');
});
