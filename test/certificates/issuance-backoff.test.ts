import t from 'tap';
import {
  backoffDelayMs,
  DEFAULT_MAXIMUM_BACKOFF_MS,
  DEFAULT_MINIMUM_BACKOFF_MS,
  issuanceBackoffUntil,
} from '../../src/certificates/issuance-backoff.js';

const M = 60_000;
const H = 60 * M;

t.test(
  'the delay doubles from the minimum and stops at the maximum (defaults 1h, 32h)',
  async (t) => {
    const cases: Array<[number | undefined, number]> = [
      [undefined, 1 * H],
      [-1, 1 * H],
      [0, 1 * H],
      [1, 1 * H],
      [2, 2 * H],
      [3, 4 * H],
      [4, 8 * H],
      [5, 16 * H],
      [6, 32 * H],
      [7, 32 * H],
      [2000, 32 * H],
    ];
    for (const [attempts, expected] of cases) {
      t.equal(
        backoffDelayMs(attempts, DEFAULT_MINIMUM_BACKOFF_MS, DEFAULT_MAXIMUM_BACKOFF_MS),
        expected,
        `attempts ${attempts}: ${expected / H}h`,
      );
    }
  },
);

t.test('configured bounds: 5m to 1h caps at the maximum, not at a sixth attempt', async (t) => {
  const cases: Array<[number, number]> = [
    [1, 5 * M],
    [4, 40 * M],
    [5, 60 * M],
    [6, 60 * M],
  ];
  for (const [attempts, expected] of cases) {
    t.equal(backoffDelayMs(attempts, 5 * M, H), expected, `attempts ${attempts}`);
  }
  t.equal(backoffDelayMs(3, 2 * H, H), 2 * H, 'a maximum below the minimum: the minimum');
});

t.test('when failed issuances hold the trigger back', async (t) => {
  const failedAt = '2026-01-01T00:00:00Z';
  const base = {
    lastFailureTime: failedAt,
    failedIssuanceAttempts: 2,
    nextRequestChanged: false,
    minimumMs: H,
    maximumMs: 32 * H,
  };
  const at = (iso: string) => new Date(iso);
  const cases: Array<[string, Parameters<typeof issuanceBackoffUntil>[0], string | undefined]> = [
    ['no failure: now', { ...base, lastFailureTime: undefined, now: at(failedAt) }, undefined],
    [
      'inside the delay (2h after 2 attempts)',
      { ...base, now: at('2026-01-01T01:59:59Z') },
      '2026-01-01T02:00:00.000Z',
    ],
    ['the delay has passed', { ...base, now: at('2026-01-01T02:00:00Z') }, undefined],
    [
      'the spec changed since the next request: now',
      { ...base, nextRequestChanged: true, now: at(failedAt) },
      undefined,
    ],
    ['a minimum of 0 disables backoff', { ...base, minimumMs: 0, now: at(failedAt) }, undefined],
    [
      'attempts unset (failed before the field existed): the minimum',
      { ...base, failedIssuanceAttempts: undefined, now: at(failedAt) },
      '2026-01-01T01:00:00.000Z',
    ],
    [
      'an unreadable failure time: now',
      { ...base, lastFailureTime: 'x', now: at(failedAt) },
      undefined,
    ],
  ];
  for (const [name, input, expected] of cases) {
    t.equal(issuanceBackoffUntil(input)?.toISOString(), expected, name);
  }
});
