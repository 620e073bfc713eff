import t from 'tap';
import { runNode } from '../../src/cli/node/node-command.js';
import { readinessOptions } from '../../src/cli/node/readiness-flags.js';
import { DEFAULT_GATE_BACKOFF, DEFAULT_READINESS } from '../../src/volume-manager/settings.js';
import { rejectionMessage } from '../support/eventually.js';

t.test('readiness flags: csi-driver defaults and values', async (t) => {
  t.same(readinessOptions({}, 'kubernetes'), DEFAULT_READINESS, 'nothing set: defaults');
  t.same(DEFAULT_GATE_BACKOFF, { initialMs: 1000, factor: 2, capMs: 10_000, jitter: 0.5 });
  t.same(
    readinessOptions(
      {
        'continue-on-not-ready': true,
        'pod-readiness-gate': ['pod-ip:ipv4', 'pod-condition:Ready'],
        'gate-backoff-duration': '250ms',
        'gate-backoff-factor': '1.5',
        'gate-backoff-jitter': '0',
        'gate-backoff-cap': '2s',
      },
      'kubernetes',
    ),
    {
      continueOnNotReady: true,
      gates: [
        { type: 'pod-ip', family: 'ipv4' },
        { type: 'pod-condition', condition: 'Ready', status: 'True' },
      ],
      gateBackoff: { initialMs: 250, factor: 1.5, jitter: 0, capMs: 2000 },
    },
  );
  const uncapped = readinessOptions({ 'gate-backoff-cap': '0s' }, 'kubernetes');
  t.ok(uncapped.gateBackoff.capMs >= 365 * 24 * 3600_000, '0: uncapped (a year)');
  t.same(
    readinessOptions(
      { 'continue-on-not-ready': true, 'pod-readiness-gate': ['pod-ip:any'] },
      'embedded',
    ).gates,
    [{ type: 'pod-ip', family: 'any' }],
    'pod-ip gates work in embedded mode',
  );
});

t.test('readiness flags: every refusal, with its message', async (t) => {
  const cases: Array<[Parameters<typeof readinessOptions>[0], string, 'embedded' | 'kubernetes']> =
    [
      [
        { 'pod-readiness-gate': ['pod-ip:any'] },
        '--pod-readiness-gate requires --continue-on-not-ready=true',
        'kubernetes',
      ],
      [
        { 'continue-on-not-ready': true, 'pod-readiness-gate': ['pod-ip:any', 'bogus'] },
        'invalid --pod-readiness-gate "bogus": expected <type>:<value>, got "bogus"',
        'kubernetes',
      ],
      [
        {
          'continue-on-not-ready': true,
          'pod-readiness-gate': ['pod-ip:any', 'pod-condition:Ready'],
        },
        '--pod-readiness-gate pod-condition:Ready: only pod-ip gates work with --mode embedded, whose pods are described by their volume context alone',
        'embedded',
      ],
      [
        { 'gate-backoff-duration': '0s' },
        '--gate-backoff-duration must be > 0, got 0s',
        'kubernetes',
      ],
      [
        { 'gate-backoff-duration': '-1.5s' },
        '--gate-backoff-duration must be > 0, got -1.5s',
        'kubernetes',
      ],
      [
        { 'gate-backoff-duration': 'soon' },
        'invalid argument "soon" for "--gate-backoff-duration" flag: time: invalid duration "soon"',
        'kubernetes',
      ],
      [
        { 'gate-backoff-factor': '0.5' },
        '--gate-backoff-factor must be >= 1, got 0.5',
        'kubernetes',
      ],
      [
        { 'gate-backoff-factor': 'x2' },
        'invalid argument "x2" for "--gate-backoff-factor" flag: strconv.ParseFloat: parsing "x2": invalid syntax',
        'kubernetes',
      ],
      [
        { 'gate-backoff-factor': '' },
        'invalid argument "" for "--gate-backoff-factor" flag: strconv.ParseFloat: parsing "": invalid syntax',
        'kubernetes',
      ],
      [
        { 'gate-backoff-jitter': '1.5' },
        '--gate-backoff-jitter must be between 0 and 1, got 1.5',
        'kubernetes',
      ],
      [
        { 'gate-backoff-jitter': '-0.1' },
        '--gate-backoff-jitter must be between 0 and 1, got -0.1',
        'kubernetes',
      ],
      [
        { 'gate-backoff-cap': '500ms' },
        '--gate-backoff-cap must be 0 (uncapped) or >= --gate-backoff-duration (1s), got 500ms',
        'kubernetes',
      ],
      [
        { 'gate-backoff-cap': '1x' },
        'invalid argument "1x" for "--gate-backoff-cap" flag: time: unknown unit "x" in duration "1x"',
        'kubernetes',
      ],
    ];
  for (const [values, message, mode] of cases) {
    t.throws(() => readinessOptions(values, mode), { message }, message);
  }
});

t.test('cert-csi node refuses bad readiness flags before anything starts', async (t) => {
  t.equal(
    await rejectionMessage(runNode(['--pod-readiness-gate', 'pod-ip:any'])),
    '--pod-readiness-gate requires --continue-on-not-ready=true',
  );
  t.match(
    await rejectionMessage(
      runNode(['--continue-on-not-ready', '--pod-readiness-gate', 'pod-annotation:a']),
    ),
    /^--pod-readiness-gate pod-annotation:a: only pod-ip gates work with --mode embedded/,
  );
  t.equal(
    await rejectionMessage(runNode(['--mode', 'kubernetes', '--gate-backoff-jitter', '2'])),
    '--gate-backoff-jitter must be between 0 and 1, got 2',
  );
  t.equal(
    await rejectionMessage(
      runNode(['--mode', 'kubernetes', '--continue-on-not-ready', '--pod-readiness-gate', 'x']),
    ),
    'invalid --pod-readiness-gate "x": expected <type>:<value>, got "x"',
  );
});
