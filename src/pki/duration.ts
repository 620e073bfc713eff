import { echoParts } from '../api/echoed-value.js';
import { PkiError } from './errors.js';

// Go's time.ParseDuration and Duration.String, ported so that duration
// attributes are accepted, rejected and printed exactly as cert-manager does.
// Arithmetic is in integer nanoseconds (BigInt) so overflow is detected the
// same way Go detects it.

const NS_PER_MS = 1_000_000n;
const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_U63 = 1n << 63n;

// Go's time.quote: non-ASCII and control characters become \x escapes of their UTF-8 bytes.
// Shortened (api/echoed-value.ts): a duration attribute can be any length.
function quote(text: string): string {
  const { head, cut } = echoParts(text);
  let out = '"';
  for (const ch of head) {
    const code = ch.charCodeAt(0);
    if (code >= 0x80 || code < 0x20) {
      for (const b of new TextEncoder().encode(ch)) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
    }
  }
  return `${out}"${cut}`;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Parses a Go duration string (time.ParseDuration grammar) to milliseconds; throws PkiError with Go's message. */
export function parseGoDuration(text: string): number {
  const invalid = () => new PkiError(`time: invalid duration ${quote(text)}`);
  let s = text;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw invalid();
    let i = 0;
    let whole = 0n;
    for (; isDigit(s[i]); i++) {
      if (whole > MAX_U63 / 10n) throw invalid();
      whole = whole * 10n + BigInt(Number(s[i]));
      if (whole > MAX_U63) throw invalid();
    }
    const pre = i > 0;
    let frac = 0n;
    let scale = 1;
    let post = false;
    if (s[i] === '.') {
      i++;
      const start = i;
      let overflow = false;
      for (; isDigit(s[i]); i++) {
        if (overflow) continue;
        if (frac > (MAX_U63 - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const next = frac * 10n + BigInt(Number(s[i]));
        if (next > MAX_U63) {
          overflow = true;
          continue;
        }
        frac = next;
        scale *= 10;
      }
      post = i > start;
    }
    if (!pre && !post) throw invalid();
    s = s.slice(i);
    let u = 0;
    while (u < s.length && !(s[u] === '.' || isDigit(s[u]))) u++;
    if (u === 0) throw new PkiError(`time: missing unit in duration ${quote(text)}`);
    const unitName = s.slice(0, u);
    s = s.slice(u);
    const unit = UNIT_NS[unitName];
    if (unit === undefined) {
      throw new PkiError(`time: unknown unit ${quote(unitName)} in duration ${quote(text)}`);
    }
    if (whole > MAX_U63 / unit) throw invalid();
    let v = whole * unit;
    if (frac > 0n) {
      // Go computes the fractional part in float64, then truncates to whole nanoseconds.
      v += BigInt(Math.trunc(Number(frac) * (Number(unit) / scale)));
      if (v > MAX_U63) throw invalid();
    }
    total += v;
    if (total > MAX_U63) throw invalid();
  }
  if (!neg && total > MAX_U63 - 1n) throw invalid();
  // Whole milliseconds stay exact beyond 2^53 ns; only the sub-millisecond part is a fraction.
  const ms = Number(total / NS_PER_MS) + Number(total % NS_PER_MS) / 1e6;
  return neg && ms !== 0 ? -ms : ms;
}

// Go's fmtFrac: the fraction of v below 10^prec, without trailing zeros.
function splitFraction(v: bigint, prec: number): { int: bigint; frac: string } {
  const scale = 10n ** BigInt(prec);
  const digits = (v % scale).toString().padStart(prec, '0').replace(/0+$/, '');
  return { int: v / scale, frac: digits ? `.${digits}` : '' };
}

/** Formats milliseconds like Go's Duration.String: `2160h0m0s`, `1m30s`, `1.5s`, `500ms`, `0s`. */
export function formatGoDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new PkiError(`duration must be finite, got ${ms}`);
  const ns = BigInt(Math.round(ms * 1e6));
  const neg = ns < 0n;
  const u = neg ? -ns : ns;
  let out: string;
  if (u === 0n) {
    out = '0s';
  } else if (u < 1_000n) {
    out = `${u}ns`;
  } else if (u < NS_PER_MS) {
    const { int, frac } = splitFraction(u, 3);
    out = `${int}${frac}µs`;
  } else if (u < 1_000_000_000n) {
    const { int, frac } = splitFraction(u, 6);
    out = `${int}${frac}ms`;
  } else {
    const { int: secs, frac } = splitFraction(u, 9);
    const minutes = secs / 60n;
    out = `${secs % 60n}${frac}s`;
    if (minutes > 0n) {
      out = `${minutes % 60n}m${out}`;
      const hours = minutes / 60n;
      if (hours > 0n) out = `${hours}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}
