import t from 'tap';
import {
  byteLength,
  CONFIG_MAP_KEY_DOTS_RULE,
  CONFIG_MAP_KEY_ERROR,
  DNS1035_LABEL_MESSAGE,
  DNS1123_LABEL_MESSAGE,
  DNS1123_LABEL_RULE,
  DNS1123_SUBDOMAIN_MESSAGE,
  DNS1123_SUBDOMAIN_RULE,
  dns1035LabelErrors,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  hasConfigMapKeyCharacters,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isDotDirectoryKey,
  isLabelValue,
  isQualifiedNamePart,
  isResourceKind,
  nameIsDnsSubdomain,
  qualifiedNameErrors,
} from '../../src/api/kube-names.js';

// apimachinery's messages, as kube-apiserver prints them (RegexError's double spaces included).
const LABEL_REGEX =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_REGEX =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_REGEX =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

t.test('each predicate agrees with its Go error list', async (t) => {
  const values = [
    '',
    'a',
    'web',
    'web-1',
    '1web',
    '-web',
    'web-',
    'Web',
    'a.b',
    'a..b',
    'a_b',
    'bücher',
    'l'.repeat(63),
    'l'.repeat(64),
    `${'s'.repeat(63)}.${'s'.repeat(63)}.${'s'.repeat(63)}.${'s'.repeat(61)}`,
    's'.repeat(254),
  ];
  for (const value of values) {
    const shown = value.length > 20 ? `${value.slice(0, 8)}…(${value.length})` : `"${value}"`;
    t.equal(isDns1123Label(value), dns1123LabelErrors(value).length === 0, `label ${shown}`);
    t.equal(
      isDns1123Subdomain(value),
      dns1123SubdomainErrors(value).length === 0,
      `subdomain ${shown}`,
    );
    t.equal(isDns1035Label(value), dns1035LabelErrors(value).length === 0, `DNS-1035 ${shown}`);
  }
});

t.test('the predicates: the pattern and the limit of each rule', async (t) => {
  const cases: Array<[string, (text: string) => boolean, string, boolean]> = [
    ['label', isDns1123Label, 'web-1', true],
    ['label', isDns1123Label, 'a.b', false],
    ['label', isDns1123Label, 'l'.repeat(64), false],
    ['subdomain', isDns1123Subdomain, 'a.b-c', true],
    ['subdomain', isDns1123Subdomain, 's'.repeat(254), false],
    ['DNS-1035', isDns1035Label, 'webhook', true],
    ['DNS-1035', isDns1035Label, '1webhook', false],
    ['kind', isResourceKind, 'ClusterIssuer', true],
    ['kind', isResourceKind, 'Cluster_Issuer', false],
    ['kind', isResourceKind, 'K'.repeat(64), false],
    ['name part', isQualifiedNamePart, 'My_Name.1', true],
    ['name part', isQualifiedNamePart, '', false],
    ['name part', isQualifiedNamePart, 'n'.repeat(64), false],
    ['label value', isLabelValue, '', true],
    ['label value', isLabelValue, 'v1.2_3', true],
    ['label value', isLabelValue, '-v', false],
    ['label value', isLabelValue, 'v'.repeat(64), false],
    ['config key characters', hasConfigMapKeyCharacters, 'Ca_1.crt-x', true],
    ['config key characters', hasConfigMapKeyCharacters, '', false],
    ['config key characters', hasConfigMapKeyCharacters, 'a b', false],
    ['config key characters', hasConfigMapKeyCharacters, 'a/b', false],
    ['dot directory key', isDotDirectoryKey, '.', true],
    ['dot directory key', isDotDirectoryKey, '..', true],
    ['dot directory key', isDotDirectoryKey, '..data', true],
    ['dot directory key', isDotDirectoryKey, '.ca.crt', false],
    ['dot directory key', isDotDirectoryKey, 'ca..crt', false],
  ];
  for (const [rule, holds, value, expected] of cases) {
    t.equal(holds(value), expected, `${rule}: ${value.slice(0, 20)}`);
  }
});

t.test("Go's IsDNS1123Label, IsDNS1123Subdomain and IsDNS1035Label, word for word", async (t) => {
  t.same(dns1123LabelErrors('web'), []);
  t.same(dns1123LabelErrors('Web'), [LABEL_REGEX]);
  t.same(dns1123LabelErrors('a.b'), ['must not contain dots'], 'a subdomain that is no label');
  t.same(dns1123LabelErrors('l'.repeat(64)), ['must be no more than 63 characters']);
  t.same(dns1123LabelErrors(`${'l'.repeat(63)}-`), [
    'must be no more than 63 characters',
    LABEL_REGEX,
  ]);
  t.same(dns1123SubdomainErrors('a.b'), []);
  t.same(dns1123SubdomainErrors('a_b'), [SUBDOMAIN_REGEX]);
  t.same(dns1123SubdomainErrors('s'.repeat(254)), ['must be no more than 253 characters']);
  t.same(dns1035LabelErrors('v1'), []);
  t.same(dns1035LabelErrors('1v'), [DNS1035_REGEX]);
  t.same(dns1035LabelErrors(`v${'1'.repeat(63)}`), ['must be no more than 63 characters']);
  // Go counts bytes: 32 two-byte characters are 64 bytes.
  t.equal(byteLength('é'.repeat(32)), 64);
  t.same(dns1123LabelErrors('é'.repeat(32)), ['must be no more than 63 characters', LABEL_REGEX]);
});

t.test("Go's NameIsDNSSubdomain: a generateName prefix may end in '-'", async (t) => {
  t.same(nameIsDnsSubdomain('web-', true), []);
  t.same(nameIsDnsSubdomain('web-', false), [SUBDOMAIN_REGEX]);
  t.same(nameIsDnsSubdomain('-', true), [SUBDOMAIN_REGEX], 'a lone dash is masked to nothing');
});

t.test("Go's IsQualifiedName, word for word", async (t) => {
  t.same(qualifiedNameErrors('example.com/My_Name'), []);
  t.same(qualifiedNameErrors('a/b/c'), [
    `a qualified name ${NAME_REGEX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
  ]);
  t.same(qualifiedNameErrors('/x'), ['prefix part must be non-empty']);
  t.same(qualifiedNameErrors('Example.com/x'), [`prefix part ${SUBDOMAIN_REGEX}`]);
  t.same(qualifiedNameErrors('example.com/'), [
    'name part must be non-empty',
    `name part ${NAME_REGEX}`,
  ]);
  t.same(qualifiedNameErrors('n'.repeat(64)), ['name part must be no more than 63 characters']);
  t.same(qualifiedNameErrors('-x'), [`name part ${NAME_REGEX}`]);
});

t.test("Go's IsConfigMapKey message, word for word, and ours for dot directories", async (t) => {
  t.equal(
    CONFIG_MAP_KEY_ERROR,
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
  );
  t.equal(CONFIG_MAP_KEY_DOTS_RULE, "must not be '.' or '..' nor start with '..'");
});

t.test('our one-sentence wordings name the rule and its limit', async (t) => {
  t.equal(
    DNS1123_SUBDOMAIN_MESSAGE,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', must start and end with an alphanumeric character, and be at most 253 characters",
  );
  t.equal(
    DNS1123_LABEL_MESSAGE,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', start and end with an alphanumeric character, and be at most 63 characters",
  );
  t.equal(
    DNS1035_LABEL_MESSAGE,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, end with an alphanumeric character, and be at most 63 characters",
  );
  t.equal(
    DNS1123_LABEL_RULE,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character, at most 63 characters",
  );
  t.equal(
    DNS1123_SUBDOMAIN_RULE,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character, at most 253 characters",
  );
});
