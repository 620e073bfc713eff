import t from 'tap';
import {
  type CronSchedule,
  isKnownTimeZone,
  parseCronSchedule,
} from '../../src/pki/cron-schedule.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The first n starts after from. */
function starts(schedule: CronSchedule, from: string, n: number): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  let now: number | undefined = at(from);
  for (let i = 0; i < n && now !== undefined; i++) {
    now = schedule.next(now);
    out.push(iso(now));
  }
  return out;
}

// 2026-03-07 is a Saturday; clocks in New York go forward at 02:00 on Sunday 2026-03-08.
t.test(
  'the starts of cert-manager’s cron dialect (robfig, five fields and descriptors)',
  async (t) => {
    const cases: [string, string, string, string[]][] = [
      [
        'every day at 02:00',
        '0 2 * * *',
        '',
        ['2026-03-08T02:00:00.000Z', '2026-03-09T02:00:00.000Z'],
      ],
      [
        'ranges, steps and names',
        '0 9-17/4 * * mon-fri',
        'UTC',
        [
          '2026-03-09T09:00:00.000Z',
          '2026-03-09T13:00:00.000Z',
          '2026-03-09T17:00:00.000Z',
          '2026-03-10T09:00:00.000Z',
        ],
      ],
      [
        'N/step runs to the maximum',
        '50/5 23 * * *',
        '',
        ['2026-03-07T23:50:00.000Z', '2026-03-07T23:55:00.000Z', '2026-03-08T23:50:00.000Z'],
      ],
      [
        'a list, empty items dropped',
        '0 1,,3 * * *',
        '',
        ['2026-03-08T01:00:00.000Z', '2026-03-08T03:00:00.000Z'],
      ],
      [
        'month names, any case',
        '0 0 1 JAN,apr *',
        '',
        ['2026-04-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
      ],
      [
        'day of month and day of week both restricted: either',
        '0 0 13 * fri',
        '',
        [
          '2026-03-13T00:00:00.000Z',
          '2026-03-20T00:00:00.000Z',
          '2026-03-27T00:00:00.000Z',
          '2026-04-03T00:00:00.000Z',
          '2026-04-10T00:00:00.000Z',
          '2026-04-13T00:00:00.000Z',
        ],
      ],
      [
        'a star day of month: the day of week alone',
        '0 0 * * 1',
        '',
        ['2026-03-09T00:00:00.000Z', '2026-03-16T00:00:00.000Z'],
      ],
      ['? is a star', '0 0 ? * 1', '', ['2026-03-09T00:00:00.000Z']],
      [
        '*/2 is no star: either day',
        '0 0 */10 * 1',
        '',
        [
          '2026-03-09T00:00:00.000Z',
          '2026-03-11T00:00:00.000Z',
          '2026-03-16T00:00:00.000Z',
          '2026-03-21T00:00:00.000Z',
        ],
      ],
      [
        'a zone',
        '0 2 * * *',
        'Europe/Paris',
        ['2026-03-08T01:00:00.000Z', '2026-03-09T01:00:00.000Z'],
      ],
      [
        'the hour clocks skip is skipped that day (robfig), not moved',
        '30 2 * * *',
        'America/New_York',
        ['2026-03-09T06:30:00.000Z', '2026-03-10T06:30:00.000Z'],
      ],
      ['@daily', '@daily', '', ['2026-03-08T00:00:00.000Z']],
      [
        '@midnight',
        '@midnight',
        'Asia/Tokyo',
        ['2026-03-07T15:00:00.000Z', '2026-03-08T15:00:00.000Z'],
      ],
      ['@hourly', '@hourly', '', ['2026-03-07T13:00:00.000Z', '2026-03-07T14:00:00.000Z']],
      ['@weekly: Sundays', '@weekly', '', ['2026-03-08T00:00:00.000Z', '2026-03-15T00:00:00.000Z']],
      ['@monthly', '@monthly', '', ['2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z']],
      ['@yearly', '@yearly', '', ['2027-01-01T00:00:00.000Z']],
      ['@annually', '@annually', '', ['2027-01-01T00:00:00.000Z']],
      [
        '@every: from the whole second',
        '@every 90m',
        '',
        ['2026-03-07T13:30:00.000Z', '2026-03-07T15:00:00.000Z'],
      ],
      ['@every below a second is a second', '@every 10ms', '', ['2026-03-07T12:00:01.000Z']],
      ['@every drops parts of a second', '@every 1.5s', '', ['2026-03-07T12:00:01.000Z']],
    ];
    for (const [name, cron, zone, expected] of cases)
      t.same(
        starts(parseCronSchedule(cron, zone), '2026-03-07T12:00:00.000Z', expected.length),
        expected,
        name,
      );
  },
);

t.test('next is strictly after the second it is given', async (t) => {
  const daily = parseCronSchedule('0 2 * * *', 'UTC');
  t.equal(iso(daily.next(at('2026-03-08T02:00:00.000Z'))), '2026-03-09T02:00:00.000Z');
  t.equal(iso(daily.next(at('2026-03-08T01:59:59.999Z'))), '2026-03-08T02:00:00.000Z');
  const from = at('2026-03-01T00:00:00Z');
  t.equal(
    iso(daily.previous(at('2026-03-08T02:00:00.000Z'), from)),
    '2026-03-08T02:00:00.000Z',
    'previous includes its second',
  );
  t.equal(iso(daily.previous(at('2026-03-08T01:59:59.999Z'), from)), '2026-03-07T02:00:00.000Z');
  t.equal(daily.next(8.64e15 - 1000), undefined, 'past the last date JavaScript holds: none');
  t.equal(daily.previous(-8.64e15 + 1000, -8.64e15), undefined, 'before the first: none');
});

t.test('a zone prefix in the cron, as robfig reads it when no zone is given', async (t) => {
  t.equal(
    iso(parseCronSchedule('CRON_TZ=Asia/Tokyo 0 9 * * *', '').next(at('2026-03-07T12:00:00Z'))),
    '2026-03-08T00:00:00.000Z',
  );
  t.equal(
    iso(parseCronSchedule('TZ= 0 9 * * *', '').next(at('2026-03-07T12:00:00Z'))),
    '2026-03-08T09:00:00.000Z',
    'an empty zone is UTC',
  );
});

t.test('parsed schedules are remembered, a bounded number of them', async (t) => {
  const first = parseCronSchedule('0 0 1 1 *', 'UTC');
  t.equal(parseCronSchedule('0 0 1 1 *', 'UTC'), first, 'the same cron again: the same schedule');
  for (let i = 0; i < 600; i++) parseCronSchedule(`${i % 60} ${Math.floor(i / 60)} 2 1 *`, 'UTC');
  t.not(parseCronSchedule('0 0 1 1 *', 'UTC'), first, 'after 600 others it was let go');
});

t.test('a schedule that never starts parses, and has no start', async (t) => {
  for (const cron of ['0 0 30 2 *', '0 0 31 4,6 *', ', * * * *']) {
    const schedule = parseCronSchedule(cron, 'UTC');
    t.equal(schedule.next(at('2026-01-01T00:00:00Z')), undefined, cron);
    t.equal(schedule.previous(at('2027-01-01T00:00:00Z'), 0), undefined, `${cron}: none before`);
  }
  t.equal(
    iso(parseCronSchedule('0 0 30 2 1', 'UTC').next(at('2026-01-01T00:00:00Z'))),
    '2026-02-02T00:00:00.000Z',
    'the day of week rescues it',
  );
});

t.test('what cert-manager refuses, with its messages', async (t) => {
  const cases: [string, string, string][] = [
    [
      '0 2 * *',
      'UTC',
      "failed to parse cron spec '0 2 * *': expected exactly 5 fields, found 4: [0 2 * *]",
    ],
    [
      '0 0 2 * * *',
      'UTC',
      "failed to parse cron spec '0 0 2 * * *': expected exactly 5 fields, found 6: [0 0 2 * * *]",
    ],
    ['', 'UTC', "failed to parse cron spec '': expected exactly 5 fields, found 0: []"],
    ['', '', "failed to parse cron spec '': empty spec string"],
    [
      '60 * * * *',
      'UTC',
      "failed to parse cron spec '60 * * * *': end of range (60) above maximum (59): 60",
    ],
    [
      '* 24 * * *',
      'UTC',
      "failed to parse cron spec '* 24 * * *': end of range (24) above maximum (23): 24",
    ],
    [
      '* * 0 * *',
      'UTC',
      "failed to parse cron spec '* * 0 * *': beginning of range (0) below minimum (1): 0",
    ],
    [
      '* * * 13 *',
      'UTC',
      "failed to parse cron spec '* * * 13 *': end of range (13) above maximum (12): 13",
    ],
    [
      '* * * * 7',
      'UTC',
      "failed to parse cron spec '* * * * 7': end of range (7) above maximum (6): 7",
    ],
    [
      '5-1 * * * *',
      'UTC',
      "failed to parse cron spec '5-1 * * * *': beginning of range (5) beyond end of range (1): 5-1",
    ],
    ['1-2-3 * * * *', 'UTC', "failed to parse cron spec '1-2-3 * * * *': too many hyphens: 1-2-3"],
    ['1/2/3 * * * *', 'UTC', "failed to parse cron spec '1/2/3 * * * *': too many slashes: 1/2/3"],
    [
      '*/0 * * * *',
      'UTC',
      "failed to parse cron spec '*/0 * * * *': step of range should be a positive number: */0",
    ],
    [
      'L * * * *',
      'UTC',
      'failed to parse cron spec \'L * * * *\': failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax',
    ],
    [
      '* * * * 5#3',
      'UTC',
      'failed to parse cron spec \'* * * * 5#3\': failed to parse int from 5#3: strconv.Atoi: parsing "5#3": invalid syntax',
    ],
    [
      '99999999999999999999 * * * *',
      'UTC',
      'failed to parse cron spec \'99999999999999999999 * * * *\': failed to parse int from 99999999999999999999: strconv.Atoi: parsing "99999999999999999999": value out of range',
    ],
    [
      '*/-1 * * * *',
      'UTC',
      "failed to parse cron spec '*/-1 * * * *': negative number (-1) not allowed: -1",
    ],
    [
      '*/-99999999999999999999 * * * *',
      'UTC',
      'failed to parse cron spec \'*/-99999999999999999999 * * * *\': failed to parse int from -99999999999999999999: strconv.Atoi: parsing "-99999999999999999999": value out of range',
    ],
    [
      '99999999999999999 * * * *',
      'UTC',
      "failed to parse cron spec '99999999999999999 * * * *': end of range (99999999999999999) above maximum (59): 99999999999999999",
    ],
    [
      '5-99999999999999999 * * * *',
      'UTC',
      "failed to parse cron spec '5-99999999999999999 * * * *': end of range (99999999999999999) above maximum (59): 5-99999999999999999",
    ],
    [
      '9-5/0 * * * *',
      'UTC',
      "failed to parse cron spec '9-5/0 * * * *': beginning of range (9) beyond end of range (5): 9-5/0",
    ],
    ['@reboot', 'UTC', "failed to parse cron spec '@reboot': unrecognized descriptor: @reboot"],
    [
      '@every 1d',
      'UTC',
      'failed to parse cron spec \'@every 1d\': failed to parse duration @every 1d: time: unknown unit "d" in duration "1d"',
    ],
    [
      '0 2 * * *',
      'Mars/Base',
      "failed to parse cron spec '0 2 * * *': provided bad location Mars/Base: unknown time zone Mars/Base",
    ],
    [
      'TZ=Mars/Base 0 2 * * *',
      '',
      "failed to parse cron spec 'TZ=Mars/Base 0 2 * * *': provided bad location Mars/Base: unknown time zone Mars/Base",
    ],
    [
      'CRON_TZ=UTC',
      '',
      "failed to parse cron spec 'CRON_TZ=UTC': expected timezone prefix to be followed by a cron spec: CRON_TZ=UTC",
    ],
    [
      'CRON_TZ=Europe/Paris 0 2 * * *',
      'UTC',
      "failed to parse cron spec 'CRON_TZ=Europe/Paris 0 2 * * *': expected exactly 5 fields, found 6: [CRON_TZ=Europe/Paris 0 2 * * *]",
    ],
  ];
  for (const [cron, zone, message] of cases)
    t.throws(
      () => parseCronSchedule(cron, zone),
      { message },
      `${JSON.stringify(cron)} in ${JSON.stringify(zone)}`,
    );
  const long = `${'1,'.repeat(5000)}1 * * * x`;
  let message = '';
  try {
    parseCronSchedule(long, 'UTC');
  } catch (error) {
    message = (error as Error).message;
  }
  t.equal(
    message,
    `failed to parse cron spec '${'1,'.repeat(50)}…(10009 characters)': failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax`,
    'a long cron is echoed shortened',
  );
});

t.test('time zones as Go loads them', async (t) => {
  for (const zone of [
    '',
    'UTC',
    'Europe/Paris',
    'America/Argentina/Buenos_Aires',
    'Etc/GMT+5',
    'US/Eastern',
  ])
    t.ok(isKnownTimeZone(zone), zone);
  for (const zone of ['Mars/Base', '+01:00', 'Europe/../Paris', ' UTC', 'Europe/Paris '])
    t.notOk(isKnownTimeZone(zone), zone);
  t.ok(isKnownTimeZone('Europe/Paris'), 'asked twice: the remembered answer');
});

t.test('previous finds the start cert-manager’s search over next finds', async (t) => {
  // cert-manager's binary search over Next between from and max (renewal windows' search for
  // the last window start at or before the desired time).
  const search = (schedule: CronSchedule, from: number, max: number): number | undefined => {
    let low = from;
    let high = max;
    while (high - low > 1000) {
      const mid = low + Math.floor((high - low) / 2);
      const next = schedule.next(mid);
      if (next === undefined || next > max) high = mid;
      else low = mid;
    }
    const last = schedule.next(low - 1000);
    return last === undefined || last > max ? undefined : last;
  };
  const crons: [string, string, number][] = [
    ['0 2 * * *', 'UTC', 400],
    ['15 3 * * sat', 'Europe/Paris', 400],
    ['0 0 13 * fri', 'UTC', 400],
    ['*/7 9-17 * * 1-5', 'America/New_York', 400],
    ['@monthly', 'Asia/Kolkata', 400],
    ['@every 90m', 'UTC', 400],
    ['@every 1.5s', 'UTC', 3],
  ];
  for (const [cron, zone, days] of crons) {
    const schedule = parseCronSchedule(cron, zone);
    for (const when of [
      '2026-03-08T06:59:59.500Z',
      '2026-06-30T23:59:59Z',
      '2026-11-01T05:30:00Z',
    ]) {
      const max = at(when);
      for (const from of [max - days * 86_400_000, max - days * 86_400_000 + 700]) {
        const first = schedule.next(from - 1000);
        // Asked only where the search is: a start lies between from and max.
        if (first === undefined || first > max) continue;
        t.equal(
          iso(schedule.previous(max, from)),
          iso(search(schedule, from, max)),
          `${cron} (${zone}) before ${when}, from ${iso(from)}`,
        );
      }
    }
  }
  // A search that starts within a second of the delay before its bound never moves its low
  // end: the start it finds is the first second's.
  const hourly = parseCronSchedule('@every 1h', 'UTC');
  const max = at('2026-06-30T23:59:59.250Z');
  for (const from of [max - 3_600_000 + 500, max - 3_600_000 + 1000, max - 3_600_000 - 400]) {
    t.ok((hourly.next(from - 1000) as number) <= max, 'a start lies in the search');
    t.equal(
      iso(hourly.previous(max, from)),
      iso(search(hourly, from, max)),
      `@every 1h before ${iso(max)}, from ${iso(from)}`,
    );
  }
});
