import t from 'tap';
import { commandFailure, reportFailure } from '../../src/cli/common/command-failure.js';
import { PluginCallError } from '../../src/cli/common/plugin-call-error.js';
import { UsageError } from '../../src/cli/common/usage-error.js';

t.test('the prefix "" leaves the message alone on the line', async (t) => {
  t.same(commandFailure(new PluginCallError('no answer from the plugin within 1s'), ''), {
    line: 'no answer from the plugin within 1s',
    exitCode: 1,
    text: 'no answer from the plugin within 1s\n',
  });
});

t.test(
  'reportFailure writes the line to stderr and gives the exit status of the kind',
  async (t) => {
    const cases: Array<[string, unknown, string | undefined, string, number]> = [
      [
        'a usage error',
        new UsageError('--data-root is required'),
        'cert-csi renew',
        'cert-csi renew: --data-root is required\n',
        2,
      ],
      [
        'a failed call',
        new PluginCallError('refused'),
        'cert-csi renew',
        'cert-csi renew: refused\n',
        1,
      ],
      ['no prefix given', new Error('boom'), undefined, 'cert-csi: boom\n', 1],
      ['no prefix at all', new PluginCallError('late'), '', 'late\n', 1],
    ];
    for (const [what, err, prefix, line, exitCode] of cases) {
      const written: string[] = [];
      const code = reportFailure({ write: (text: string) => written.push(text) }, err, prefix);
      t.same({ written, code }, { written: [line], code: exitCode }, what);
    }
  },
);
