import t from 'tap';
import { goList, goRfc1123, goTimeString } from '../../src/base/go-text.js';

t.test('Go’s %v of a []string', async (t) => {
  t.equal(goList([]), '[]');
  t.equal(goList(['spec.dnsNames', 'spec.uris']), '[spec.dnsNames spec.uris]');
});

t.test('Go’s time.Time.String() and RFC1123 for UTC times', async (t) => {
  t.equal(goTimeString(new Date('2026-01-01T16:00:00Z')), '2026-01-01 16:00:00 +0000 UTC');
  t.equal(
    goTimeString(new Date('2026-01-01T16:00:00.250Z')),
    '2026-01-01 16:00:00.25 +0000 UTC',
    'a fraction without trailing zeros',
  );
  t.equal(goRfc1123(new Date('2026-01-02T03:04:05Z')), 'Fri, 02 Jan 2026 03:04:05 UTC');
});
