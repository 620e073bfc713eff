import { parseArgs } from 'node:util';
import { quoted, shortened } from '../../api/echoed-value.js';
import { didYouMean } from '../../base/edit-distance.js';
import { UsageError } from './usage-error.js';

/**
 * How a flag takes its value: `string` one value (the last one given wins), `boolean` none,
 * `multiple` a value each time it is given, kept in order.
 */
export type FlagType = 'string' | 'boolean' | 'multiple';

/** One flag of a command: how it is parsed and how its help reads. */
export interface Flag {
  readonly type: FlagType;
  /** A one-letter alias (`-h`). */
  readonly short?: string;
  /** The value's name in the help (`DIR`, `DURATION`); none for a boolean. */
  readonly value?: string;
  /** The value when the flag is not given. */
  readonly default?: string | boolean | readonly string[];
  /**
   * What the flag does, as its help shows it: the first line beside the flag, any further
   * lines below that one (broken where the help breaks them).
   */
  readonly description: string | readonly string[];
  /** The heading the help lists the flag under; `Flags` when not given. */
  readonly group?: string;
}

/** A command's flags by long name (without `--`), in the order its help lists them. */
export type FlagTable = { readonly [name: string]: Flag };

/** The heading of a flag that names none. */
const DEFAULT_GROUP = 'Flags';

/** The column flag descriptions start at, unless a command's help sets another. */
export const DESCRIPTION_COLUMN = 33;

// parseArgs's option for one flag, with the literal types kept: node's typings then give the
// parsed values their types (a flag with a default is never undefined, a multiple one an array).
type OptionOf<F extends Flag> = (F['type'] extends 'boolean'
  ? { type: 'boolean' }
  : { type: 'string' }) &
  (F['type'] extends 'multiple' ? { multiple: true } : unknown) &
  (F extends { short: string } ? { short: string } : unknown) &
  (F extends { default: infer D }
    ? { default: D extends readonly string[] ? string[] : D }
    : unknown);

/** The node:util parseArgs options of a flag table. */
export type FlagOptions<T extends FlagTable> = { -readonly [K in keyof T]: OptionOf<T[K]> };

/** The values parseArgs gives for a flag table. */
export type FlagValues<T extends FlagTable> = ReturnType<
  typeof parseArgs<{ options: FlagOptions<T>; tokens: true }>
>['values'];

/** What a command line sets: the values, and which flags it gave (defaults aside). */
export interface ParsedFlags<T extends FlagTable> {
  values: FlagValues<T>;
  /** The long names of the flags given on the command line; some flags only fit one form. */
  explicit: ReadonlySet<string>;
  /** The arguments that are not flags (none unless the command takes them). */
  positionals: string[];
}

/** The node:util parseArgs options of a flag table. */
export function flagOptions<const T extends FlagTable>(table: T): FlagOptions<T> {
  const options: Record<string, object> = {};
  for (const [name, flag] of Object.entries(table)) {
    options[name] = {
      type: flag.type === 'boolean' ? 'boolean' : 'string',
      ...(flag.type === 'multiple' ? { multiple: true } : {}),
      ...(flag.short === undefined ? {} : { short: flag.short }),
      ...(flag.default === undefined
        ? {}
        : { default: Array.isArray(flag.default) ? [...flag.default] : flag.default }),
    };
  }
  // Built key by key from the table, which FlagOptions maps the same way.
  return options as FlagOptions<T>;
}

/**
 * Parses args by the flag table, strictly: an unknown flag (with the nearest known one as a "did
 * you mean"), a missing value, a value for a boolean or a stray argument (unless positionals
 * are taken, as `inspect secret NS/NAME` takes one) is a UsageError naming it.
 */
export function parseFlags<const T extends FlagTable>(
  table: T,
  args: readonly string[],
  options: { positionals?: boolean } = {},
): ParsedFlags<T> {
  checkTokens(table, args, options.positionals === true);
  // checkTokens refuses all that the strict parse would, so this parse does not throw.
  const parsed = parseArgs({
    args: [...args],
    options: flagOptions(table),
    tokens: true,
    allowPositionals: options.positionals === true,
  });
  const explicit = new Set(
    parsed.tokens.flatMap((t) => (t.kind === 'option' && t.name !== undefined ? [t.name] : [])),
  );
  // parseArgs types its result from the options it is given; FlagValues names that same type.
  return { values: parsed.values as FlagValues<T>, explicit, positionals: parsed.positionals };
}

// The command line read loosely, each flag checked against the table, so that the error says
// what to do in our words rather than parseArgs's.
function checkTokens(table: FlagTable, args: readonly string[], positionals: boolean): void {
  const { tokens } = parseArgs({
    args: [...args],
    options: flagOptions(table),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === 'positional' && !positionals) {
      throw new UsageError(
        `unexpected argument ${quoted(token.value)}: every value follows its flag (--flag VALUE)`,
      );
    }
    if (token.kind !== 'option') continue;
    const flag = Object.hasOwn(table, token.name) ? table[token.name] : undefined;
    if (flag === undefined) {
      const known = Object.keys(table);
      throw new UsageError(
        `unknown flag ${shortened(token.rawName)}${didYouMean(token.name, known, (n) => `--${n}`)}`,
      );
    }
    // A separate value that looks like a flag is most likely one: the value was forgotten.
    const separate = token.inlineValue === false ? token.value : undefined;
    const flagLike = separate !== undefined && separate.length > 1 && separate.startsWith('-');
    if (flag.type !== 'boolean' && (token.value === undefined || flagLike)) {
      const dashed = flagLike ? `; a value starting with - is written --${token.name}=VALUE` : '';
      throw new UsageError(
        `${token.rawName} needs a value (${token.rawName} ${flag.value})${dashed}`,
      );
    }
    if (flag.type === 'boolean' && token.inlineValue === true) {
      throw new UsageError(`${token.rawName} takes no value`);
    }
  }
}

/** A flag's name in its help: `-h, --help`, `--data-root DIR`. */
export function flagLabel(name: string, flag: Flag): string {
  const short = flag.short === undefined ? '' : `-${flag.short}, `;
  return `${short}--${name}${flag.value === undefined ? '' : ` ${flag.value}`}`;
}

/**
 * The flag list of a command's help: each group under its heading (in the order the table
 * first names it), a blank line between groups; each flag indented by two, its description
 * starting at column (on the next line when the flag leaves no space before it).
 */
export function flagList(table: FlagTable, column: number = DESCRIPTION_COLUMN): string {
  const groups = new Map<string, string[]>();
  for (const [name, flag] of Object.entries(table)) {
    const group = flag.group ?? DEFAULT_GROUP;
    const lines = groups.get(group) ?? [];
    groups.set(group, lines);
    const label = `  ${flagLabel(name, flag)}`;
    const [first = '', ...rest] =
      typeof flag.description === 'string' ? [flag.description] : flag.description;
    const indent = ' '.repeat(column);
    lines.push(
      label.length < column ? label.padEnd(column) + first : `${label}\n${indent}${first}`,
    );
    for (const line of rest) lines.push(indent + line);
  }
  return [...groups].map(([group, lines]) => `${group}:\n${lines.join('\n')}\n`).join('\n');
}

/** The flags of table listed under heading (a shared set of flags placed in a command's help). */
export function inGroup<const T extends FlagTable>(
  group: string,
  table: T,
): { [K in keyof T]: T[K] & { group: string } } {
  const grouped: Record<string, Flag> = {};
  for (const [name, flag] of Object.entries(table)) grouped[name] = { ...flag, group };
  // Every flag of table, each with the group set: what the mapped type says.
  return grouped as { [K in keyof T]: T[K] & { group: string } };
}

/** The `--help` flag every command has. */
export const HELP_FLAG = {
  help: { type: 'boolean', short: 'h', description: 'show this help' },
} as const satisfies FlagTable;
