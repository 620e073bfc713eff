import t from 'tap';
import { goByteSlice, goList, goRfc1123, goTimeString } from '../../src/base/go-text.js';

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

t.test('Go’s %#v of a []byte, cut after 100 characters with the full length', async (t) => {
  t.equal(goByteSlice(new Uint8Array()), '[]byte{}');
  t.equal(goByteSlice(Uint8Array.of(0x2d, 0x0a, 0x00, 0xff)), '[]byte{0x2d, 0xa, 0x0, 0xff}');
  // 18 one-digit bytes: 8 + 18 * 3 + 17 * 2 = 96 characters, shown whole.
  const short = goByteSlice(new Uint8Array(18).fill(1));
  t.equal(short.length, 96);
  t.ok(short.endsWith(', 0x1}'));
  // 100 two-digit bytes: 8 + 100 * 4 + 99 * 2 = 606 characters.
  const long = goByteSlice(new Uint8Array(100).fill(0x41));
  t.equal(
    long,
    `${`[]byte{${Array(100).fill('0x41').join(', ')}}`.slice(0, 100)}…(606 characters)`,
  );
  // A megabyte of zeros: 8 + 2^20 * 3 + (2^20 - 1) * 2 characters, only the head built.
  t.equal(
    goByteSlice(new Uint8Array(1 << 20)),
    `${`[]byte{${Array(40).fill('0x0').join(', ')}`.slice(0, 100)}…(5242886 characters)`,
  );
});
