import {
  DNS1123_SUBDOMAIN,
  isDns1123Subdomain,
  isLabelValue,
  isQualifiedNamePart,
  QUALIFIED_NAME_CHARACTERS,
  QUALIFIED_NAME_MAX_LENGTH,
} from '../api/kube-names.js';
import { StoreError } from './errors.js';

export type LabelOperator =
  | 'exists'
  | 'doesNotExist'
  | 'equals'
  | 'notEquals'
  | 'in'
  | 'notIn'
  | 'greaterThan'
  | 'lessThan';

/** One comma-separated term of a selector; a selector matches when all of them do. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/** A parsed label selector. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** True when labels satisfy every requirement (an empty selector matches everything). */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

type TokenKind =
  | 'identifier'
  | '='
  | '=='
  | '!='
  | '!'
  | '('
  | ')'
  | ','
  | '>'
  | '<'
  | 'in'
  | 'notin'
  | 'end';

interface Token {
  kind: TokenKind;
  text: string;
  position: number;
}

const SYMBOLS = new Set(['=', '!', '(', ')', ',', '>', '<']);
const INTEGER = /^-?[0-9]+$/;

/**
 * Parses Kubernetes label selector syntax (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
 * `a`, `!a`, `a>1`, `a<1`; comma means AND) as the API server does, including its
 * validation of keys and values. Bad syntax is a StoreError 'BadRequest' (HTTP 400, as the
 * API server answers a list or watch with one) naming the bad part.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = new SelectorParser(text).parse();
  return {
    requirements,
    matches: (labels) =>
      requirements.every((requirement) => matchesRequirement(requirement, labels)),
  };
}

function matchesRequirement(
  requirement: LabelRequirement,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const value =
    labels && Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'exists':
      return value !== undefined;
    case 'doesNotExist':
      return value === undefined;
    case 'equals':
    case 'in':
      return value !== undefined && requirement.values.includes(value);
    case 'notEquals':
    case 'notIn':
      return value === undefined || !requirement.values.includes(value);
    case 'greaterThan':
    case 'lessThan': {
      if (value === undefined || !INTEGER.test(value)) return false;
      const actual = BigInt(value);
      const bound = BigInt(requirement.values[0] ?? '0');
      return requirement.operator === 'greaterThan' ? actual > bound : actual < bound;
    }
  }
}

class SelectorParser {
  private readonly tokens: Token[];
  private index = 0;

  constructor(private readonly text: string) {
    this.tokens = this.lex();
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    if (this.peek().kind === 'end') return requirements;
    for (;;) {
      requirements.push(this.requirement());
      const separator = this.next();
      if (separator.kind === 'end') return requirements;
      if (separator.kind !== ',') this.fail(separator, "',' or the end of the selector");
    }
  }

  private requirement(): LabelRequirement {
    if (this.peek().kind === '!') {
      this.next();
      return { key: this.key(), operator: 'doesNotExist', values: [] };
    }
    const key = this.key();
    const operator = this.peek();
    switch (operator.kind) {
      case ',':
      case 'end':
        return { key, operator: 'exists', values: [] };
      case '=':
      case '==':
      case '!=':
        this.next();
        return {
          key,
          operator: operator.kind === '!=' ? 'notEquals' : 'equals',
          values: [this.exactValue()],
        };
      case 'in':
      case 'notin':
        this.next();
        return { key, operator: operator.kind === 'in' ? 'in' : 'notIn', values: this.valueSet() };
      case '>':
      case '<': {
        this.next();
        const bound = this.next();
        if (bound.kind !== 'identifier' || !INTEGER.test(bound.text)) {
          this.fail(bound, `an integer after '${operator.kind}'`);
        }
        return {
          key,
          operator: operator.kind === '>' ? 'greaterThan' : 'lessThan',
          values: [bound.text],
        };
      }
      default:
        return this.fail(
          operator,
          `an operator (=, ==, !=, in, notin, >, <), ',' or the end after key "${key}"`,
        );
    }
  }

  private key(): string {
    const token = this.next();
    if (token.kind !== 'identifier') this.fail(token, 'a label key');
    const problem = labelKeyProblem(token.text);
    if (problem)
      this.invalid(`label key "${token.text}" at position ${token.position}: ${problem}`);
    return token.text;
  }

  // `a=` and `a=,b` select an empty value, as the API server allows.
  private exactValue(): string {
    const token = this.peek();
    if (token.kind === ',' || token.kind === 'end') return '';
    this.next();
    if (token.kind !== 'identifier') this.fail(token, 'a label value');
    return this.checkedValue(token);
  }

  // `(a,,b)` holds an empty value and `()` means {""}, as in the API server's parser.
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') this.fail(open, "'('");
    const values: string[] = [];
    let expectValue = true;
    for (;;) {
      const token = this.next();
      if (token.kind === 'identifier' && expectValue) {
        values.push(this.checkedValue(token));
        expectValue = false;
      } else if (token.kind === ',' || token.kind === ')') {
        if (expectValue) values.push('');
        if (token.kind === ')') return values;
        expectValue = true;
      } else {
        this.fail(token, expectValue ? "a label value, ',' or ')'" : "',' or ')'");
      }
    }
  }

  private checkedValue(token: Token): string {
    if (!isLabelValue(token.text)) {
      this.invalid(
        `label value "${token.text}" at position ${token.position}: must be at most ${QUALIFIED_NAME_MAX_LENGTH} characters of ${QUALIFIED_NAME_CHARACTERS}`,
      );
    }
    return token.text;
  }

  private peek(): Token {
    return this.tokens[this.index] ?? this.endToken();
  }

  private next(): Token {
    const token = this.peek();
    if (this.index < this.tokens.length) this.index++;
    return token;
  }

  private endToken(): Token {
    return { kind: 'end', text: '', position: this.text.length };
  }

  private fail(token: Token, expected: string): never {
    const found = token.kind === 'end' ? 'the end of the selector' : `"${token.text}"`;
    return this.invalid(`found ${found} at position ${token.position}, expected ${expected}`);
  }

  private invalid(detail: string): never {
    throw new StoreError('BadRequest', `invalid label selector "${this.text}": ${detail}`);
  }

  private lex(): Token[] {
    const tokens: Token[] = [];
    const text = this.text;
    let i = 0;
    while (i < text.length) {
      const char = text.charAt(i);
      if (/\s/.test(char)) {
        i++;
      } else if (SYMBOLS.has(char)) {
        const pair = text.slice(i, i + 2);
        if (pair === '==' || pair === '!=') {
          tokens.push({ kind: pair, text: pair, position: i });
          i += 2;
        } else {
          tokens.push({ kind: char as TokenKind, text: char, position: i });
          i++;
        }
      } else {
        const start = i;
        while (i < text.length && !SYMBOLS.has(text.charAt(i)) && !/\s/.test(text.charAt(i))) i++;
        const word = text.slice(start, i);
        const kind = word === 'in' || word === 'notin' ? word : 'identifier';
        tokens.push({ kind, text: word, position: start });
      }
    }
    return tokens;
  }
}

/** Why key is not a valid label key (`[prefix/]name`), or undefined when it is. */
function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && !isDns1123Subdomain(prefix)) {
    return `the prefix must be ${DNS1123_SUBDOMAIN}`;
  }
  if (!isQualifiedNamePart(name)) {
    return `the name must be 1-${QUALIFIED_NAME_MAX_LENGTH} characters of ${QUALIFIED_NAME_CHARACTERS}`;
  }
  return undefined;
}
