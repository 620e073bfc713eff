import { goQuoteValue } from '../base/go-text.js';

/** The variables csi-driver offers, in the order its error message lists them. */
export const VARIABLE_NAMES = [
  'POD_NAME',
  'POD_NAMESPACE',
  'POD_UID',
  'SERVICE_ACCOUNT_NAME',
] as const;

export type VariableName = (typeof VARIABLE_NAMES)[number];

/**
 * cert-csi's own variables (csi-driver#17): the pod's first IP (status.podIP) and all of its
 * IPs comma-joined (status.podIPs), offered in ip-sans only (dns-names refuses them).
 */
export const POD_IP_VARIABLE_NAMES = ['POD_IP', 'POD_IPS'] as const;

/** The variables one attribute may use, by name, in the order its error message lists them. */
export type Variables = Readonly<Record<string, string>>;

const MAX_LISTED_NAMES = 3;

export type Expansion = { ok: true; value: string } | { ok: false; message: string };

const SPECIAL = '*#$@!?-0123456789';
const isSpecial = (ch: string | undefined): boolean => ch !== undefined && SPECIAL.includes(ch);
const isNameChar = (ch: string | undefined): boolean =>
  ch !== undefined && /^[A-Za-z0-9_]$/.test(ch);

// os.Expand's getShellName: the name after a '$' and how many characters it spans.
// An empty name with a non-zero width is bad syntax that os.Expand silently eats.
function shellName(s: string): { name: string; width: number } {
  if (s[0] === '{') {
    if (s.length > 2 && isSpecial(s[1]) && s[2] === '}') return { name: s.slice(1, 2), width: 3 };
    const close = s.indexOf('}', 1);
    if (close === 1) return { name: '', width: 2 };
    if (close < 0) return { name: '', width: 1 };
    return { name: s.slice(1, close), width: close + 1 };
  }
  if (isSpecial(s[0])) return { name: s.slice(0, 1), width: 1 };
  let i = 0;
  while (isNameChar(s[i])) i++;
  return { name: s.slice(0, i), width: i };
}

/** The names text refers to with `$NAME` or `${NAME}`, in order, as os.Expand reads them. */
export function referencedVariables(text: string): string[] {
  const names: string[] = [];
  scan(text, (name) => {
    names.push(name);
    return '';
  });
  return names;
}

/** Expands `$NAME` and `${NAME}` like Go's os.Expand; other names are errors, in csi-driver's words. */
export function expandVariables(text: string, variables: Variables): Expansion {
  const undefinedNames: string[] = [];
  const known = Object.keys(variables);
  const out = scan(text, (name) => {
    if (Object.hasOwn(variables, name)) return variables[name] as string;
    undefinedNames.push(name);
    return '';
  });
  if (undefinedNames.length > 0) {
    // A text of thousands of `$x` would otherwise make a message of thousands of names.
    const listed = undefinedNames
      .slice(0, MAX_LISTED_NAMES)
      .map((n) => `undefined variable ${goQuoteValue(n)}`);
    const more = undefinedNames.length - MAX_LISTED_NAMES;
    if (more > 0) listed.push(`and ${more} more`);
    return {
      ok: false,
      message: `${listed.join(', ')}, known variables: [${known.join(' ')}]`,
    };
  }
  return { ok: true, value: out };
}

// os.Expand's walk: each named reference is replaced by what value gives for it.
function scan(text: string, value: (name: string) => string): string {
  let out = '';
  let copied = 0;
  for (let j = 0; j < text.length; j++) {
    // A '$' that ends the text is literal.
    if (text[j] !== '$' || j + 1 >= text.length) continue;
    out += text.slice(copied, j);
    const { name, width } = shellName(text.slice(j + 1));
    if (name === '' && width === 0) out += '$';
    else if (name !== '') out += value(name);
    j += width;
    copied = j + 1;
  }
  return out + text.slice(copied);
}
