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

t.test('renewBeforePercentage applies when renewBefore does not, inside (0, 100)', async (t) => {
  const cases: Array<[string, number | undefined, number | undefined, string]> = [
    ['25 % of 72h is 18h', undefined, 25, '1970-01-03T06:00:00Z'],
    ['renewBefore wins over the percentage', 48 * H, 25, '1970-01-02T00:00:00Z'],
    ['renewBefore out of range: the percentage', 100 * H, 50, '1970-01-02T12:00:00Z'],
    ['0 % falls back to a third', undefined, 0, '1970-01-03T00:00:00Z'],
    ['100 % falls back to a third', undefined, 100, '1970-01-03T00:00:00Z'],
    ['99 % of 72h', undefined, 99, '1970-01-01T00:43:12Z'],
  ];
  for (const [name, renewBefore, percentage, expected] of cases) {
    t.same(renewalTime(nb, na, renewBefore, percentage), new Date(expected), name);
  }
});
