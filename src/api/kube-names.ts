// Kubernetes' name rules (apimachinery's util/validation) and every wording of them: one
// pattern and one limit per rule, and each message written once.
//
// Two families of messages, on purpose:
// - Go's: the lists kube-apiserver answers with, word for word (RegexError's double spaces
//   included), for the admission rules and the fake API server, which speak as kube-apiserver.
// - ours: one sentence naming the pattern and the limit, for places that report one problem
//   about one value (the store, flags, NAMESPACE/NAME, Certificate and volume attributes).

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const DNS1123_LABEL_PATTERN = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_PATTERN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_PATTERN = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const QUALIFIED_NAME_PATTERN = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const CONFIG_MAP_KEY_PATTERN = /^[-._a-zA-Z0-9]+$/;

/** Kubernetes object names (and label key prefixes) may be this long at most. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Namespaces and label names may be this long at most. */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Service names (DNS-1035 labels) may be this long at most. */
export const DNS1035_LABEL_MAX_LENGTH = 63;
/** The name part of a label or annotation key, and a label value, may be this long at most. */
export const QUALIFIED_NAME_MAX_LENGTH = 63;
/** A ConfigMap's (or Secret's) data key may be this long at most. */
export const CONFIG_MAP_KEY_MAX_LENGTH = 253;

/** Go's len() of a string: its UTF-8 bytes, which is what every Kubernetes length limit counts. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

// The predicates check the length first so that no regular expression runs over a long value.
// The patterns are ASCII, so a value they match has as many characters as UTF-8 bytes.

/** True for a lowercase RFC 1123 subdomain: the rule for most object names. */
export function isDns1123Subdomain(text: string): boolean {
  return text.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && DNS1123_SUBDOMAIN_PATTERN.test(text);
}

/** True for a lowercase RFC 1123 label: the rule for namespace names. */
export function isDns1123Label(text: string): boolean {
  return text.length <= DNS1123_LABEL_MAX_LENGTH && DNS1123_LABEL_PATTERN.test(text);
}

/** True for a DNS-1035 label (an RFC 1123 label starting with a letter): Service names, CRD kinds. */
export function isDns1035Label(text: string): boolean {
  return text.length <= DNS1035_LABEL_MAX_LENGTH && DNS1035_LABEL_PATTERN.test(text);
}

/** True for a CustomResourceDefinition's kind: a DNS-1035 label once lower-cased. */
export function isResourceKind(kind: string): boolean {
  return isDns1035Label(kind.toLowerCase());
}

/** True for the name part of a qualified name (label and annotation keys), never empty. */
export function isQualifiedNamePart(text: string): boolean {
  return text.length <= QUALIFIED_NAME_MAX_LENGTH && QUALIFIED_NAME_PATTERN.test(text);
}

/** True for a label value (Go's IsValidLabelValue): empty, or shaped as a qualified name part. */
export function isLabelValue(text: string): boolean {
  return text === '' || isQualifiedNamePart(text);
}

/** True for a ConfigMap data key's characters (Go's IsConfigMapKey without its limit and dot rule). */
export function hasConfigMapKeyCharacters(text: string): boolean {
  return CONFIG_MAP_KEY_PATTERN.test(text);
}

/** True for '.', '..' or a key starting with '..', which no ConfigMap key may be (Go's hasChDirPrefix). */
export function isDotDirectoryKey(text: string): boolean {
  return text === '.' || text.startsWith('..');
}

// Go's messages (validation.go's *ErrMsg constants).
const DNS1123_LABEL_ERROR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_ERROR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_ERROR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
/** Go's message for a qualified name part that breaks the pattern (without RegexError's tail). */
export const QUALIFIED_NAME_ERROR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/** Go's message for a ConfigMap key with other characters. */
export const CONFIG_MAP_KEY_ERROR =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
/** Go's message for a qualified name with `/` but nothing before it. */
export const EMPTY_PREFIX_ERROR = 'prefix part must be non-empty';
/** Go's message for a qualified name with nothing after its `/` (or nothing at all). */
export const EMPTY_NAME_ERROR = 'name part must be non-empty';

/** Go's validation.RegexError with examples: msg, the examples and the regex (with Go's double spaces). */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  const listed = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${listed}regex used for validation is '${fmt}')`;
}

/** Go's validation.MaxLenError. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** Go's IsDNS1123Label: why value is no DNS label, none when it is one. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) {
    errors.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  }
  if (!DNS1123_LABEL_PATTERN.test(value)) {
    // A valid subdomain that is no label can only hold dots: Go says so instead.
    errors.push(
      DNS1123_SUBDOMAIN_PATTERN.test(value)
        ? 'must not contain dots'
        : regexError(DNS1123_LABEL_ERROR, DNS1123_LABEL_FMT, 'my-name', '123-abc'),
    );
  }
  return errors;
}

/** Go's IsDNS1123Subdomain: why value is no DNS subdomain, none when it is one. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    errors.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  }
  if (!DNS1123_SUBDOMAIN_PATTERN.test(value)) {
    errors.push(regexError(DNS1123_SUBDOMAIN_ERROR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errors;
}

/** Go's IsDNS1035Label: why value is no DNS-1035 label, none when it is one. */
export function dns1035LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) {
    errors.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  }
  if (!DNS1035_LABEL_PATTERN.test(value)) {
    errors.push(regexError(DNS1035_LABEL_ERROR, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  }
  return errors;
}

/**
 * Go's NameIsDNSSubdomain: a prefix (generateName) may end in '-', which a name may not. Go's
 * maskTrailingDash swaps the last two characters for one 'a'; so does this.
 */
export function nameIsDnsSubdomain(name: string, prefix: boolean): string[] {
  const masked = prefix && name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
  return dns1123SubdomainErrors(masked);
}

/** Go's IsQualifiedName (label keys, annotation keys): `[prefix/]name`. */
export function qualifiedNameErrors(value: string): string[] {
  const nameRegexError = regexError(
    QUALIFIED_NAME_ERROR,
    QUALIFIED_NAME_FMT,
    'MyName',
    'my.name',
    '123-abc',
  );
  const parts = value.split('/');
  if (parts.length > 2) {
    return [
      `a qualified name ${nameRegexError} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  const errors: string[] = [];
  const name = parts.length === 2 ? (parts[1] as string) : value;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix === '') errors.push(EMPTY_PREFIX_ERROR);
    else errors.push(...dns1123SubdomainErrors(prefix).map((e) => `prefix part ${e}`));
  }
  if (name === '') errors.push(EMPTY_NAME_ERROR);
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) {
    errors.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  }
  if (!QUALIFIED_NAME_PATTERN.test(name)) errors.push(`name part ${nameRegexError}`);
  return errors;
}

// Ours: one sentence per rule with its limit.

/** A name that is no DNS-1123 subdomain, as the store, flags and Certificate validation say it. */
export const DNS1123_SUBDOMAIN_MESSAGE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', must start and end with an alphanumeric character, and be at most ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`;

/** A namespace that is no DNS-1123 label, as the store, flags and NAMESPACE/NAME say it. */
export const DNS1123_LABEL_MESSAGE = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', start and end with an alphanumeric character, and be at most ${DNS1123_LABEL_MAX_LENGTH} characters`;

/** A Service name that is no DNS-1035 label, as flags say it. */
export const DNS1035_LABEL_MESSAGE = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, end with an alphanumeric character, and be at most ${DNS1035_LABEL_MAX_LENGTH} characters`;

/** Go's label message and the limit: the detail of a volume attribute that is no namespace. */
export const DNS1123_LABEL_RULE = `${DNS1123_LABEL_ERROR}, at most ${DNS1123_LABEL_MAX_LENGTH} characters`;

/** Go's subdomain message and the limit: the detail of a volume attribute that is no object name. */
export const DNS1123_SUBDOMAIN_RULE = `${DNS1123_SUBDOMAIN_ERROR}, at most ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`;

/** The subdomain rule's name alone, for short messages (label selectors, ClusterTrustBundle names). */
export const DNS1123_SUBDOMAIN = 'a lowercase RFC 1123 subdomain';

/** A key prefix that is no DNS-1123 subdomain (the length said apart), as annotation keys say it. */
export const DNS1123_SUBDOMAIN_PREFIX_RULE = `${DNS1123_SUBDOMAIN}: alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character`;

/** A kind that is no CustomResourceDefinition's kind, as volume attributes say it. */
export const RESOURCE_KIND_RULE = `must be a resource kind: a letter, then letters, digits or '-', at most ${DNS1035_LABEL_MAX_LENGTH} characters`;

/** A ConfigMap key that is a dot directory, as volume attributes say it. */
export const CONFIG_MAP_KEY_DOTS_RULE = "must not be '.' or '..' nor start with '..'";

/** What a label value or key name is made of, as label selectors say it after the limit. */
export const QUALIFIED_NAME_CHARACTERS =
  "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric";
