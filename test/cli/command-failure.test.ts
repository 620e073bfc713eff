import t from 'tap';
import { commandFailure } from '../../src/cli/common/command-failure.js';
import { PluginCallError } from '../../src/cli/common/plugin-call-error.js';
import { UsageError } from '../../src/cli/common/usage-error.js';
import { ManifestError } from '../../src/cli/node/load-manifests.js';
import { LockHeldError } from '../../src/fs/directory-lock.js';
import { EmbeddedCaLostError } from '../../src/issuer/ca-guard.js';

// The line and exit status each error ends a command with, as the commands chose them before
// the catalogue: 2 for a command line that cannot be used, 1 for anything else.
const failures: [string, unknown, string | undefined, { line: string; exitCode: number }][] = [
  [
    'an unknown command',
    new UsageError('unknown command "nope"'),
    undefined,
    { line: 'cert-csi: unknown command "nope"', exitCode: 2 },
  ],
  [
    "a command's usage error",
    new UsageError('--data-root is required'),
    'cert-csi renew',
    { line: 'cert-csi renew: --data-root is required', exitCode: 2 },
  ],
  [
    "the plugin's error",
    new PluginCallError('UNAVAILABLE: No connection established'),
    'error',
    { line: 'error: UNAVAILABLE: No connection established', exitCode: 1 },
  ],
  [
    'a manifest that cannot be loaded',
    new ManifestError('ca.yaml#1', 'kind is missing'),
    undefined,
    { line: 'cert-csi: ca.yaml#1: kind is missing', exitCode: 1 },
  ],
  [
    'a held lock',
    new LockHeldError('/d/.lock', 7, 'data root /d'),
    undefined,
    {
      line: 'cert-csi: data root /d is in use by another cert-csi process (pid 7; lock file /d/.lock): refusing to start a second instance on it',
      exitCode: 1,
    },
  ],
  [
    'a lost CA',
    new EmbeddedCaLostError('the CA Secret is gone'),
    undefined,
    { line: 'cert-csi: the CA Secret is gone', exitCode: 1 },
  ],
  [
    'a flag error of no kind',
    new Error('--attr "x": expected KEY=VALUE'),
    undefined,
    { line: 'cert-csi: --attr "x": expected KEY=VALUE', exitCode: 1 },
  ],
  ['a thrown string', 'text', undefined, { line: 'cert-csi: text', exitCode: 1 }],
];

t.test('each error ends a command with its line and the exit status of its kind', async (t) => {
  for (const [what, err, prefix, expected] of failures) {
    const { line, exitCode, text } = commandFailure(err, prefix);
    t.same({ line, exitCode }, expected, what);
    t.equal(text, `${line}\n`, `${what}: the line alone when no help is named`);
  }
});

t.test('a failure is one line, then where the help of the command named is', async (t) => {
  const cases: [string, unknown, string | undefined, string | true | undefined, string][] = [
    [
      'a usage error of a command',
      new UsageError('--target is required'),
      'cert-csi publish',
      'publish',
      'cert-csi publish: --target is required\nsee cert-csi publish --help\n',
    ],
    [
      'an unknown command: the top-level help',
      new UsageError('unknown command "pubish" (did you mean publish?)'),
      undefined,
      true,
      'cert-csi: unknown command "pubish" (did you mean publish?)\nsee cert-csi --help\n',
    ],
    [
      'a message over several lines is folded into one',
      new Error('first\n  second\n\nthird\n'),
      'cert-csi renew',
      undefined,
      'cert-csi renew: first; second; third\n',
    ],
    [
      'no prefix',
      new PluginCallError('no answer'),
      '',
      'renew',
      'no answer\nsee cert-csi renew --help\n',
    ],
  ];
  for (const [what, err, prefix, help, text] of cases) {
    t.equal(commandFailure(err, prefix, help).text, text, what);
  }
});
