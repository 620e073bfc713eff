import t from 'tap';
import { pooledRandomBytes } from '../../src/pki/random-pool.js';

t.test('pooled random bytes: the size asked, never handed out twice', async (t) => {
  for (const size of [0, 1, 20, 4096, 5000]) t.equal(pooledRandomBytes(size).length, size);
  // Across several refills of the pool: no two 20-byte draws alike.
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) seen.add(pooledRandomBytes(20).toString('hex'));
  t.equal(seen.size, 1000);
});

t.test('each draw is its own copy', async (t) => {
  const first = pooledRandomBytes(20);
  const kept = Buffer.from(first);
  pooledRandomBytes(20).fill(0);
  t.same(first, kept, 'writing a later draw leaves an earlier one alone');
  first.fill(0xff);
  t.not(pooledRandomBytes(20).toString('hex'), 'ff'.repeat(20));
});
