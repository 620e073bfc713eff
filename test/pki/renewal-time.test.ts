import t from 'tap';
import { renewalTime } from '../../src/pki/renewal-time.js';

const H = 3600_000;
const nb = new Date('1970-01-01T00:00:00Z');
const na = new Date('1970-01-04T00:00:00Z');

t.test('csi-driver test vectors', async (t) => {
  t.same(renewalTime(nb, na), new Date('1970-01-03T00:00:00Z'), 'default: two thirds in');
  t.same(renewalTime(nb, na, 48 * H), new Date('1970-01-02T00:00:00Z'), 'renew-before 48h');
  t.same(
    renewalTime(nb, na, 100 * H),
    new Date('1970-01-03T00:00:00Z'),
    '100h > lifetime: fallback',
  );
});

t.test('renewBefore must be strictly between 0 and the lifetime', async (t) => {
  t.same(renewalTime(nb, na, 72 * H), new Date('1970-01-03T00:00:00Z'), 'equal to lifetime');
  t.same(renewalTime(nb, na, 0), new Date('1970-01-03T00:00:00Z'), 'zero');
  t.same(renewalTime(nb, na, -H), new Date('1970-01-03T00:00:00Z'), 'negative');
  t.same(renewalTime(nb, na, 72 * H - 1000), new Date('1970-01-01T00:00:01Z'), 'just under');
});

t.test('the result is truncated down to the whole second', async (t) => {
  const start = new Date('2026-01-01T00:00:00Z');
  const end = new Date('2026-01-01T00:00:10Z');
  // 10s / 3 = 3.333s before the end: 6.667s in, truncated to 6s.
  t.same(renewalTime(start, end), new Date('2026-01-01T00:00:06Z'));
  t.same(renewalTime(start, end, 1500), new Date('2026-01-01T00:00:08Z'));
  const odd = new Date('2026-01-01T00:00:10.900Z');
  t.equal(renewalTime(start, odd, 1000).getTime() % 1000, 0);
  t.same(renewalTime(start, odd, 1000), new Date('2026-01-01T00:00:09Z'));
});

t.test('before 1970 the truncation still goes down', async (t) => {
  const start = new Date('1969-12-31T23:59:50Z');
  const end = new Date('1970-01-01T00:00:00Z');
  t.same(renewalTime(start, end), new Date('1969-12-31T23:59:56Z'));
});
