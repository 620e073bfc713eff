import t from 'tap';
import {
  type Flag,
  type FlagTable,
  flagLabel,
  flagList,
  flagOptions,
  HELP_FLAG,
  inGroup,
  parseFlags,
} from '../../src/cli/common/flag-table.js';
import { CONTROLLER_FLAGS } from '../../src/cli/controller/controller-flags.js';
import { NODE_FLAGS } from '../../src/cli/node/node-flags.js';
import { PUBLISH_FLAGS } from '../../src/cli/publish/publish-flags.js';
import { RENEW_FLAGS } from '../../src/cli/renew/renew-flags.js';
import { STATUS_FLAGS } from '../../src/cli/status/status-flags.js';
import { UNPUBLISH_FLAGS } from '../../src/cli/unpublish/unpublish-flags.js';
import { WEBHOOK_FLAGS } from '../../src/cli/webhook/webhook-flags.js';

const TABLE = {
  'data-root': { type: 'string', value: 'DIR', description: 'where volumes live' },
  timeout: {
    type: 'string',
    value: 'DURATION',
    default: '2m',
    description: ['how long to wait,', 'Go syntax (default 2m)'],
  },
  attr: { type: 'multiple', value: 'KEY=VALUE', default: [], description: 'an attribute' },
  gate: { type: 'multiple', value: 'GATE', description: 'a gate' },
  all: { type: 'boolean', description: 'every volume' },
  'accept-new-ca': { type: 'boolean', default: false, description: 'accept a new CA' },
  ...HELP_FLAG,
  ...inGroup('Cluster', {
    'kube-api-timeout-with-a-long-name': {
      type: 'string',
      value: 'DURATION',
      description: 'a label too long for the column',
    },
  }),
} as const satisfies FlagTable;

t.test('the parseArgs options follow each flag type, short alias and default', async (t) => {
  const options = flagOptions(TABLE);
  t.same(options, {
    'data-root': { type: 'string' },
    timeout: { type: 'string', default: '2m' },
    attr: { type: 'string', multiple: true, default: [] },
    gate: { type: 'string', multiple: true },
    all: { type: 'boolean' },
    'accept-new-ca': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
    'kube-api-timeout-with-a-long-name': { type: 'string' },
  });
  t.not(options.attr.default, TABLE.attr.default, 'a default list is a copy, not the table own');
});

t.test('parsing gives the values, defaults included, and which flags were given', async (t) => {
  const none = parseFlags(TABLE, []);
  t.same(none.values, { timeout: '2m', attr: [], 'accept-new-ca': false });
  t.same([...none.explicit], [], 'defaults are not flags given');

  const some = parseFlags(TABLE, [
    '--data-root',
    '/v',
    '--attr',
    'a=1',
    '--attr=b=2',
    '--gate',
    'pod-ip:any',
    '-h',
    '--timeout',
    '2m',
    '--timeout',
    '5s',
  ]);
  t.same(some.values, {
    'data-root': '/v',
    attr: ['a=1', 'b=2'],
    gate: ['pod-ip:any'],
    help: true,
    timeout: '5s',
    'accept-new-ca': false,
  });
  t.same(
    [...some.explicit].sort(),
    ['attr', 'data-root', 'gate', 'help', 'timeout'],
    'given flags by long name, a short alias too, a default value given again too',
  );

  t.same(
    [...parseFlags(TABLE, ['--all', '--']).explicit],
    ['all'],
    'the end of options (--) is no flag given',
  );
  // Each a UsageError (exit 2) naming the flag and what to do.
  const refused: Array<[string[], string]> = [
    [['--verbose'], 'unknown flag --verbose'],
    [['--data-roto', '/d'], 'unknown flag --data-roto (did you mean --data-root?)'],
    [['-x'], 'unknown flag -x'],
    [['--data-root'], '--data-root needs a value (--data-root DIR)'],
    [
      ['--data-root', '--all'],
      '--data-root needs a value (--data-root DIR); a value starting with - is written --data-root=VALUE',
    ],
    [['--data-root'], '--data-root needs a value (--data-root DIR)'],
    [['--all=yes'], '--all takes no value'],
    [['stray'], 'unexpected argument "stray": every value follows its flag (--flag VALUE)'],
  ];
  for (const [args, message] of refused) {
    t.throws(
      () => parseFlags(TABLE, args),
      { name: 'UsageError', errorKind: 'CERT_CSI_INVALID_COMMAND_LINE', message },
      args.join(' '),
    );
  }
  t.same(parseFlags(TABLE, ['--data-root=-d', '--timeout', '-']).values['data-root'], '-d');
  t.same(
    parseFlags(TABLE, ['--all', 'ns/name'], { positionals: true }).positionals,
    ['ns/name'],
    'a command that takes arguments gets them',
  );
});

t.test('a flag label names its alias, its long name and its value', async (t) => {
  const cases: Array<[string, Flag, string]> = [
    ['all', { type: 'boolean', description: '' }, '--all'],
    ['help', { type: 'boolean', short: 'h', description: '' }, '-h, --help'],
    ['data-root', { type: 'string', value: 'DIR', description: '' }, '--data-root DIR'],
    [
      'namespace',
      { type: 'string', short: 'n', value: 'NAMESPACE', description: '' },
      '-n, --namespace NAMESPACE',
    ],
  ];
  for (const [name, flag, label] of cases) t.equal(flagLabel(name, flag), label, label);
});

t.test('the flag list: groups, aligned descriptions, continuation lines', async (t) => {
  t.equal(
    flagList(TABLE),
    [
      'Flags:',
      '  --data-root DIR                where volumes live',
      '  --timeout DURATION             how long to wait,',
      '                                 Go syntax (default 2m)',
      '  --attr KEY=VALUE               an attribute',
      '  --gate GATE                    a gate',
      '  --all                          every volume',
      '  --accept-new-ca                accept a new CA',
      '  -h, --help                     show this help',
      '',
      'Cluster:',
      '  --kube-api-timeout-with-a-long-name DURATION',
      '                                 a label too long for the column',
      '',
    ].join('\n'),
  );
  const narrow = {
    a: { type: 'boolean', description: 'one space left' },
    abc: { type: 'boolean', description: 'no space left' },
  } as const satisfies FlagTable;
  t.equal(
    flagList(narrow, 6),
    'Flags:\n  --a one space left\n  --abc\n      no space left\n',
    'the description starts at the column when one space is left before it, else below',
  );
  t.equal(
    flagList({ b: { type: 'boolean', group: 'Later', description: 'b' }, ...HELP_FLAG }, 14),
    'Later:\n  --b         b\n\nFlags:\n  -h, --help  show this help\n',
    'groups in the order the table first names them',
  );
});

t.test('inGroup puts a shared set of flags under a heading, unchanged otherwise', async (t) => {
  t.same(inGroup('Cluster', { x: { type: 'string', value: 'X', description: 'x' } }), {
    x: { type: 'string', value: 'X', description: 'x', group: 'Cluster' },
  });
});

// Every command's flags: what the help says of a default is what the parser uses.
const COMMAND_FLAGS: Record<string, FlagTable> = {
  node: NODE_FLAGS,
  controller: CONTROLLER_FLAGS,
  webhook: WEBHOOK_FLAGS,
  publish: PUBLISH_FLAGS,
  unpublish: UNPUBLISH_FLAGS,
  renew: RENEW_FLAGS,
  status: STATUS_FLAGS,
};

t.test('every default a command parses a flag to is the default its help shows', async (t) => {
  for (const [command, table] of Object.entries(COMMAND_FLAGS)) {
    for (const [name, flag] of Object.entries(table)) {
      // A boolean that is off, an empty list or an empty text: nothing to show.
      if (typeof flag.default !== 'string' || flag.default === '') continue;
      const description = [flag.description].flat().join(' ');
      t.ok(
        description.includes(`(default ${flag.default}`),
        `${command} --${name}: the help shows (default ${flag.default}`,
      );
    }
  }
});

t.test(
  'every flag of every command has a description; values only where a value is taken',
  async (t) => {
    for (const [command, table] of Object.entries(COMMAND_FLAGS)) {
      for (const [name, flag] of Object.entries(table)) {
        t.ok([flag.description].flat().join('').length > 0, `${command} --${name}: described`);
        t.equal(
          flag.value === undefined,
          flag.type === 'boolean',
          `${command} --${name}: a value name exactly when it takes a value`,
        );
      }
    }
  },
);
