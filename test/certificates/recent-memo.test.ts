import t from 'tap';
import { RecentMemo } from '../../src/certificates/recent-memo.js';

t.test('computes once per key, and remembers at most its capacity', async (t) => {
  const memo = new RecentMemo<string, number>(2);
  let computed = 0;
  const length = (text: string) => {
    computed++;
    return text.length;
  };
  t.equal(memo.get('a', length), 1);
  t.equal(memo.get('a', length), 1);
  t.equal(computed, 1, 'the same key is computed once');
  t.equal(memo.get('bb', length), 2);
  // 'a' used again after 'bb': 'ccc' pushes out 'bb', the least recently used.
  memo.get('a', length);
  t.equal(memo.get('ccc', length), 3);
  t.equal(memo.size, 2, 'never more than its capacity');
  computed = 0;
  memo.get('a', length);
  t.equal(computed, 0, 'the most recently used key is kept');
  memo.get('bb', length);
  t.equal(computed, 1, 'the least recently used key was forgotten');
});

t.test('set replaces a value and makes it the most recent', async (t) => {
  const memo = new RecentMemo<string, number>(2);
  memo.set('a', 1);
  memo.set('b', 2);
  memo.set('a', 10);
  memo.set('c', 3);
  t.equal(
    memo.get('a', () => -1),
    10,
    'a was set again after b, so b went first',
  );
  t.equal(
    memo.get('b', () => -1),
    -1,
  );
});
