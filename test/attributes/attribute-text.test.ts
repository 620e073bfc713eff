// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${NAME}` is the variable syntax under test
import t from 'tap';
import { filenameProblems } from '../../src/attributes/filename-rules.js';
import { parseGid } from '../../src/attributes/fs-group.js';
import { splitCsvRecord, splitList, splitSanList } from '../../src/attributes/list-splitting.js';
import { expandVariables } from '../../src/attributes/variable-expansion.js';
import { goJoinCsv, goQuote, goTrimSpace, parseGoInteger } from '../../src/base/go-text.js';

const VARS = {
  POD_NAME: 'my-pod-name',
  POD_NAMESPACE: 'my-namespace',
  POD_UID: 'my-pod-uuid',
  SERVICE_ACCOUNT_NAME: 'my-service-account',
};
const KNOWN = 'known variables: [POD_NAME POD_NAMESPACE POD_UID SERVICE_ACCOUNT_NAME]';

t.test('variable expansion follows os.Expand', async (t) => {
  const expanded: Array<[string, string]> = [
    ['', ''],
    ['no variables', 'no variables'],
    [
      'foo-$POD_NAME-,,${POD_NAMESPACE},$POD_UID,${SERVICE_ACCOUNT_NAME}',
      'foo-my-pod-name-,,my-namespace,my-pod-uuid,my-service-account',
    ],
    ['$POD_NAME-my-dns-$POD_NAMESPACE', 'my-pod-name-my-dns-my-namespace'],
    ['trailing $', 'trailing $'],
    ['$', '$'],
    ['a$ b', 'a$ b'],
    ['$.x', '$.x'],
    ['$é', '$é'],
    ['${}x', 'x'],
    // `${` without `}` is eaten, the rest is kept.
    ['${POD_NAME', 'POD_NAME'],
    ['a${', 'a'],
  ];
  for (const [input, output] of expanded) {
    t.same(expandVariables(input, VARS), { ok: true, value: output }, JSON.stringify(input));
  }
  const undefinedNames: Array<[string, string[]]> = [
    ['$Foo', ['Foo']],
    ['foo-${POD_NAME}-,,$POD_NAMESPACE,${POD_UID}.$Foo${Bar}', ['Foo', 'Bar']],
    ['$$', ['$']],
    ['$$POD_NAME', ['$']],
    ['$1', ['1']],
    ['$-', ['-']],
    ['${*}', ['*']],
    ['${1a}', ['1a']],
    ['${foo bar}', ['foo bar']],
    ['$pod_name', ['pod_name']],
    ['$A$A', ['A', 'A']],
    ['${"}', ['"']],
  ];
  for (const [input, names] of undefinedNames) {
    const listed = names.map((n) => `undefined variable ${goQuote(n)}`).join(', ');
    t.same(
      expandVariables(input, VARS),
      { ok: false, message: `${listed}, ${KNOWN}` },
      JSON.stringify(input),
    );
  }
  t.same(expandVariables('${"}', VARS), {
    ok: false,
    message: `undefined variable "\\"", ${KNOWN}`,
  });
});

t.test('plain lists split on commas and trim like Go', async (t) => {
  t.same(splitList('a, b ,\n c\t,'), ['a', 'b', 'c', '']);
  t.same(splitList(''), ['']);
  t.same(splitSanList(' a ,, b ,\u00a0,'), ['a', 'b']);
  t.same(splitSanList(''), []);
  // Go's TrimSpace: U+0085 is a space, U+FEFF is not.
  t.equal(goTrimSpace('\u0085\u3000x\u2029'), 'x');
  t.equal(goTrimSpace('\ufeffx'), '\ufeffx');
});

t.test('subject lists are one record of Go CSV', async (t) => {
  const ok: Array<[string, string[]]> = [
    ['a', ['a']],
    ['a,b', ['a', 'b']],
    [' a , b ', [' a ', ' b ']],
    [
      '"10 Downing Street, Westminster",Manchester',
      ['10 Downing Street, Westminster', 'Manchester'],
    ],
    ['"a""b"', ['a"b']],
    ['"a",', ['a', '']],
    ['a,', ['a', '']],
    [',', ['', '']],
    ['""', ['']],
    ['"a\nb",c', ['a\nb', 'c']],
    ['"a\r\nb"', ['a\nb']],
    ['a\r', ['a']],
    ['a\r\n', ['a']],
    ['\n\na\n\n', ['a']],
    ['a\\,b', ['a\\', 'b']],
    ['a\rb', ['a\rb']],
  ];
  for (const [input, values] of ok) {
    t.same(splitCsvRecord(input), { ok: true, values }, JSON.stringify(input));
  }
  const failed: Array<[string, string]> = [
    [
      'a"b',
      'failed to parse "a\\"b" as CSV: parse error on line 1, column 2: bare " in non-quoted-field',
    ],
    [
      'é"x',
      'failed to parse "é\\"x" as CSV: parse error on line 1, column 3: bare " in non-quoted-field',
    ],
    [
      '"a"b',
      'failed to parse "\\"a\\"b" as CSV: parse error on line 1, column 3: extraneous or missing " in quoted-field',
    ],
    [
      '"abc',
      'failed to parse "\\"abc" as CSV: parse error on line 1, column 5: extraneous or missing " in quoted-field',
    ],
    [
      '"abc\n',
      'failed to parse "\\"abc\\n" as CSV: parse error on line 1, column 6: extraneous or missing " in quoted-field',
    ],
    [
      '"a\nb"c',
      'failed to parse "\\"a\\nb\\"c" as CSV: record on line 1; parse error on line 2, column 2: extraneous or missing " in quoted-field',
    ],
    [
      '"a\nb',
      'failed to parse "\\"a\\nb" as CSV: record on line 1; parse error on line 2, column 2: extraneous or missing " in quoted-field',
    ],
    [
      'a\nb"',
      'failed to parse "a\\nb\\"" as CSV: parse error on line 2, column 2: bare " in non-quoted-field',
    ],
    ['a,b\nc', 'failed to parse "a,b\\nc" as CSV: record on line 2: wrong number of fields'],
    ['a\nb', 'refusing to use "a\\nb" as input as it parses as multiple lines of CSV'],
    ['', 'no values found after parsing ""'],
    ['\n', 'no values found after parsing "\\n"'],
    ['\r', 'no values found after parsing "\\r"'],
  ];
  for (const [input, message] of failed) {
    t.same(splitCsvRecord(input), { ok: false, message }, JSON.stringify(input));
  }
});

t.test('goQuote is strconv.Quote', async (t) => {
  t.equal(goQuote(''), '""');
  t.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  t.equal(goQuote('\x07\b\f\n\r\t\v'), '"\\a\\b\\f\\n\\r\\t\\v"');
  t.equal(goQuote('\x00\x1f\x7f'), '"\\x00\\x1f\\x7f"');
  t.equal(goQuote('é中😀 ok'), '"é中😀 ok"');
  t.equal(goQuote('\u0085\u00a0\u200b'), '"\\u0085\\u00a0\\u200b"');
  t.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
  t.equal(goQuote('a\ud800b'), '"a\ufffdb"');
});

t.test('parseGoInteger is strconv.ParseInt base 10', async (t) => {
  t.same(parseGoInteger('+5', 'Atoi'), { ok: true, value: 5n });
  t.same(parseGoInteger('-0', 'ParseInt'), { ok: true, value: 0n });
  t.same(parseGoInteger('-9223372036854775808', 'ParseInt'), {
    ok: true,
    value: -9223372036854775808n,
  });
  t.same(parseGoInteger('9223372036854775808', 'ParseInt'), {
    ok: false,
    message: 'strconv.ParseInt: parsing "9223372036854775808": value out of range',
  });
  for (const bad of ['', '+', '1_000', '0x10', ' 1', '1.0']) {
    t.same(
      parseGoInteger(bad, 'Atoi'),
      { ok: false, message: `strconv.Atoi: parsing ${goQuote(bad)}: invalid syntax` },
      JSON.stringify(bad),
    );
  }
});

t.test('gids', async (t) => {
  t.same(parseGid('1'), { ok: true, gid: 1 });
  t.same(parseGid('+2000'), { ok: true, gid: 2000 });
  t.same(parseGid('4294967294'), { ok: true, gid: 4294967294 });
  t.same(parseGid('9223372036854775807'), {
    ok: false,
    message: 'gid value must be greater than 0 and less than 4294967295: 9223372036854775807',
  });
  t.same(parseGid('2e3'), {
    ok: false,
    message: 'value must be a valid integer: strconv.ParseInt: parsing "2e3": invalid syntax',
  });
});

t.test('file name rules', async (t) => {
  for (const good of ['tls.crt', 'foo...bar', 'foobar...', '.hidden', 'a b', 'é'.repeat(127)]) {
    t.same(filenameProblems(good), [], JSON.stringify(good));
  }
  t.same(filenameProblems('/..\\\0 '), [
    'filename must not be an absolute path',
    "filename must not include '/'",
    "filename must not include '\\'",
    'filename must not include NUL characters',
    'filename must not include leading or trailing spaces',
  ]);
  t.same(filenameProblems('../ '), [
    "filename must not start with '..'",
    "filename must not include '/'",
    'filename must not include leading or trailing spaces',
  ]);
  t.same(filenameProblems('\u3000x'), ['filename must not include leading or trailing spaces']);
  t.same(
    filenameProblems('generation.json'),
    ["filename must not be 'generation.json': cert-csi writes its own file there"],
    'the name of the generation file is never an output file',
  );
});

t.test('goJoinCsv quotes as encoding/csv does', async (t) => {
  t.equal(goJoinCsv([]), '');
  t.equal(goJoinCsv(['a.example.com', 'b.example.com']), 'a.example.com,b.example.com');
  t.equal(
    goJoinCsv(['Example, Inc.', 'say "hi"', ' lead', 'x\ny', '\\.']),
    '"Example, Inc.","say ""hi"""," lead","x\ny","\\."',
  );
  t.equal(goJoinCsv(['', 'a']), ',a', 'an empty field is not quoted');
});
