import type { RenewalWindow } from '../api/certificate.js';
import { shortened } from '../api/echoed-value.js';
import { goTimeString } from '../base/go-text.js';
import { type CronSchedule, isKnownTimeZone, parseCronSchedule } from './cron-schedule.js';
import { parseGoDuration } from './duration.js';

/** A renewal time moved into the renewal windows; error says why it could not be, or why there is none. */
export interface WindowedRenewalTime {
  /** Undefined only when a window cannot be read (validation refuses such a spec first). */
  at: Date | undefined;
  error?: string;
}

// Port of cert-manager's applyRenewBeforeWithWindows (pkg/util/pki/renewaltime.go), in
// milliseconds where Go has nanoseconds: every start is a whole second, so the same start is
// found. Its quirks are kept: a later window that finds nothing drops what an earlier one found,
// and a window's end counts as inside it when the desired time falls exactly there.

// The latest start S of the schedule with min <= S <= max, as cert-manager's binary search
// over Next finds it (the schedule answers it directly).
function latestStart(schedule: CronSchedule, min: number, max: number): number | undefined {
  if (!(min < max)) return undefined;
  const first = schedule.next(min - 1000);
  if (first === undefined || first > max) return undefined;
  return schedule.previous(max, min);
}

// The desired time itself when it lies in a window that starts at or before it (the window's
// end counts), else nothing; the latest such candidate over the windows.
function bestBefore(
  schedule: CronSchedule,
  searchMin: number,
  searchMax: number,
  desired: number,
  best: number | undefined,
  durationMs: number,
): number | undefined {
  if (desired < searchMin) return undefined;
  const start = latestStart(schedule, searchMin, Math.min(desired, searchMax));
  if (start === undefined) return best;
  const end = start + durationMs;
  const candidate = desired >= start && desired < end ? desired : end;
  return candidate >= desired && (best === undefined || candidate > best) ? candidate : best;
}

// The first window start at or after the desired time (no later than searchMax); the earliest
// such candidate over the windows.
function bestAfter(
  schedule: CronSchedule,
  searchMin: number,
  searchMax: number,
  desired: number,
  best: number | undefined,
  durationMs: number,
): number | undefined {
  const start = schedule.next(Math.max(desired, searchMin) - 1000);
  if (start === undefined) return best;
  if (start > searchMax) return undefined;
  let candidate: number | undefined;
  if (desired >= start && desired < start + durationMs) candidate = desired;
  else if (desired < start) candidate = start;
  return candidate !== undefined && (best === undefined || candidate < best) ? candidate : best;
}

function windowDurationMs(text: string): number | undefined {
  try {
    return parseGoDuration(text);
  } catch {
    return undefined;
  }
}

/**
 * cert-manager's renewal windows (policy RenewBefore): the desired renewal time when it falls
 * in a window, else the start of the first window after it (up to a window's length past
 * notAfter); when no window fits, the desired time and the error cert-manager turns into
 * WindowError.
 */
export function applyRenewalWindows(
  notBefore: Date,
  notAfter: Date,
  desired: Date,
  windows: readonly RenewalWindow[],
): WindowedRenewalTime {
  let before: number | undefined;
  let after: number | undefined;
  for (const window of windows) {
    const timeZone = window.timezone ?? '';
    if (!isKnownTimeZone(timeZone))
      return {
        at: undefined,
        error: `error parsing timezone in window unknown time zone ${shortened(timeZone)}`,
      };
    let schedule: CronSchedule;
    try {
      schedule = parseCronSchedule(window.cron, timeZone === '' ? 'UTC' : timeZone);
    } catch (error) {
      return { at: undefined, error: `error parsing cron in window ${(error as Error).message}` };
    }
    const durationMs = windowDurationMs(window.windowDuration);
    if (durationMs === undefined || durationMs <= 0)
      return {
        at: undefined,
        error: `windowDuration must be a positive duration in window {${shortened(timeZone)} ${shortened(window.windowDuration)} ${shortened(window.cron)}}`,
      };
    const searchMin = notBefore.getTime() - durationMs;
    const searchMax = notAfter.getTime() + durationMs;
    const wanted = desired.getTime();
    before = bestBefore(schedule, searchMin, searchMax, wanted, before, durationMs);
    after = bestAfter(schedule, searchMin, searchMax, wanted, after, durationMs);
  }
  if (windows.length === 0) return { at: desired };
  const found = before ?? after;
  if (found !== undefined) return { at: new Date(found) };
  return {
    at: desired,
    error: `cannot find a time with the given windows between ${goTimeString(notBefore)} and ${goTimeString(notAfter)} for: ${goTimeString(desired)}`,
  };
}
