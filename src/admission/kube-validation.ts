import type { Condition } from '../api/conditions.js';
import {
  duplicateField,
  invalidField,
  requiredField,
  tooLongField,
  unsupportedField,
} from '../base/field-error.js';
import { FieldErrorList } from '../base/field-error-list.js';

// apimachinery's generic validators (k8s.io/apimachinery/pkg/util/validation and
// pkg/apis/meta/v1/validation), with their messages, for the rules that reuse them: names,
// qualified keys, signer names, metav1.Conditions. Messages follow the Go code word for word,
// double spaces of RegexError included, so a client sees what kube-apiserver would say.

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_LABEL_ERROR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_ERROR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const QUALIFIED_NAME_ERROR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const CONDITION_REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const CONDITION_REASON = new RegExp(`^${CONDITION_REASON_FMT}$`);
const CONDITION_REASON_ERROR =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

/** The longest DNS-1123 subdomain and label. */
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1123_LABEL_MAX = 63;
const QUALIFIED_NAME_MAX = 63;
const CONDITION_REASON_MAX = 1024;
const CONDITION_MESSAGE_MAX = 32 * 1024;
// The longest signer name: a domain, '/', and a path holding `<namespace>.<name>`.
const SIGNER_NAME_MAX = DNS1123_SUBDOMAIN_MAX + 1 + DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1;

/** Go's len() of a string: its UTF-8 bytes, which is what every Kubernetes length limit counts. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The detail of a timestamp that is not RFC 3339 (ours: the API server fails to decode it). */
export const RFC3339_DETAIL = 'must be an RFC 3339 time, e.g. 2026-03-02T10:00:00Z';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A metav1.Time from JSON (RFC 3339) as epoch milliseconds; undefined when absent, NaN when malformed. */
export function parseKubeTime(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  return RFC3339.test(text) ? Date.parse(text) : Number.NaN;
}

/** Go's validation.RegexError with examples: msg, the examples and the regex (with Go's double spaces). */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  const listed = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${listed}regex used for validation is '${fmt}')`;
}

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/**
 * Go's IsDNS1123Label for one dot-separated label of a domain: why it is no DNS label. (Go
 * words a dotted value differently; a label split at the dots never has one.)
 */
function domainLabelErrors(label: string): string[] {
  const errors: string[] = [];
  if (byteLength(label) > DNS1123_LABEL_MAX) errors.push(maxLenError(DNS1123_LABEL_MAX));
  if (!DNS1123_LABEL.test(label)) {
    errors.push(regexError(DNS1123_LABEL_ERROR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errors;
}

/** Go's IsDNS1123Subdomain: why value is no DNS subdomain, none when it is one. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errors.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push(regexError(DNS1123_SUBDOMAIN_ERROR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
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
  const errors: string[] = [];
  const parts = value.split('/');
  if (parts.length > 2) {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_ERROR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  const name = parts.length === 2 ? (parts[1] as string) : value;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix === '') errors.push('prefix part must be non-empty');
    else errors.push(...dns1123SubdomainErrors(prefix).map((e) => `prefix part ${e}`));
  }
  if (name === '') errors.push('name part must be non-empty');
  else if (byteLength(name) > QUALIFIED_NAME_MAX) {
    errors.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  }
  if (!QUALIFIED_NAME.test(name)) {
    errors.push(
      `name part ${regexError(QUALIFIED_NAME_ERROR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errors;
}

/** True for a signer name reserved by the Kubernetes project (`kubernetes.io` or a subdomain). */
export function isKubernetesSignerName(signerName: string): boolean {
  const host = signerName.split('/')[0] as string;
  return host === 'kubernetes.io' || host.endsWith('.kubernetes.io');
}

/**
 * kube-apiserver's ValidateSignerName (reference pod-certificates.md §2.1): `<domain>/<path>`,
 * the domain two or more DNS labels, the path dot-separated DNS subdomains, 571 characters at
 * most. Field errors at path; none when valid.
 */
export function validateSignerName(path: string, signerName: string): string[] {
  if (signerName === '') return [requiredField(path, '')];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [
      invalidField(
        path,
        signerName,
        "must be a fully qualified domain and path of the form 'example.com/signer-name'",
      ),
    ];
  }
  const [domain, signerPath] = segments as [string, string];
  const errors: string[] = [];
  if (byteLength(domain) > DNS1123_SUBDOMAIN_MAX)
    errors.push(tooLongField(path, DNS1123_SUBDOMAIN_MAX));
  const domainLabels = domain.split('.');
  // Only the first bad label is reported: the others' messages would read the same.
  const badLabel = domainLabels.find((label) => domainLabelErrors(label).length > 0);
  if (badLabel !== undefined) {
    for (const problem of domainLabelErrors(badLabel)) {
      errors.push(invalidField(path, domain, `validating label "${badLabel}": ${problem}`));
    }
  }
  if (domainLabels.length < 2) {
    errors.push(
      invalidField(path, domain, 'should be a domain with at least two segments separated by dots'),
    );
  }
  const badSegment = signerPath.split('.').find((s) => dns1123SubdomainErrors(s).length > 0);
  if (badSegment !== undefined) {
    for (const problem of dns1123SubdomainErrors(badSegment)) {
      errors.push(invalidField(path, signerPath, `validating label "${badSegment}": ${problem}`));
    }
  }
  if (byteLength(signerName) > SIGNER_NAME_MAX) errors.push(tooLongField(path, SIGNER_NAME_MAX));
  return errors;
}

/** metav1 ValidateConditions: unique types, each a qualified name, status, time, reason, message. */
export function validateConditions(conditions: readonly Condition[], path: string): string[] {
  const errors = new FieldErrorList();
  const seen = new Set<string>();
  conditions.forEach((condition, i) => {
    const at = `${path}[${i}]`;
    const type = condition.type ?? '';
    if (seen.has(type)) errors.addItem(path, () => duplicateField(`${at}.type`, type));
    seen.add(type);
    for (const problem of qualifiedNameErrors(type)) {
      errors.addItem(path, () => invalidField(`${at}.type`, type, problem));
    }
    const status = condition.status ?? '';
    if (!['False', 'True', 'Unknown'].includes(status)) {
      errors.addItem(path, () =>
        unsupportedField(`${at}.status`, status, ['False', 'True', 'Unknown']),
      );
    }
    const generation = condition.observedGeneration ?? 0;
    if (generation < 0) {
      errors.addItem(path, () =>
        invalidField(
          `${at}.observedGeneration`,
          generation,
          'must be greater than or equal to zero',
        ),
      );
    }
    const transition = parseKubeTime(condition.lastTransitionTime);
    if (transition === undefined) {
      errors.addItem(path, () => requiredField(`${at}.lastTransitionTime`, 'must be set'));
    } else if (Number.isNaN(transition)) {
      // The API server cannot even decode such a body; no Go message exists for it.
      errors.addItem(path, () =>
        invalidField(
          `${at}.lastTransitionTime`,
          String(condition.lastTransitionTime),
          RFC3339_DETAIL,
        ),
      );
    }
    const reason = condition.reason ?? '';
    if (reason === '') errors.addItem(path, () => requiredField(`${at}.reason`, 'must be set'));
    else {
      if (!CONDITION_REASON.test(reason)) {
        errors.addItem(path, () =>
          invalidField(
            `${at}.reason`,
            reason,
            regexError(
              CONDITION_REASON_ERROR,
              CONDITION_REASON_FMT,
              'my_name',
              'MY_NAME',
              'MyName',
              'ReasonA,ReasonB',
              'ReasonA:ReasonB',
            ),
          ),
        );
      }
      if (byteLength(reason) > CONDITION_REASON_MAX) {
        errors.addItem(path, () => tooLongField(`${at}.reason`, CONDITION_REASON_MAX));
      }
    }
    if (byteLength(condition.message ?? '') > CONDITION_MESSAGE_MAX) {
      errors.addItem(path, () => tooLongField(`${at}.message`, CONDITION_MESSAGE_MAX));
    }
  });
  return errors.toArray();
}
