import {
  CronDayOfMonth,
  CronDayOfWeek,
  CronExpression,
  CronFieldCollection,
  CronHour,
  CronMinute,
  CronMonth,
  CronSecond,
  type DayOfMonthRange,
  type DayOfWeekRange,
  type HourRange,
  type MonthRange,
  type SixtyRange,
} from 'cron-parser';
import { shortened } from '../api/echoed-value.js';
import { goQuote, goTrimSpace } from '../base/go-text.js';
import { parseGoDuration } from './duration.js';
import { PkiError } from './errors.js';

// The cron dialect of cert-manager's renewal windows: its fork of robfig/cron with the options
// Minute | Hour | Dom | Month | Dow | Descriptor (exactly five fields, or @yearly … @hourly and
// @every <duration>). cron-parser accepts more (seconds, L, W, #, 7 for Sunday, H), so the
// grammar and its error messages are ours, ported from that parser; cron-parser only walks the
// calendar of a time zone, from the value sets parsed here.

/** When a schedule next starts. */
export interface CronSchedule {
  /** robfig's Next: the first start in the whole second after afterMs's second or later; undefined when none is found. */
  next(afterMs: number): number | undefined;
  /**
   * The start cert-manager's binary search over next finds at or before atOrBeforeMs, searching
   * from fromMs, when next(fromMs - 1 s) is no later than atOrBeforeMs: for a calendar the
   * last start at or before it, asked of the calendar directly (the search is many times
   * slower).
   */
  previous(atOrBeforeMs: number, fromMs: number): number | undefined;
}

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DAYS_OF_MONTH: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = {
  min: 1,
  max: 12,
  names: {
    jan: 1,
    feb: 2,
    mar: 3,
    apr: 4,
    may: 5,
    jun: 6,
    jul: 7,
    aug: 8,
    sep: 9,
    oct: 10,
    nov: 11,
    dec: 12,
  },
};
const DAYS_OF_WEEK: Bounds = {
  min: 0,
  max: 6,
  names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 },
};

/** One field's values, and whether it was written with `*` or `?` (robfig's star bit). */
interface FieldSet {
  values: Set<number>;
  star: boolean;
}

interface SpecFields {
  minute: FieldSet;
  hour: FieldSet;
  dayOfMonth: FieldSet;
  month: FieldSet;
  dayOfWeek: FieldSet;
}

const MAX_INT64 = 2n ** 63n - 1n;

// strconv.Atoi: an optional sign, then decimal digits; its errors quote the input. A bigint,
// so a value past the field's maximum is reported with all its digits, as Go reports it.
function atoi(expr: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(expr))
    throw new PkiError(
      `failed to parse int from ${shortened(expr)}: strconv.Atoi: parsing ${goQuote(shortened(expr))}: invalid syntax`,
    );
  const value = BigInt(expr);
  if (value > MAX_INT64 || value < -MAX_INT64 - 1n)
    throw new PkiError(
      `failed to parse int from ${shortened(expr)}: strconv.Atoi: parsing ${goQuote(shortened(expr))}: value out of range`,
    );
  if (value < 0n) throw new PkiError(`negative number (${value}) not allowed: ${shortened(expr)}`);
  return value;
}

function intOrName(expr: string, bounds: Bounds): bigint {
  const named = bounds.names?.[expr.toLowerCase()];
  return named === undefined ? atoi(expr) : BigInt(named);
}

// robfig's getRange: `*` or `?`, or number[-number], then an optional /step.
function addRange(expr: string, bounds: Bounds, into: FieldSet): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] as string).split('-');
  const single = lowAndHigh.length === 1;
  let start: bigint;
  let end: bigint;
  let star = false;
  const low = lowAndHigh[0] as string;
  if (low === '*' || low === '?') {
    start = BigInt(bounds.min);
    end = BigInt(bounds.max);
    star = true;
  } else {
    start = intOrName(low, bounds);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = intOrName(lowAndHigh[1] as string, bounds);
    else throw new PkiError(`too many hyphens: ${shortened(expr)}`);
  }
  let step = 1n;
  if (rangeAndStep.length === 2) {
    step = atoi(rangeAndStep[1] as string);
    // `N/step` means N to the maximum.
    if (single) end = BigInt(bounds.max);
    if (step > 1n) star = false;
  } else if (rangeAndStep.length > 2) {
    throw new PkiError(`too many slashes: ${shortened(expr)}`);
  }
  const text = shortened(expr);
  if (start < bounds.min)
    throw new PkiError(`beginning of range (${start}) below minimum (${bounds.min}): ${text}`);
  if (end > bounds.max)
    throw new PkiError(`end of range (${end}) above maximum (${bounds.max}): ${text}`);
  if (start > end)
    throw new PkiError(`beginning of range (${start}) beyond end of range (${end}): ${text}`);
  if (step === 0n) throw new PkiError(`step of range should be a positive number: ${text}`);
  // Within the field's bounds now: small numbers.
  for (let v = Number(start); v <= Number(end); v += Number(step)) into.values.add(v);
  if (star) into.star = true;
}

// robfig's getField: comma-separated ranges (empty pieces dropped, as strings.FieldsFunc does).
function parseField(field: string, bounds: Bounds): FieldSet {
  const set: FieldSet = { values: new Set(), star: false };
  for (const expr of field.split(',')) if (expr !== '') addRange(expr, bounds, set);
  return set;
}

const range = (min: number, max: number): Set<number> =>
  new Set(Array.from({ length: max - min + 1 }, (_, i) => min + i));
const all = (bounds: Bounds): FieldSet => ({
  values: range(bounds.min, bounds.max),
  star: true,
});
const only = (value: number): FieldSet => ({ values: new Set([value]), star: false });

const yearly = (): SpecFields => ({
  minute: only(0),
  hour: only(0),
  dayOfMonth: only(1),
  month: only(1),
  dayOfWeek: all(DAYS_OF_WEEK),
});
const daily = (): SpecFields => ({
  minute: only(0),
  hour: only(0),
  dayOfMonth: all(DAYS_OF_MONTH),
  month: all(MONTHS),
  dayOfWeek: all(DAYS_OF_WEEK),
});

const DESCRIPTORS: Readonly<Record<string, () => SpecFields>> = {
  '@yearly': yearly,
  '@annually': yearly,
  '@monthly': () => ({
    minute: only(0),
    hour: only(0),
    dayOfMonth: only(1),
    month: all(MONTHS),
    dayOfWeek: all(DAYS_OF_WEEK),
  }),
  '@weekly': () => ({
    minute: only(0),
    hour: only(0),
    dayOfMonth: all(DAYS_OF_MONTH),
    month: all(MONTHS),
    dayOfWeek: only(0),
  }),
  '@daily': daily,
  '@midnight': daily,
  '@hourly': () => ({
    minute: only(0),
    hour: all(HOURS),
    dayOfMonth: all(DAYS_OF_MONTH),
    month: all(MONTHS),
    dayOfWeek: all(DAYS_OF_WEEK),
  }),
};

const EVERY = '@every ';

/**
 * robfig's ConstantDelaySchedule (`@every 90m`): the start after t is t's whole second plus
 * the delay, whole seconds of at least one.
 */
function everySchedule(durationText: string, descriptor: string): CronSchedule {
  let delayMs: number;
  try {
    delayMs = parseGoDuration(durationText);
  } catch (error) {
    throw new PkiError(
      `failed to parse duration ${shortened(descriptor)}: ${(error as Error).message}`,
    );
  }
  const delay = delayMs < 1000 ? 1000 : delayMs - (delayMs % 1000);
  const second = (ms: number) => Math.floor(ms / 1000) * 1000;
  return {
    next: (afterMs) => second(afterMs) + delay,
    // "Starts" here move with the time asked about, so the binary search over next ends where
    // its bounds put it: next(low - 1 s) for the low second whose next is the last at or before
    // the bound, which is the bound's second less the delay, or the search's first second when
    // that comes later.
    previous: (atOrBeforeMs, fromMs) =>
      Math.max(second(fromMs), second(atOrBeforeMs - delay)) - 1000 + delay,
  };
}

/**
 * Whether the runtime's time-zone database knows name as an IANA zone (Go's LoadLocation
 * reads the same database; `UTC` and the empty name are UTC there). UTC-offset forms, which
 * ICU also accepts, are not zone names.
 */
export function isKnownTimeZone(name: string): boolean {
  if (name === '' || name === 'UTC' || knownZones.has(name)) return true;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    return false;
  }
  remember(knownZones, name, true);
  return true;
}

// Asking ICU, and building a schedule, take a millisecond or two each, and every sync of a
// Certificate with windows reads them again: the answers are kept, a bounded number of them.
const REMEMBERED = 512;
const knownZones = new Map<string, true>();
const schedules = new Map<string, CronSchedule>();

function remember<T>(map: Map<string, T>, key: string, value: T): void {
  if (map.size >= REMEMBERED) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

// A CronDate as cron-parser hands it out: the wall clock in the schedule's zone.
interface WallClock {
  getTime(): number;
  getHours(): number;
  getMinutes(): number;
}

/** Walks the calendar of timeZone for the value sets, as robfig's SpecSchedule.Next does. */
function specSchedule(fields: SpecFields, timeZone: string): CronSchedule {
  // The bounds checks above keep every value inside the ranges these types spell out.
  const list = <T extends number>(set: FieldSet) => [...set.values].sort((a, b) => a - b) as T[];
  let expression: CronExpression;
  try {
    expression = new CronExpression(
      new CronFieldCollection({
        second: new CronSecond([0]),
        minute: new CronMinute(list<SixtyRange>(fields.minute), { wildcard: fields.minute.star }),
        hour: new CronHour(list<HourRange>(fields.hour), { wildcard: fields.hour.star }),
        dayOfMonth: new CronDayOfMonth(list<Exclude<DayOfMonthRange, 'L'>>(fields.dayOfMonth), {
          wildcard: fields.dayOfMonth.star,
        }),
        month: new CronMonth(list<MonthRange>(fields.month), { wildcard: fields.month.star }),
        dayOfWeek: new CronDayOfWeek(list<Exclude<DayOfWeekRange, 'L'>>(fields.dayOfWeek), {
          wildcard: fields.dayOfWeek.star,
        }),
      }),
      { tz: timeZone },
    );
  } catch {
    // A field with no values (`,`) or a day no month has (`0 0 30 2 *`): robfig parses these
    // and never finds a start; cron-parser refuses to build them.
    return { next: () => undefined, previous: () => undefined };
  }
  // cron-parser moves a start in the hour skipped when clocks go forward to the hour after;
  // robfig skips that day. A few tries pass any such shifted start.
  const startsHere = (at: WallClock) =>
    fields.hour.values.has(at.getHours()) && fields.minute.values.has(at.getMinutes());
  const attempt = (move: () => WallClock): WallClock | undefined => {
    try {
      return move();
    } catch {
      // Its search gives up on starts years apart or past the last date JavaScript holds;
      // robfig's gives up after nine years.
      return undefined;
    }
  };
  const step = (from: number, move: () => WallClock): number | undefined => {
    expression.reset(new Date(from));
    let at: WallClock | undefined;
    for (let tries = 0; tries < 4; tries++) {
      at = attempt(move);
      if (!at || startsHere(at)) break;
    }
    return at && startsHere(at) ? at.getTime() : undefined;
  };
  return {
    next: (afterMs) => step(Math.floor(afterMs / 1000) * 1000, () => expression.next()),
    previous: (atOrBeforeMs) =>
      step(Math.floor(atOrBeforeMs / 1000) * 1000 + 1000, () => expression.prev()),
  };
}

/**
 * Parses a renewal window's cron in its time zone ('' is UTC) as cert-manager does (CronParse:
 * the zone as a `CRON_TZ=` prefix, then robfig's standard parser with descriptors); throws a
 * PkiError with its message, `failed to parse cron spec '<cron>': <why>`.
 */
export function parseCronSchedule(cron: string, timeZone: string): CronSchedule {
  const key = `${timeZone}\n${cron}`;
  const known = schedules.get(key);
  if (known) return known;
  try {
    const schedule = parseSpec(timeZone === '' ? cron : `CRON_TZ=${timeZone} ${cron}`);
    remember(schedules, key, schedule);
    return schedule;
  } catch (error) {
    throw new PkiError(
      `failed to parse cron spec '${shortened(cron)}': ${(error as Error).message}`,
    );
  }
}

function parseSpec(text: string): CronSchedule {
  if (text.length === 0) throw new PkiError('empty spec string');
  let spec = text;
  let zone = 'UTC';
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    if (space === -1)
      throw new PkiError(
        `expected timezone prefix to be followed by a cron spec: ${shortened(spec)}`,
      );
    zone = spec.slice(spec.indexOf('=') + 1, space);
    if (!isKnownTimeZone(zone))
      throw new PkiError(
        `provided bad location ${shortened(zone)}: unknown time zone ${shortened(zone)}`,
      );
    if (zone === '') zone = 'UTC';
    spec = goTrimSpace(spec.slice(space));
  }
  if (spec.startsWith('@')) {
    const descriptor = DESCRIPTORS[spec];
    if (descriptor) return specSchedule(descriptor(), zone);
    if (spec.startsWith(EVERY)) return everySchedule(spec.slice(EVERY.length), spec);
    throw new PkiError(`unrecognized descriptor: ${shortened(spec)}`);
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5)
    throw new PkiError(
      `expected exactly 5 fields, found ${fields.length}: ${shortened(`[${fields.join(' ')}]`)}`,
    );
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [
    string,
    string,
    string,
    string,
    string,
  ];
  return specSchedule(
    {
      minute: parseField(minute, MINUTES),
      hour: parseField(hour, HOURS),
      dayOfMonth: parseField(dayOfMonth, DAYS_OF_MONTH),
      month: parseField(month, MONTHS),
      dayOfWeek: parseField(dayOfWeek, DAYS_OF_WEEK),
    },
    zone,
  );
}
