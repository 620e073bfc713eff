import t from 'tap';
import {
  parseControllersFlag,
  selectControllers,
} from '../../src/controller/controller-selection.js';

const known = ['a', 'b', 'c', 'experimental'];
const defaults = ['a', 'b', 'c'];
const select = (...requested: string[]) =>
  [...selectControllers(requested, known, defaults)].sort();

t.test("cert-manager's --controllers semantics", async (t) => {
  t.same(select('*'), ['a', 'b', 'c'], '* is every controller on by default');
  t.same(select('*', '-b'), ['a', 'c'], '-name turns one off');
  t.same(select('-b', '*'), ['a', 'c'], 'whatever the order');
  t.same(select('a'), ['a'], 'a list names exactly what runs');
  t.same(select('*', 'experimental'), ['a', 'b', 'c', 'experimental'], 'off by default, named');
  t.same(select('a', '-a'), [], 'a removal wins');
  t.same(select(), [], 'nothing named, nothing runs');
});

t.test('unknown names are refused with cert-manager message, shortened', async (t) => {
  t.throws(() => select('*', 'nope', '-gone'), {
    message:
      'validation failed for \'--controllers\': ["nope" is not in the list of known controllers "gone" is not in the list of known controllers]',
  });
  t.throws(() => select('x'.repeat(5000)), {
    message: /"x{100}"…\(5000 characters\) is not in the list of known controllers/,
  });
});

t.test('flag values: comma-separated and repeated, blanks dropped', async (t) => {
  t.same(parseControllersFlag(['*,-b', ' c ', '', 'a,,']), ['*', '-b', 'c', 'a']);
});
