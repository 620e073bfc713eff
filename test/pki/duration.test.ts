import t from 'tap';
import { formatGoDuration, parseGoDuration } from '../../src/pki/duration.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;

t.test('parses Go duration strings to milliseconds', async (t) => {
  const cases: Array<[string, number]> = [
    ['720h30m', 720 * H + 30 * M],
    ['2160h0m0s', 2160 * H],
    ['90s', 90 * S],
    ['1h0m0s', H],
    ['5m0.5s', 5 * M + 500],
    ['-1h', -H],
    ['+1h', H],
    ['1.5h', 1.5 * H],
    ['1.h', H],
    ['.5s', 500],
    ['1ms', 1],
    ['1us', 0.001],
    ['1µs', 0.001], // U+00B5 micro sign
    ['1μs', 0.001], // U+03BC Greek mu
    ['1ns', 0.000001],
    ['1h1m1s1ms', H + M + S + 1],
    ['0', 0],
    ['-0', 0],
    ['+0', 0],
    ['0s', 0],
    ['0.000000001s', 0.000001],
    ['1.0000000001s', 1000],
    ['9223372036854775807ns', 9223372036854.775],
    ['-9223372036854775808ns', -9223372036854.775],
    ['2562047h47m16.854775807s', 9223372036854.775],
    ['0.100000000000000000000h', 6 * M],
    ['9223372036854775807.9ns', 9223372036854.775],
    // Fraction digits beyond what fits in 63 bits are ignored, as in Go's leadingFraction.
    ['0.9223372036854775809s', 922.337203],
    ['0.92233720368547758079999s', 922.337203],
  ];
  for (const [text, ms] of cases) {
    t.equal(parseGoDuration(text), ms, text);
  }
  t.ok(Object.is(parseGoDuration('-0s'), 0), 'negative zero is zero');
});

t.test("rejects what Go rejects, with Go's messages", async (t) => {
  const cases: Array<[string, string]> = [
    ['', 'time: invalid duration ""'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['1h 30m', 'time: unknown unit "h " in duration "1h 30m"'],
    ['1', 'time: missing unit in duration "1"'],
    ['00', 'time: missing unit in duration "00"'],
    ['h', 'time: invalid duration "h"'],
    ['-', 'time: invalid duration "-"'],
    ['.s', 'time: invalid duration ".s"'],
    ['-.s', 'time: invalid duration "-.s"'],
    ['1h-1m', 'time: unknown unit "h-" in duration "1h-1m"'],
    [' 1h', 'time: invalid duration " 1h"'],
    ['1H', 'time: unknown unit "H" in duration "1H"'],
    ['1é', 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'],
    ['1"s', 'time: unknown unit "\\"s" in duration "1\\"s"'],
    ['1\\s', 'time: unknown unit "\\\\s" in duration "1\\\\s"'],
    ['1\ts', 'time: unknown unit "\\x09s" in duration "1\\x09s"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['99999999999999999999ns', 'time: invalid duration "99999999999999999999ns"'],
    ['9223372036854775809ns', 'time: invalid duration "9223372036854775809ns"'],
    ['2562047.9h', 'time: invalid duration "2562047.9h"'],
    ['9223372036854775807h', 'time: invalid duration "9223372036854775807h"'],
    ['2562047h47m16.854775808s', 'time: invalid duration "2562047h47m16.854775808s"'],
    ['2562047h2562047h', 'time: invalid duration "2562047h2562047h"'],
  ];
  for (const [text, message] of cases) {
    t.throws(() => parseGoDuration(text), { name: 'PkiError', message }, JSON.stringify(text));
  }
});

t.test("formats like Go's Duration.String", async (t) => {
  const cases: Array<[number, string]> = [
    [2160 * H, '2160h0m0s'],
    [H, '1h0m0s'],
    [90 * S, '1m30s'],
    [M, '1m0s'],
    [S, '1s'],
    [0, '0s'],
    [500, '500ms'],
    [1500, '1.5s'],
    [H + 500, '1h0m0.5s'],
    [1.5, '1.5ms'],
    [0.5, '500µs'],
    [0.0015, '1.5µs'],
    [0.000001, '1ns'],
    [-H, '-1h0m0s'],
    [-500, '-500ms'],
  ];
  for (const [ms, text] of cases) t.equal(formatGoDuration(ms), text, text);
  t.throws(() => formatGoDuration(Number.NaN), { name: 'PkiError' });
  t.throws(() => formatGoDuration(Number.POSITIVE_INFINITY), { name: 'PkiError' });
});

t.test('format and parse round trip', async (t) => {
  for (const ms of [2160 * H, 90 * S, 5 * M + 500, 1, 0.001, -H]) {
    t.equal(parseGoDuration(formatGoDuration(ms)), ms);
  }
});
