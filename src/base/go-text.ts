import { ECHO_LIMIT, echoParts } from '../api/echoed-value.js';

// Go's string formatting and trimming, so that messages quote values the way
// cert-manager's (`%q`) do and lists are trimmed with the same notion of space.

// unicode.IsSpace: Latin-1 spaces plus the Unicode White_Space property (no U+FEFF, unlike JS \s).
const GO_SPACE =
  '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const LEADING_SPACE = new RegExp(`^${GO_SPACE}+`, 'u');
const TRAILING_SPACE = new RegExp(`${GO_SPACE}+$`, 'u');

// strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const CONTROL_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/** Go's strings.TrimSpace. */
export function goTrimSpace(text: string): string {
  return text.replace(LEADING_SPACE, '').replace(TRAILING_SPACE, '');
}

/** Go's strconv.Quote (the `%q` verb): a double-quoted string with Go escapes. */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    // A string iterates by code point, so ch is never empty.
    const code = Number(ch.codePointAt(0));
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (PRINTABLE.test(ch)) out += ch;
    else if (CONTROL_ESCAPES[ch] !== undefined) out += CONTROL_ESCAPES[ch];
    else if (code < 0x20 || code === 0x7f) out += `\\x${hex(code, 2)}`;
    // A lone surrogate reaches Go as U+FFFD once the string is UTF-8 encoded.
    else if (code >= 0xd800 && code <= 0xdfff) out += '\ufffd';
    else if (code < 0x10000) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return `${out}"`;
}

/** goQuote of a user's value, shortened to ECHO_LIMIT characters with `…(N characters)` after the quote. */
export function goQuoteValue(text: string): string {
  const { head, cut } = echoParts(text);
  return goQuote(head) + cut;
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

export type GoInteger = { ok: true; value: bigint } | { ok: false; message: string };

/** Go's strconv.ParseInt(text, 10, 64), or Atoi (the same on 64-bit), with Go's error text. */
export function parseGoInteger(text: string, func: 'Atoi' | 'ParseInt'): GoInteger {
  const fail = (reason: string): GoInteger => ({
    ok: false,
    message: `strconv.${func}: parsing ${goQuoteValue(text)}: ${reason}`,
  });
  if (!/^[+-]?[0-9]+$/.test(text)) return fail('invalid syntax');
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) return fail('value out of range');
  return { ok: true, value };
}

/**
 * Go's `%#v` of a []byte (`[]byte{0x2d, 0xa}`, how apimachinery prints a bytes field's value),
 * cut as `shortened` cuts text: the first ECHO_LIMIT characters and `…(N characters)`. Only
 * the part shown is built, so a megabyte field costs no more than a short one.
 */
export function goByteSlice(bytes: Uint8Array): string {
  let total = '[]byte{}'.length;
  for (const [i, b] of bytes.entries()) total += (i > 0 ? 2 : 0) + (b < 16 ? 3 : 4);
  // Every element takes at least 3 characters, so this many cover what is shown.
  const shown = bytes.subarray(0, Math.ceil(ECHO_LIMIT / 3));
  const head = `[]byte{${Array.from(shown, (b) => `0x${b.toString(16)}`).join(', ')}`;
  if (total <= ECHO_LIMIT) return `${head}}`;
  return `${head.slice(0, ECHO_LIMIT)}…(${total} characters)`;
}

/** Go's `%v` of a []string: `[a b c]`. */
export function goList(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** A UTC time as Go's time.Time.String() prints it: `2026-01-02 15:04:05 +0000 UTC` (fraction only when non-zero). */
export function goTimeString(date: Date): string {
  const fraction = date.getUTCMilliseconds()
    ? `.${String(date.getUTCMilliseconds()).padStart(3, '0').replace(/0+$/, '')}`
    : '';
  return `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 19)}${fraction} +0000 UTC`;
}

/** A UTC time in Go's time.RFC1123 layout: `Mon, 02 Jan 2006 15:04:05 UTC`. */
export function goRfc1123(date: Date): string {
  return `${DAYS[date.getUTCDay()]}, ${two(date.getUTCDate())} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()} ${date.toISOString().slice(11, 19)} UTC`;
}

/** One field as Go's encoding/csv writes it: quoted (quotes doubled) when it holds a comma, quote, CR or LF, starts with a space, or is `\.`. */
function csvField(field: string): string {
  const needsQuotes =
    field !== '' &&
    (field === '\\.' || /[",\r\n]/.test(field) || new RegExp(`^${GO_SPACE}`, 'u').test(field));
  return needsQuotes ? `"${field.replaceAll('"', '""')}"` : field;
}

/** Values joined as one line of Go's encoding/csv (cert-manager's JoinWithEscapeCSV). */
export function goJoinCsv(values: readonly string[]): string {
  return values.map(csvField).join(',');
}
