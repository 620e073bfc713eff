import t from 'tap';
import {
  formatNamespacedName,
  namespacedNameProblem,
  parseNamespacedName,
} from '../../src/api/namespaced-name.js';

t.test('parseNamespacedName: NAMESPACE/NAME, both valid, or an error saying what is wrong', (t) => {
  const cases: Array<[string, { namespace: string; name: string } | RegExp]> = [
    ['sandbox/web', { namespace: 'sandbox', name: 'web' }],
    ['kube-system/a.b-c', { namespace: 'kube-system', name: 'a.b-c' }],
    ['web', /^expected NAMESPACE\/NAME, got "web"$/],
    ['', /^expected NAMESPACE\/NAME, got ""$/],
    ['/web', /^expected NAMESPACE\/NAME, got "\/web"$/],
    ['sandbox/', /^expected NAMESPACE\/NAME, got "sandbox\/"$/],
    ['a/b/c', /^expected NAMESPACE\/NAME, got "a\/b\/c"$/],
    ['Sandbox/web', /^namespace "Sandbox" is invalid: a lowercase RFC 1123 label/],
    ['a.b/web', /^namespace "a.b" is invalid/],
    [`${'n'.repeat(64)}/web`, /^namespace "n+" is invalid: .*at most 63 characters$/],
    ['sandbox/Web', /^name "Web" is invalid: a lowercase RFC 1123 subdomain/],
    ['sandbox/-web', /^name "-web" is invalid/],
    ['sandbox/..', /^name "\.\." is invalid/],
    [`sandbox/${'w'.repeat(254)}`, /^name "w{100}"…\(254 characters\) is invalid/],
  ];
  for (const [text, expected] of cases) {
    if (expected instanceof RegExp) t.throws(() => parseNamespacedName(text), expected, text);
    else t.same(parseNamespacedName(text), expected, text);
  }
  t.end();
});

t.test('namespacedNameProblem and formatNamespacedName', (t) => {
  t.equal(namespacedNameProblem({ namespace: 'a', name: 'b' }), undefined);
  t.match(namespacedNameProblem({ namespace: '', name: 'b' }), /^namespace "" is invalid/);
  t.match(namespacedNameProblem({ namespace: 'a', name: 'b/c' }), /^name "b\/c" is invalid/);
  t.equal(formatNamespacedName({ namespace: 'a', name: 'b' }), 'a/b');
  t.end();
});
