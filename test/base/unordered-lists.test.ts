import t from 'tap';
import { sameUnordered } from '../../src/base/unordered-lists.js';

t.test(
  'sameUnordered: the same members in any order, repeats counted, unset is empty',
  async (t) => {
    const cases: Array<[string[] | undefined, string[] | undefined, boolean]> = [
      [undefined, undefined, true],
      [undefined, [], true],
      [['a', 'b'], ['b', 'a'], true],
      [['a', 'a', 'b'], ['a', 'b', 'b'], false],
      [['a'], ['a', 'a'], false],
      [['a'], ['A'], false],
      [[], ['a'], false],
    ];
    for (const [a, b, same] of cases) {
      t.equal(sameUnordered(a, b), same, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  },
);
