import t from 'tap';
import type { RenewalWindow } from '../../src/api/certificate.js';
import { applyRenewalWindows } from '../../src/pki/renewal-windows.js';

// A certificate of 30 days from Thursday 2026-01-01; the desired renewal time (two thirds in)
// is Wednesday 2026-01-21 00:00 UTC.
const notBefore = new Date('2026-01-01T00:00:00Z');
const notAfter = new Date('2026-01-31T00:00:00Z');
const desired = new Date('2026-01-21T00:00:00Z');
const NO_FIT =
  'cannot find a time with the given windows between 2026-01-01 00:00:00 +0000 UTC and 2026-01-31 00:00:00 +0000 UTC for: 2026-01-21 00:00:00 +0000 UTC';

t.test('renewal windows move the renewal time as cert-manager’s do', async (t) => {
  const cases: [string, RenewalWindow[], string, string?][] = [
    ['no windows: the desired time', [], '2026-01-21T00:00:00.000Z'],
    [
      'the desired time inside a window stays',
      [{ cron: '0 23 * * *', windowDuration: '2h' }],
      '2026-01-21T00:00:00.000Z',
    ],
    [
      'a window starting at the desired time: the desired time',
      [{ cron: '0 0 * * *', windowDuration: '1h' }],
      '2026-01-21T00:00:00.000Z',
    ],
    [
      'a window ending at the desired time counts (cert-manager’s end is inclusive there)',
      [{ cron: '0 22 * * *', windowDuration: '2h' }],
      '2026-01-21T00:00:00.000Z',
    ],
    [
      'outside every window: the start of the next one',
      [{ cron: '0 2 * * 6', windowDuration: '4h' }],
      '2026-01-24T02:00:00.000Z',
    ],
    [
      'the earliest start among several windows',
      [
        { cron: '0 2 * * 6', windowDuration: '4h' },
        { cron: '30 1 * * 5', windowDuration: '30m' },
      ],
      '2026-01-23T01:30:00.000Z',
    ],
    [
      'the earliest start, whichever window comes first',
      [
        { cron: '30 1 * * 5', windowDuration: '30m' },
        { cron: '0 2 * * 6', windowDuration: '4h' },
      ],
      '2026-01-23T01:30:00.000Z',
    ],
    [
      'two windows around the desired time',
      [
        { cron: '0 23 * * *', windowDuration: '2h' },
        { cron: '30 23 * * *', windowDuration: '1h' },
      ],
      '2026-01-21T00:00:00.000Z',
    ],
    [
      'a window in a time zone',
      [{ cron: '0 9 * * *', timezone: 'Asia/Tokyo', windowDuration: '1h' }],
      '2026-01-21T00:00:00.000Z',
    ],
    [
      'a window in a time zone, later',
      [{ cron: '0 9 * * *', timezone: 'Europe/Paris', windowDuration: '1h' }],
      '2026-01-21T08:00:00.000Z',
    ],
    [
      'fractional window lengths',
      [{ cron: '0 23 * * 2', windowDuration: '0.5h30m0.5s' }],
      '2026-01-21T00:00:00.000Z',
    ],
    [
      'a window that opens after notAfter but within its own length of it is still taken',
      [{ cron: '0 0 1 2 *', windowDuration: '48h' }],
      '2026-02-01T00:00:00.000Z',
    ],
    [
      'a window whose next start is beyond notAfter plus its length: none fits',
      [{ cron: '0 0 1 2 *', windowDuration: '1h' }],
      '2026-01-21T00:00:00.000Z',
      NO_FIT,
    ],
    [
      'a schedule that never starts',
      [{ cron: '0 0 30 2 *', windowDuration: '1h' }],
      '2026-01-21T00:00:00.000Z',
      NO_FIT,
    ],
    [
      'cert-manager’s quirk: a later window that finds no start past the desired time drops an earlier one’s',
      [
        { cron: '0 2 * * 6', windowDuration: '4h' },
        { cron: '0 0 1 2 *', windowDuration: '1h' },
      ],
      '2026-01-21T00:00:00.000Z',
      NO_FIT,
    ],
    [
      '@every: a window always open around the desired time',
      [{ cron: '@every 1h', windowDuration: '10m' }],
      '2026-01-21T00:00:00.000Z',
    ],
    ['@weekly: Sunday', [{ cron: '@weekly', windowDuration: '1h' }], '2026-01-25T00:00:00.000Z'],
  ];
  for (const [name, windows, at, error] of cases) {
    const got = applyRenewalWindows(notBefore, notAfter, desired, windows);
    t.equal(got.at?.toISOString(), at, name);
    t.equal(got.error, error, `${name}: error`);
  }
});

t.test(
  'a desired time at or before notBefore less the window (cert-manager’s bounds)',
  async (t) => {
    const window = [{ cron: '0 * * * *', windowDuration: '1h' }];
    const early = new Date(notBefore.getTime() - 3_600_000);
    t.same(
      applyRenewalWindows(notBefore, notAfter, early, window),
      { at: early },
      'exactly at the lower bound: the first window start at or after it',
    );
    const earlier = new Date(notBefore.getTime() - 2 * 3_600_000);
    t.same(
      applyRenewalWindows(notBefore, notAfter, earlier, window),
      { at: early },
      'below it: no window before, the first one after the bound',
    );
  },
);

t.test('a desired time within a second after a window too short to reach it', async (t) => {
  const halfPast = new Date('2026-01-21T00:00:00.500Z');
  t.same(
    applyRenewalWindows(notBefore, notAfter, halfPast, [
      { cron: '0 0 * * *', windowDuration: '0.1s' },
    ]),
    {
      at: halfPast,
      error:
        'cannot find a time with the given windows between 2026-01-01 00:00:00 +0000 UTC and 2026-01-31 00:00:00 +0000 UTC for: 2026-01-21 00:00:00.5 +0000 UTC',
    },
  );
});

t.test('windows it cannot read give no renewal time and cert-manager’s error', async (t) => {
  const cases: [RenewalWindow, string][] = [
    [
      { cron: '0 2 * * *', timezone: 'Mars/Base', windowDuration: '1h' },
      'error parsing timezone in window unknown time zone Mars/Base',
    ],
    [
      { cron: '0 2 * *', windowDuration: '1h' },
      "error parsing cron in window failed to parse cron spec '0 2 * *': expected exactly 5 fields, found 4: [0 2 * *]",
    ],
    [
      { cron: '0 2 * * *', windowDuration: '0s' },
      'windowDuration must be a positive duration in window { 0s 0 2 * * *}',
    ],
    [
      { cron: '0 2 * * *', timezone: 'UTC', windowDuration: 'soon' },
      'windowDuration must be a positive duration in window {UTC soon 0 2 * * *}',
    ],
  ];
  for (const [window, error] of cases)
    t.same(
      applyRenewalWindows(notBefore, notAfter, desired, [window]),
      { at: undefined, error },
      error,
    );
});
