import t from 'tap';
import { cappedText, MESSAGE_LIMIT_BYTES } from '../../src/base/capped-text.js';

t.test('a text over the limit is cut between characters, with what was left out', async (t) => {
  const cases: Array<[string, string, number, string]> = [
    ['short', 'hello', 40, 'hello'],
    ['exactly the limit', 'x'.repeat(40), 40, 'x'.repeat(40)],
    // The note's … is 3 bytes: 13 + 27 = 40.
    ['one byte over', 'x'.repeat(41), 40, `${'x'.repeat(13)}…(28 more bytes left out)`],
    // é is 2 bytes: a cut inside it moves back to its start.
    ['a 2-byte character', 'é'.repeat(30), 40, `${'é'.repeat(6)}…(48 more bytes left out)`],
    // 😀 is 4 bytes (a surrogate pair in UTF-16): never split.
    [
      'a 4-byte character',
      `ab${'😀'.repeat(20)}`,
      40,
      `ab${'😀'.repeat(2)}…(72 more bytes left out)`,
    ],
    ['3-byte characters', '日本語'.repeat(20), 40, '日本語日…(168 more bytes left out)'],
    // A limit smaller than the note keeps the note alone: callers leave room for it.
    ['no room for any of it', 'x'.repeat(100), 10, '…(100 more bytes left out)'],
  ];
  for (const [what, text, max, expected] of cases) {
    const capped = cappedText(text, max);
    t.equal(capped, expected, what);
    if (Buffer.byteLength(text) > max && max >= 40)
      t.ok(Buffer.byteLength(capped) <= max, `${what}: fits in ${max} bytes`);
    t.notOk(capped.includes('\ufffd'), `${what}: no broken character`);
  }
});

t.test('the default limit is 16 KiB: a 30 MB refusal becomes one that fits', async (t) => {
  t.equal(MESSAGE_LIMIT_BYTES, 16 * 1024);
  const huge = 'spec.emailAddresses[0]: Invalid value, '.repeat(800_000);
  const capped = cappedText(huge);
  t.ok(Buffer.byteLength(capped) <= MESSAGE_LIMIT_BYTES);
  t.ok(huge.startsWith(capped.slice(0, capped.indexOf('…'))), 'the head of the text');
  const leftOut = Number(/…\((\d+) more bytes left out\)$/.exec(capped)?.[1]);
  t.equal(leftOut + capped.indexOf('…'), huge.length, 'the note counts what was cut');
});
