import type { CertificateRequest, CertificateRequestSpec } from '../api/certificate-request.js';
import { CRCondition } from '../api/certificate-request.js';
import type { Condition } from '../api/conditions.js';
import { ECHO_LIMIT, shortened } from '../api/echoed-value.js';
import { forbiddenField, invalidField, requiredField } from '../base/field-error.js';
import { FieldErrorList, MAX_ERRORS_PER_LIST } from '../base/field-error-list.js';
import { goByteSlice, goList, goQuote, goQuoteValue } from '../base/go-text.js';
import { validateIssuerRef } from '../certificates/issuer-ref-validation.js';
import { CsrSignatureError, type ParsedCsr, parseCsrSync } from '../pki/csr.js';
import { isStandardBase64 } from '../pki/pem.js';
import {
  extKeyUsageNames,
  goKnownExtKeyUsages,
  isKnownUsage,
  keyUsageNames,
  usagesToExtensions,
} from '../pki/usages.js';
import { jsonEqual } from '../store/json-value.js';

// cert-manager's webhook validation of CertificateRequests (its
// internal/apis/certmanager/validation/certificaterequest.go), with its messages and paths.

const CONDITIONS = 'status.conditions';
const APPROVAL_TYPES = [CRCondition.Approved, CRCondition.Denied] as const;
// Annotations under these prefixes belong to cert-manager (certmanager.GroupName, acme.GroupName).
const PROTECTED_ANNOTATION_PREFIXES = ['cert-manager.io', 'acme.cert-manager.io'];

/** printKeyUsage: `[ 'a', 'b' ]`, or `[]` when empty. */
function printUsages(names: readonly string[]): string {
  return names.length === 0 ? '[]' : `[ ${names.map((n) => `'${n}'`).join(', ')} ]`;
}

/**
 * Go's `%#v` of a string slice (`[]T{"a", "b"}`), cut as every echoed value is (ECHO_LIMIT
 * characters, then `…(N items)`): only the items shown are quoted, so a list of a million
 * usages costs no more than a short one.
 */
function goSliceValue(type: string, items: readonly string[]): string {
  let text = `${type}{`;
  for (const [i, item] of items.entries()) {
    if (text.length > ECHO_LIMIT) return `${text.slice(0, ECHO_LIMIT)}…(${items.length} items)`;
    text += `${i > 0 ? ', ' : ''}${goQuoteValue(item)}`;
  }
  text += '}';
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…(${items.length} items)` : text;
}

/** Go's `%v` of values (`[a b]`), each shortened, at most MAX_ERRORS_PER_LIST of them and how many more. */
function listedValues(values: readonly string[]): string {
  const shown = goList(values.slice(0, MAX_ERRORS_PER_LIST).map(shortened));
  const more = values.length - MAX_ERRORS_PER_LIST;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** The first occurrence of each value, in order. */
function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * What is wrong with the CSR against the spec, as CertificateTemplateFromCSRPEM with the
 * BasicConstraints and key usage validators reports it (the first problem only); undefined
 * when it parses, its signature holds and its extensions agree with the spec.
 */
function csrProblem(pem: Buffer, spec: CertificateRequestSpec): string | undefined {
  let csr: ParsedCsr;
  try {
    csr = parseCsrSync(pem);
  } catch (err) {
    // A parse failure is worded by our parser; a bad signature in Go's words.
    return err instanceof CsrSignatureError ? err.reason : (err as Error).message;
  }
  const isCA = spec.isCA ?? false;
  if (csr.basicConstraints && csr.basicConstraints.isCA !== isCA)
    return `encoded CSR error: IsCA ${csr.basicConstraints.isCA} does not match expected value ${isCA}`;
  if (csr.keyUsage === undefined && csr.extKeyUsages === undefined) return undefined;
  const expected = usagesToExtensions(spec.usages ?? [], isCA);
  const keyUsage = csr.keyUsage ?? 0;
  if (keyUsage !== expected.keyUsage)
    return `encoded CSR error: the KeyUsages ${printUsages(keyUsageNames(keyUsage))} do not match the expected KeyUsages ${printUsages(keyUsageNames(expected.keyUsage))}`;
  // usagesToExtensions lists the OID `s/mime` and `email protection` share once; so does this.
  const extKeyUsages = unique(goKnownExtKeyUsages(csr.extKeyUsages ?? []));
  if (!jsonEqual(extKeyUsages, expected.extKeyUsages))
    return `encoded CSR error: the ExtKeyUsages ${printUsages(extKeyUsageNames(extKeyUsages))} do not match the expected ExtKeyUsages ${printUsages(extKeyUsageNames(expected.extKeyUsages))}`;
  return undefined;
}

/** validateCertificateRequestSpecRequest: the request is required, the usages known, the CSR sound. */
function requestErrors(spec: CertificateRequestSpec): string[] {
  const request = spec.request ?? '';
  if (request === '') return [requiredField('spec.request', 'must be specified')];
  const usages = spec.usages ?? [];
  const unknown = usages.filter((usage) => !isKnownUsage(usage));
  if (unknown.length > 0) {
    const value = { echoed: goSliceValue('[]certmanager.KeyUsage', usages) };
    return [invalidField('spec.usages', value, `unknown key usages: ${listedValues(unknown)}`)];
  }
  // The API server cannot even decode a bytes field that is not base64.
  if (!isStandardBase64(request))
    return [invalidField('spec.request', request, 'must be base64-encoded bytes')]; // ours
  const pem = Buffer.from(request, 'base64');
  const problem = csrProblem(pem, spec);
  return problem ? [invalidField('spec.request', { echoed: goByteSlice(pem) }, problem)] : [];
}

/** The conditions of one approval type. */
function conditionsOf(request: CertificateRequest, type: string): Condition[] {
  return (request.status?.conditions ?? []).filter((c) => c.type === type);
}

/**
 * ValidateCertificateRequestApprovalCondition: at most one Approved and one Denied condition,
 * each only True, and never both.
 */
function approvalConditionErrors(request: CertificateRequest, errors: FieldErrorList): void {
  for (const type of APPROVAL_TYPES) {
    const found = conditionsOf(request, type);
    const [first] = found;
    if (!first) continue;
    if (found.length > 1)
      errors.add(forbiddenField(CONDITIONS, `multiple ${goQuote(type)} conditions present`));
    else if (first.status !== 'True')
      errors.add(
        invalidField(
          `${CONDITIONS}.${type}`,
          first.status ?? '',
          `${goQuote(type)} condition may only be set to True`,
        ),
      );
  }
  if (
    conditionsOf(request, CRCondition.Approved).length > 0 &&
    conditionsOf(request, CRCondition.Denied).length > 0
  )
    errors.add(
      forbiddenField(CONDITIONS, "both 'Denied' and 'Approved' conditions cannot coexist"),
    );
}

/**
 * cert-manager's create validation of a CertificateRequest:
 * issuerRef, request (known usages; the CSR parses, its signature verifies, its
 * BasicConstraints and key usages agree with isCA and usages) and the approval conditions.
 * Returns field errors, empty when valid. Synchronous: the embedded store runs it in one step.
 */
export function validateCertificateRequestCreate(request: CertificateRequest): string[] {
  const spec = request.spec ?? ({} as CertificateRequestSpec);
  const errors = new FieldErrorList();
  errors.addAll(validateIssuerRef(spec.issuerRef, 'spec'));
  errors.addAll(requestErrors(spec));
  approvalConditionErrors(request, errors);
  return errors.toArray();
}

/** Annotations of `from` under cert-manager's prefixes that `to` lacks or holds differently. */
function changedAnnotations(
  from: CertificateRequest,
  to: CertificateRequest,
  errors: FieldErrorList,
): void {
  const before = from.metadata?.annotations ?? {};
  const after = to.metadata?.annotations ?? {};
  const changed = Object.keys(before)
    .filter((key) => PROTECTED_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix)))
    .filter((key) => !Object.hasOwn(after, key) || after[key] !== before[key])
    .sort();
  for (const key of changed) {
    errors.addItem('metadata.annotations', () =>
      forbiddenField(
        `metadata.annotations.${shortened(key)}`,
        'cannot change cert-manager annotation after creation',
      ),
    );
  }
}

/** A condition as Go's decoded struct holds it, so an absent field equals its zero value. */
function decodedCondition(condition: Condition | undefined): unknown {
  if (!condition) return null;
  return {
    type: condition.type,
    status: condition.status ?? '',
    lastTransitionTime: condition.lastTransitionTime ?? null,
    reason: condition.reason ?? '',
    message: condition.message ?? '',
    observedGeneration: condition.observedGeneration ?? 0,
  };
}

/** A spec as Go's decoded struct holds it (absent strings empty, isCA false, null lists absent). */
function decodedSpec(spec: CertificateRequestSpec | undefined): unknown {
  const s = spec ?? ({} as Partial<CertificateRequestSpec>);
  return {
    request: s.request ?? '',
    issuerRef: {
      name: s.issuerRef?.name ?? '',
      kind: s.issuerRef?.kind ?? '',
      group: s.issuerRef?.group ?? '',
    },
    duration: s.duration ?? null,
    isCA: s.isCA ?? false,
    usages: s.usages ?? null,
    username: s.username ?? '',
    uid: s.uid ?? '',
    groups: s.groups ?? null,
    extra: s.extra ?? null,
  };
}

/**
 * cert-manager's update validation of a CertificateRequest, for
 * updates and status writes alike: cert-manager.io and acme.cert-manager.io annotations
 * unchanged, Approved and Denied unchanged once set, the approval rules of create, and the
 * spec unchanged. Returns field errors, empty when valid.
 */
export function validateCertificateRequestUpdate(
  request: CertificateRequest,
  old: CertificateRequest,
): string[] {
  const errors = new FieldErrorList();
  changedAnnotations(old, request, errors);
  changedAnnotations(request, old, errors);
  for (const type of APPROVAL_TYPES) {
    const before = conditionsOf(old, type)[0];
    if (
      before &&
      !jsonEqual(decodedCondition(before), decodedCondition(conditionsOf(request, type)[0]))
    )
      errors.add(forbiddenField(CONDITIONS, `'${type}' condition may not be modified once set`));
  }
  approvalConditionErrors(request, errors);
  if (!jsonEqual(decodedSpec(request.spec), decodedSpec(old.spec)))
    errors.add(forbiddenField('spec', 'cannot change spec after creation'));
  return errors.toArray();
}
