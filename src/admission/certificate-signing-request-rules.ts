import { X509Certificate } from 'node:crypto';
import {
  type CertificateSigningRequest,
  type CertificateSigningRequestStatus,
  CSR_CONDITION_APPROVED,
  CSR_CONDITION_DENIED,
  CSR_CONDITION_FAILED,
  CSR_KEY_USAGES,
  type CsrCondition,
} from '../api/certificate-signing-request.js';
import { formatTimestamp } from '../api/conditions.js';
import type { UserInfo } from '../api/user-info.js';
import { errorMessage } from '../base/error-message.js';
import {
  duplicateField,
  forbiddenField,
  invalidField,
  requiredField,
  unsupportedField,
} from '../base/field-error.js';
import { FieldErrorList } from '../base/field-error-list.js';
import { goQuote, goQuoteValue } from '../base/go-text.js';
import { validateSignerName } from '../base/signer-name.js';
import { parseCsrSync } from '../pki/csr.js';
import { issuedHere } from '../pki/issued-here.js';
import { decodeGoPemBlocks, isStandardBase64 } from '../pki/pem.js';

// kube-apiserver's registry strategy and validation of CertificateSigningRequests
// (pkg/registry/certificates/certificates/strategy.go, pkg/apis/certificates/validation), as
// pure functions over the object as written and as stored. The admission plugins' signer checks
// (`sign` on a new certificate, `approve` on the approval subresource) need the authorizer and
// live with it; their messages are in signer-authorization.ts.

/** The legacy signer name the v1 API refuses. */
const LEGACY_SIGNER_NAME = 'kubernetes.io/legacy-unknown';
/** spec.expirationSeconds' minimum (10 minutes). */
const MIN_EXPIRATION_SECONDS = 600;
/** The condition types that may only be True, and the two an approver writes. */
const TRUE_ONLY_TYPES = [CSR_CONDITION_APPROVED, CSR_CONDITION_DENIED, CSR_CONDITION_FAILED];
const APPROVAL_TYPES = [CSR_CONDITION_APPROVED, CSR_CONDITION_DENIED];
const SORTED_USAGES = [...CSR_KEY_USAGES].sort();

/**
 * PrepareForCreate: the requester's identity replaces whatever spec.username, uid, groups and
 * extra said, and the status is wiped (nobody creates an approved request).
 */
export function withCsrRequester(
  csr: CertificateSigningRequest,
  user: UserInfo,
): CertificateSigningRequest {
  const { status: _status, ...rest } = csr;
  const { username: _u, uid: _i, groups: _g, extra: _e, ...spec } = csr.spec ?? {};
  return {
    ...rest,
    spec: {
      ...(spec as CertificateSigningRequest['spec']),
      username: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.groups ? { groups: [...user.groups] } : {}),
      ...(user.extra && Object.keys(user.extra).length > 0 ? { extra: { ...user.extra } } : {}),
    },
  };
}

/**
 * The create validation of the spec that needs no crypto: usages (required, known, once each),
 * the signer name (not the legacy one) and expirationSeconds (at least 600).
 */
export function csrSpecErrors(csr: CertificateSigningRequest): string[] {
  const spec = csr.spec ?? ({} as CertificateSigningRequest['spec']);
  const errors = new FieldErrorList();
  const usages = spec.usages ?? [];
  if (usages.length === 0) errors.add(requiredField('spec.usages', 'usages must be provided'));
  usages.forEach((usage, i) => {
    if (!CSR_KEY_USAGES.includes(usage)) {
      errors.addItem('spec.usages', () =>
        unsupportedField(`spec.usages[${i}]`, usage, SORTED_USAGES),
      );
    }
  });
  const seen = new Set<string>();
  usages.forEach((usage, i) => {
    if (seen.has(usage))
      errors.addItem('spec.usages', () => duplicateField(`spec.usages[${i}]`, usage));
    seen.add(usage);
  });
  const signerName = spec.signerName ?? '';
  if (signerName === LEGACY_SIGNER_NAME) {
    errors.add(
      invalidField(
        'spec.signerName',
        signerName,
        'the legacy signerName is not allowed via this API version',
      ),
    );
  } else if (signerName === '') {
    errors.add(requiredField('spec.signerName', 'signerName must be provided'));
  } else {
    errors.addAll(validateSignerName('spec.signerName', signerName));
  }
  const seconds = spec.expirationSeconds;
  if (typeof seconds === 'number' && seconds < MIN_EXPIRATION_SECONDS) {
    errors.add(
      invalidField(
        'spec.expirationSeconds',
        seconds,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  }
  return errors.toArray();
}

/**
 * The whole create validation (ValidateCertificateSigningRequestCreate) of a request prepared
 * by withCsrRequester: spec.request must be the base64 of a PEM CERTIFICATE REQUEST whose
 * signature verifies, then csrSpecErrors.
 */
export function validateCsrCreate(csr: CertificateSigningRequest): string[] {
  const request = csr.spec?.request ?? '';
  const errors: string[] = [];
  const problem = csrRequestProblem(request);
  if (problem) errors.push(invalidField('spec.request', { text: goBytes(request) }, problem));
  return [...errors, ...csrSpecErrors(csr)];
}

function csrRequestProblem(request: string): string | undefined {
  if (!isStandardBase64(request)) return 'must be base64-encoded bytes'; // ours: Go fails to decode
  const pem = Buffer.from(request, 'base64').toString('utf8');
  const [block] = decodeGoPemBlocks(pem);
  if (block?.label !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  try {
    parseCsrSync(pem);
    return undefined;
  } catch (err) {
    return errorMessage(err);
  }
}

/** A []byte as Go's %#v prints it (field.Invalid of spec.request); shortened by the field error. */
function goBytes(base64: string): string {
  const bytes = isStandardBase64(base64) ? Buffer.from(base64, 'base64') : Buffer.from(base64);
  return `[]byte{${[...bytes.subarray(0, 40)].map((b) => `0x${b.toString(16)}`).join(', ')}${bytes.length > 40 ? ', …' : ''}}`;
}

/** Which fields of the status an update path may change. */
interface UpdatePath {
  approval: boolean;
  certificate: boolean;
}

/**
 * An update of the object itself: spec and status stay as stored (PrepareForUpdate), so only
 * metadata changes. Returns what to store; nothing to validate beyond the store's rules.
 */
export function csrUpdate(
  next: CertificateSigningRequest,
  old: CertificateSigningRequest,
): CertificateSigningRequest {
  return withStatus({ ...next, spec: old.spec }, old.status);
}

/**
 * Embedded mode's rule for an update of the object (the store cannot copy the stored spec
 * back, as kube-apiserver silently does): a changed spec is refused.
 */
export function csrSpecChangeErrors(
  next: CertificateSigningRequest,
  old: CertificateSigningRequest,
): string[] {
  const text = JSON.stringify(next.spec ?? {});
  return text === JSON.stringify(old.spec ?? {})
    ? []
    : [invalidField('spec', { text }, 'field is immutable')]; // ours (see above)
}

/**
 * A write of the status subresource: spec stays as stored, the stored Approved and Denied
 * conditions are kept when the write has as many of them (so only adding or removing one is an
 * error), missing condition times are filled in, then the status is validated (a certificate may
 * be set once). Returns the object to store and the field errors that refuse the write.
 */
export function csrStatusWrite(
  next: CertificateSigningRequest,
  old: CertificateSigningRequest,
  now: Date,
): { object: CertificateSigningRequest; errors: string[] } {
  let conditions = [...(next.status?.conditions ?? [])];
  for (const type of APPROVAL_TYPES) conditions = preserveInstances(conditions, old, type);
  const object = withStatus(
    { ...next, spec: old.spec },
    { ...next.status, conditions: withTimes(conditions, old, now) },
  );
  return {
    object,
    errors: csrStatusErrors(object, old, { approval: false, certificate: true }),
  };
}

/**
 * A write of the approval subresource: only the conditions come from the write (times filled
 * in); spec and the rest of the status stay as stored. Approved and Denied may be added.
 */
export function csrApprovalWrite(
  next: CertificateSigningRequest,
  old: CertificateSigningRequest,
  now: Date,
): { object: CertificateSigningRequest; errors: string[] } {
  const conditions = withTimes(next.status?.conditions ?? [], old, now);
  const object = withStatus({ ...next, spec: old.spec }, { ...old.status, conditions });
  return {
    object,
    errors: csrStatusErrors(object, old, { approval: true, certificate: false }),
  };
}

/** True when a write changes status.certificate (the CertificateSigning plugin then wants `sign`). */
export function csrCertificateChanged(
  next: CertificateSigningRequest,
  old: CertificateSigningRequest,
): boolean {
  return (next.status?.certificate ?? '') !== (old.status?.certificate ?? '');
}

/**
 * The status rules of validateCertificateSigningRequestUpdate: conditions (a type, a status,
 * True only for Approved, Denied and Failed, Approved and Denied never together, no type
 * twice), no Approved, Denied or Failed removed, Approved and Denied added only through the
 * approval path, and a certificate that is PEM CERTIFICATE blocks, set once, only through the
 * status path. What the stored object already broke is tolerated, as upstream.
 */
export function csrStatusErrors(
  next: CertificateSigningRequest,
  old: CertificateSigningRequest,
  path: UpdatePath,
): string[] {
  const errors = conditionErrors(next.status?.conditions ?? [], old);
  const oldConditions = old.status?.conditions ?? [];
  const newConditions = next.status?.conditions ?? [];
  const count = (list: readonly CsrCondition[], type: string) =>
    list.filter((c) => c.type === type).length;
  for (const type of TRUE_ONLY_TYPES) {
    if (count(newConditions, type) < count(oldConditions, type)) {
      errors.push(
        forbiddenField(
          'status.conditions',
          `updates may not remove a condition of type ${goQuote(type)}`,
        ),
      );
    }
  }
  if (!path.approval) {
    for (const type of APPROVAL_TYPES) {
      const before = oldConditions.filter((c) => c.type === type);
      const after = newConditions.filter((c) => c.type === type);
      if (after.length > before.length) {
        errors.push(
          forbiddenField(
            'status.conditions',
            `updates may not add a condition of type ${goQuote(type)}`,
          ),
        );
      } else if (
        after.length === before.length &&
        JSON.stringify(after) !== JSON.stringify(before)
      ) {
        // Upstream appends a diff of the two; the type says which.
        errors.push(
          forbiddenField(
            'status.conditions',
            `updates may not modify a condition of type ${goQuote(type)}`,
          ),
        );
      }
    }
  }
  if (csrCertificateChanged(next, old)) {
    const certificate = next.status?.certificate ?? '';
    const problem = certificateProblem(certificate);
    const tolerated = certificateProblem(old.status?.certificate ?? '') !== undefined;
    if (problem && !tolerated) {
      errors.push(invalidField('status.certificate', '<certificate data>', problem));
    }
    if (!path.certificate) {
      errors.push(forbiddenField('status.certificate', 'updates may not set certificate content'));
    } else if (old.status?.certificate) {
      errors.push(
        forbiddenField('status.certificate', 'updates may not modify existing certificate content'),
      );
    }
  }
  return errors;
}

/** validateConditions, with upstream's allowances for what the stored object already had. */
function conditionErrors(
  conditions: readonly CsrCondition[],
  old: CertificateSigningRequest,
): string[] {
  const oldConditions = old.status?.conditions ?? [];
  const oldTypes = oldConditions.map((c) => c.type);
  const allowEmpty = oldTypes.includes('');
  const allowDuplicates = new Set(oldTypes).size < oldTypes.length;
  const allowBoth =
    oldTypes.includes(CSR_CONDITION_APPROVED) && oldTypes.includes(CSR_CONDITION_DENIED);
  const errors = new FieldErrorList();
  const path = 'status.conditions';
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions.forEach((condition, i) => {
    const at = `${path}[${i}]`;
    const type = condition.type ?? '';
    if (type === '' && !allowEmpty) errors.addItem(path, () => requiredField(`${at}.type`, ''));
    const allowed = TRUE_ONLY_TYPES.includes(type) ? ['True'] : ['False', 'True', 'Unknown'];
    // Widened: a written condition may carry any string, or none.
    const status: string = condition.status ?? '';
    if (status === '') errors.addItem(path, () => requiredField(`${at}.status`, ''));
    else if (!allowed.includes(status)) {
      errors.addItem(path, () => unsupportedField(`${at}.status`, status, allowed));
    }
    if (!allowBoth) {
      if (type === CSR_CONDITION_APPROVED) approved = true;
      if (type === CSR_CONDITION_DENIED) denied = true;
      if (approved && denied && APPROVAL_TYPES.includes(type)) {
        errors.addItem(path, () =>
          invalidField(`${at}.type`, type, 'Approved and Denied conditions are mutually exclusive'),
        );
      }
    }
    if (seen.has(type) && !allowDuplicates)
      errors.addItem(path, () => duplicateField(`${at}.type`, type));
    seen.add(type);
  });
  return errors.toArray();
}

/** Why status.certificate is not what the API accepts (PEM CERTIFICATE blocks only), or undefined. */
function certificateProblem(base64: string): string | undefined {
  if (base64 === '') return undefined;
  if (!isStandardBase64(base64)) return 'must be base64-encoded bytes'; // ours: Go fails to decode
  const blocks = decodeGoPemBlocks(Buffer.from(base64, 'base64').toString('utf8'));
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const block of blocks) {
    if (block.label !== 'CERTIFICATE') {
      return `only CERTIFICATE PEM blocks are allowed, found ${goQuoteValue(block.label)}`;
    }
    if (Object.keys(block.headers).length > 0) return 'no PEM block headers are permitted';
    // The signer's own certificate, written a moment ago: known to parse.
    if (issuedHere(block.der)) continue;
    try {
      new X509Certificate(block.der);
    } catch (err) {
      return `x509: ${errorMessage(err)}`; // ours: Go's parser words its errors differently
    }
  }
  return undefined;
}

/** The stored instances of type in place of the written ones, when there are as many. */
function preserveInstances(
  conditions: CsrCondition[],
  old: CertificateSigningRequest,
  type: string,
): CsrCondition[] {
  const stored = (old.status?.conditions ?? []).filter((c) => c.type === type);
  const written = conditions.filter((c) => c.type === type);
  if (stored.length !== written.length) return conditions;
  let next = 0;
  return conditions.map((c) => (c.type === type ? (stored[next++] as CsrCondition) : c));
}

/**
 * populateConditionTimestamps: a missing lastUpdateTime is now; a missing lastTransitionTime
 * is the stored one of the same type and status, else now.
 */
function withTimes(
  conditions: readonly CsrCondition[],
  old: CertificateSigningRequest,
  now: Date,
): CsrCondition[] {
  const time = formatTimestamp(now);
  return conditions.map((condition) => {
    const previous = (old.status?.conditions ?? []).find(
      (c) => c.type === condition.type && c.status === condition.status && c.lastTransitionTime,
    );
    return {
      ...condition,
      lastUpdateTime: condition.lastUpdateTime || time,
      lastTransitionTime: condition.lastTransitionTime || previous?.lastTransitionTime || time,
    };
  });
}

function withStatus(
  csr: CertificateSigningRequest,
  status: CertificateSigningRequestStatus | undefined,
): CertificateSigningRequest {
  const { status: _dropped, ...rest } = csr;
  return status === undefined ? rest : { ...rest, status };
}
