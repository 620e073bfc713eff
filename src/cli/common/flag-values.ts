import { quoted } from '../../api/echoed-value.js';
import { errorMessage } from '../../base/error-message.js';
import { parseGoDuration } from '../../pki/duration.js';

/** A flag's whole number >= 1, or an error naming the flag. */
export function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${flag}: must be a whole number >= 1, got ${quoted(text)}`);
  return value;
}

/** A flag's Go duration in ms (positive, or also zero when allowed), or an error naming the flag. */
export function flagDuration(flag: string, text: string, zeroAllowed = false): number {
  let ms: number;
  try {
    ms = parseGoDuration(text);
  } catch (err) {
    throw new Error(`${flag}: ${errorMessage(err)}`);
  }
  if (ms < 0 || (!zeroAllowed && ms === 0))
    throw new Error(
      `${flag}: must be ${zeroAllowed ? 'zero or more' : 'positive'}, got ${quoted(text)}`,
    );
  return ms;
}

/** Longest wait a timer can hold (setTimeout's limit, about 24.8 days): longer ones never fire. */
export const MAX_WAIT_MS = 2 ** 31 - 1;

/** A flag's wait in ms: a positive Go duration a timer can hold (at most 596h), or an error naming the flag. */
export function flagTimeout(flag: string, text: string): number {
  let ms: number;
  try {
    ms = parseGoDuration(text);
  } catch (err) {
    throw new Error(`${flag}: ${errorMessage(err)}`);
  }
  if (ms <= 0 || ms > MAX_WAIT_MS)
    throw new Error(`${flag}: must be positive and at most 596h, got ${quoted(text)}`);
  return ms;
}
