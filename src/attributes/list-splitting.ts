import type { ErrorKind } from '../base/error-catalogue.js';
import { goQuoteValue, goTrimSpace } from '../base/go-text.js';

/** Splits a comma-separated attribute on `,` and trims each element with Go's TrimSpace. */
export function splitList(text: string): string[] {
  return text.split(',').map(goTrimSpace);
}

// csi-driver keeps empty elements, so `a.example.com,` asks for an empty DNS SAN
// that no issuer will sign; we drop them on purpose.

/** splitList without empty elements, for the SAN lists. */
export function splitSanList(text: string): string[] {
  return splitList(text).filter((element) => element !== '');
}

export type CsvSplit = { ok: true; values: string[] } | { ok: false; message: string };

const QUOTE = 0x22;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);

const ERR_BARE_QUOTE = 'bare " in non-quoted-field';
const ERR_QUOTE = 'extraneous or missing " in quoted-field';
const ERR_FIELD_COUNT = 'wrong number of fields';

/** A record that is not valid CSV, where Go's encoding/csv says (its ParseError). */
export class CsvParseError extends Error {
  constructor(
    readonly startLine: number,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(reason);
  }

  // encoding/csv ParseError.Error.
  describe(): string {
    if (this.reason === ERR_FIELD_COUNT) return `record on line ${this.line}: ${this.reason}`;
    if (this.startLine !== this.line) {
      return `record on line ${this.startLine}; parse error on line ${this.line}, column ${this.column}: ${this.reason}`;
    }
    return `parse error on line ${this.line}, column ${this.column}: ${this.reason}`;
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_CSV_MALFORMED';
  }
}

const lengthNL = (line: Buffer): number => (line.at(-1) === NEWLINE ? 1 : 0);

// Go's encoding/csv Reader with default options (comma ',', strict quotes, the
// first record fixing the field count), over UTF-8 bytes so that error columns
// are byte columns as in Go.
class CsvReader {
  private offset = 0;
  private lineNumber = 0;
  private fieldsPerRecord = 0;

  constructor(private readonly input: Buffer) {}

  // readLine: one line including its '\n'; undefined at end of input. CRLF becomes LF.
  private readLine(): Buffer | undefined {
    if (this.offset >= this.input.length) {
      this.lineNumber++;
      return undefined;
    }
    const end = this.input.indexOf(NEWLINE, this.offset);
    let line = this.input.subarray(this.offset, end < 0 ? this.input.length : end + 1);
    this.offset += line.length;
    this.lineNumber++;
    if (end < 0 && line.at(-1) === CR) line = line.subarray(0, -1);
    const n = line.length;
    if (n >= 2 && line[n - 2] === CR && line[n - 1] === NEWLINE) {
      line = Buffer.concat([line.subarray(0, n - 2), Buffer.from([NEWLINE])]);
    }
    return line;
  }

  /** The next record, or undefined at end of input; throws CsvParseError. */
  readRecord(): string[] | undefined {
    let line: Buffer | undefined;
    do {
      line = this.readLine();
    } while (line !== undefined && line.length === lengthNL(line));
    if (line === undefined) return undefined;

    const recordLine = this.lineNumber;
    const fields: string[] = [];
    let column = 1;
    let lineNumber = this.lineNumber;
    let rest: Buffer = line;
    for (;;) {
      if (rest.length === 0 || rest[0] !== QUOTE) {
        const comma = rest.indexOf(COMMA);
        const field =
          comma >= 0 ? rest.subarray(0, comma) : rest.subarray(0, rest.length - lengthNL(rest));
        const quote = field.indexOf(QUOTE);
        if (quote >= 0)
          throw new CsvParseError(recordLine, this.lineNumber, column + quote, ERR_BARE_QUOTE);
        fields.push(field.toString('utf8'));
        if (comma < 0) break;
        rest = rest.subarray(comma + 1);
        column += comma + 1;
        continue;
      }
      // A quoted field may span lines; `""` is a literal quote.
      rest = rest.subarray(1);
      column += 1;
      const parts: Buffer[] = [];
      let closed = false;
      while (!closed) {
        const quote = rest.indexOf(QUOTE);
        if (quote >= 0) {
          parts.push(rest.subarray(0, quote));
          rest = rest.subarray(quote + 1);
          column += quote + 1;
          if (rest[0] === QUOTE) {
            parts.push(rest.subarray(0, 1));
            rest = rest.subarray(1);
            column += 1;
          } else if (rest[0] === COMMA) {
            rest = rest.subarray(1);
            column += 1;
            closed = true;
          } else if (lengthNL(rest) === rest.length) {
            fields.push(Buffer.concat(parts).toString('utf8'));
            return this.checkFieldCount(fields, recordLine);
          } else {
            throw new CsvParseError(recordLine, this.lineNumber, column - 1, ERR_QUOTE);
          }
        } else if (rest.length > 0) {
          parts.push(rest);
          column += rest.length;
          rest = this.readLine() ?? EMPTY;
          if (rest.length > 0) {
            lineNumber++;
            column = 1;
          }
        } else {
          throw new CsvParseError(recordLine, lineNumber, column, ERR_QUOTE);
        }
      }
      fields.push(Buffer.concat(parts).toString('utf8'));
    }
    return this.checkFieldCount(fields, recordLine);
  }

  private checkFieldCount(fields: string[], recordLine: number): string[] {
    if (this.fieldsPerRecord === 0) this.fieldsPerRecord = fields.length;
    else if (fields.length !== this.fieldsPerRecord) {
      throw new CsvParseError(recordLine, recordLine, 1, ERR_FIELD_COUNT);
    }
    return fields;
  }
}

// Despite its name, SplitWithEscapeCSV escapes with RFC 4180 quotes, not '\':
// `"10 Downing Street, Westminster",Manchester` is two values.

/** cert-manager's SplitWithEscapeCSV: the text as exactly one record of Go encoding/csv. */
export function splitCsvRecord(text: string): CsvSplit {
  const reader = new CsvReader(Buffer.from(text, 'utf8'));
  const records: string[][] = [];
  try {
    for (let record = reader.readRecord(); record; record = reader.readRecord()) {
      records.push(record);
    }
  } catch (err) {
    // The reader throws nothing else: its input is an in-memory buffer.
    const reason = (err as CsvParseError).describe();
    return { ok: false, message: `failed to parse ${goQuoteValue(text)} as CSV: ${reason}` };
  }
  const [first, second] = records;
  if (first === undefined)
    return { ok: false, message: `no values found after parsing ${goQuoteValue(text)}` };
  if (second !== undefined) {
    return {
      ok: false,
      message: `refusing to use ${goQuoteValue(text)} as input as it parses as multiple lines of CSV`,
    };
  }
  return { ok: true, values: first };
}
