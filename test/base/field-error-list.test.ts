import t from 'tap';
import {
  FieldErrorList,
  MAX_ERRORS_PER_LIST,
  moreErrors,
} from '../../src/base/field-error-list.js';

type Step = ['add', string] | ['item', string, string];

t.test(
  'errors of a list past the limit are counted into one entry where they were cut',
  async (t) => {
    const cases: Array<[string, number, Step[], string[]]> = [
      ['nothing', 2, [], []],
      [
        'single errors are all kept, in order',
        2,
        [
          ['add', 'a'],
          ['add', 'b'],
          ['add', 'c'],
        ],
        ['a', 'b', 'c'],
      ],
      [
        'a list within the limit',
        2,
        [
          ['item', 'spec.l', 'l0'],
          ['item', 'spec.l', 'l1'],
        ],
        ['l0', 'l1'],
      ],
      [
        'one past the limit',
        2,
        [
          ['item', 'spec.l', 'l0'],
          ['item', 'spec.l', 'l1'],
          ['item', 'spec.l', 'l2'],
          ['add', 'after'],
        ],
        ['l0', 'l1', 'spec.l: and 1 more error (only the first 2 are listed)', 'after'],
      ],
      [
        'each list has its own count; the entry sits where its list was cut',
        1,
        [
          ['item', 'spec.a', 'a0'],
          ['item', 'spec.b', 'b0'],
          ['item', 'spec.a', 'a1'],
          ['add', 'between'],
          ['item', 'spec.b', 'b1'],
          ['item', 'spec.a', 'a2'],
          ['item', 'spec.b', 'b2'],
        ],
        [
          'a0',
          'b0',
          'spec.a: and 2 more errors (only the first 1 are listed)',
          'between',
          'spec.b: and 2 more errors (only the first 1 are listed)',
        ],
      ],
    ];
    for (const [what, perList, steps, expected] of cases) {
      const errors = new FieldErrorList(perList);
      for (const step of steps) {
        if (step[0] === 'add') errors.add(step[1]);
        else {
          const error = step[2];
          errors.addItem(step[1], () => error);
        }
      }
      t.same(errors.toArray(), expected, what);
      t.equal(errors.count, steps.length, `${what}: every error counted`);
    }
  },
);

t.test('an error past the limit is never worded: the cost stays per listed error', async (t) => {
  const errors = new FieldErrorList();
  let worded = 0;
  for (let i = 0; i < 300_000; i++) {
    errors.addItem('spec.emailAddresses', () => {
      worded++;
      return `spec.emailAddresses[${i}]: Invalid value`;
    });
  }
  t.equal(worded, MAX_ERRORS_PER_LIST, 'only the listed ones');
  const listed = errors.toArray();
  t.equal(listed.length, MAX_ERRORS_PER_LIST + 1);
  t.equal(listed.at(-1), moreErrors('spec.emailAddresses', 299_990, MAX_ERRORS_PER_LIST));
  t.equal(
    listed.at(-1),
    'spec.emailAddresses: and 299990 more errors (only the first 10 are listed)',
  );
  t.equal(errors.count, 300_000);
});

t.test('addAll keeps a sub-validator’s errors in order, however many', async (t) => {
  const errors = new FieldErrorList();
  errors.add('first');
  errors.addAll(['a', 'b']);
  errors.addAll(new Set(['c']));
  t.same(errors.toArray(), ['first', 'a', 'b', 'c']);
});
