import t from 'tap';
import { closestMatch, didYouMean, editDistance } from '../../src/base/edit-distance.js';

t.test(
  'editDistance counts single-character insertions, deletions and substitutions',
  async (t) => {
    const cases: [string, string, number][] = [
      ['', '', 0],
      ['', 'abc', 3],
      ['abc', '', 3],
      ['volume-id', 'volume-id', 0],
      ['volumeid', 'volume-id', 1],
      ['dns-name', 'dns-names', 1],
      ['kitten', 'sitting', 3],
      ['flaw', 'lawn', 2],
      ['ab', 'ba', 2],
    ];
    for (const [a, b, distance] of cases) {
      t.equal(editDistance(a, b), distance, `${a} → ${b}`);
      t.equal(editDistance(b, a), distance, `${b} → ${a}`);
    }
  },
);

t.test('closestMatch suggests only a near, different name', async (t) => {
  const flags = ['endpoint', 'volume-id', 'target', 'attr', 'timeout', 'help'];
  const cases: [string, readonly string[], string | undefined][] = [
    ['volumeid', flags, 'volume-id'],
    ['taget', flags, 'target'],
    ['timeuot', flags, 'timeout'],
    ['dns-name', ['dns-names', 'ip-sans', 'uri-sans'], 'dns-names'],
    ['pod-name', flags, undefined],
    ['x', ['h'], undefined],
    ['ab', ['a', 'abc'], 'a'],
    ['target', flags, undefined],
    ['zzzzzz', flags, undefined],
    ['anything', [], undefined],
  ];
  for (const [word, candidates, expected] of cases) {
    t.equal(closestMatch(word, candidates), expected, `${word} in ${candidates.join(',')}`);
  }
});

t.test('didYouMean phrases the suggestion, or says nothing', async (t) => {
  t.equal(
    didYouMean('volumeid', ['volume-id'], (n) => `--${n}`),
    ' (did you mean --volume-id?)',
  );
  t.equal(didYouMean('dns-name', ['dns-names']), ' (did you mean dns-names?)');
  t.equal(didYouMean('frobnicate', ['node', 'publish']), '');
});
