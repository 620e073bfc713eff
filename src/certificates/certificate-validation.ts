import { isIP } from 'node:net';
import type { CertificateSpec, RenewalWindow } from '../api/certificate.js';
import { DNS1123_SUBDOMAIN_MESSAGE, isDns1123Subdomain } from '../api/kube-names.js';
import {
  duplicateField,
  forbiddenField,
  invalidField,
  requiredField,
  tooLongField,
  unsupportedField,
} from '../base/field-error.js';
import { FieldErrorList } from '../base/field-error-list.js';
import { isKnownTimeZone, parseCronSchedule } from '../pki/cron-schedule.js';
import { isAscii } from '../pki/der.js';
import { formatGoDuration, parseGoDuration } from '../pki/duration.js';
import { PkiError } from '../pki/errors.js';
import { type KeyAlgorithm, RSA_MAX_BITS, RSA_MIN_BITS } from '../pki/keys.js';
import { cidrBytes } from '../pki/name-constraints.js';
import { SIGNATURE_ALGORITHM_NAMES, signatureAlgorithmsFor } from '../pki/signature-algorithm.js';
import { parseLiteralSubject, subjectFieldsOf } from '../pki/subject.js';
import { isKnownUsage } from '../pki/usages.js';
import { validateIssuerRef } from './issuer-ref-validation.js';

const HOUR_MS = 3_600_000;
/** cert-manager's default spec.duration (90 days). */
export const DEFAULT_CERTIFICATE_DURATION_MS = 2160 * HOUR_MS;
/** cert-manager's MinimumCertificateDuration. */
export const MINIMUM_CERTIFICATE_DURATION_MS = HOUR_MS;
/** cert-manager's MinimumRenewBefore. */
export const MINIMUM_RENEW_BEFORE_MS = 5 * 60_000;

const duration = (ms: number) => ({ text: formatGoDuration(ms) });

/** The longest arc cert-manager's ParseObjectIdentifier reads (Go's strconv.Atoi: int64). */
const MAX_OID_ARC = 2n ** 63n - 1n;

/**
 * Longer literal subjects are refused unparsed (ours: cert-manager has no limit). Parsing costs
 * microseconds per character, and a review may carry megabytes; a real subject is well under a
 * kilobyte (RFC 5280 bounds most attribute values at 64 to 200 characters).
 */
export const MAX_LITERAL_SUBJECT_BYTES = 8 * 1024;

/**
 * True when text holds `<local@domain>`: a `<`, then at least one character, an `@` and at
 * least one more before the next `>`, none of them `<` or `>`. A scan, where the regular
 * expression /<[^<>]+@[^<>]+>/ backtracks in quadratic time over a long address.
 */
function hasAngleAddress(text: string): boolean {
  let open = text.indexOf('<');
  while (open >= 0) {
    const close = text.indexOf('>', open + 1);
    if (close < 0) return false;
    const inner = text.slice(open + 1, close);
    const nested = inner.lastIndexOf('<');
    // A later '<' starts the candidate anew; the part after it is what lies between.
    const candidate = nested >= 0 ? inner.slice(nested + 1) : inner;
    const at = candidate.indexOf('@', 1);
    if (at > 0 && at < candidate.length - 1) return true;
    open = text.indexOf('<', close + 1);
  }
  return false;
}

/** A bare address (what Go's mail.ParseAddress returns unchanged), not `Name <address>`. */
function emailProblem(text: string): string | undefined {
  if (/^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+$/.test(text)) return undefined;
  if (hasAngleAddress(text))
    return 'invalid email address: make sure the supplied value only contains the email address itself';
  // Go's parser words each failure its own way; these are its two commonest.
  if (!text.includes('@')) return 'invalid email address: mail: missing @ in addr-spec';
  return 'invalid email address: mail: invalid address';
}

function parsedDuration(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseGoDuration(text);
  } catch {
    return Number.NaN;
  }
}

function validateDurations(spec: CertificateSpec, errors: FieldErrorList): void {
  const asked = parsedDuration(spec.duration);
  const renewBefore = parsedDuration(spec.renewBefore);
  if (Number.isNaN(asked)) {
    errors.add(
      invalidField('spec.duration', spec.duration ?? '', 'must be a Go duration, e.g. 2160h'),
    );
    return;
  }
  if (Number.isNaN(renewBefore)) {
    errors.add(
      invalidField('spec.renewBefore', spec.renewBefore ?? '', 'must be a Go duration, e.g. 360h'),
    );
    return;
  }
  // cert-manager checks the ranges only when duration or renewBefore is set.
  if (asked === undefined && renewBefore === undefined) return;
  const lifetime = asked ?? DEFAULT_CERTIFICATE_DURATION_MS;
  if (lifetime < MINIMUM_CERTIFICATE_DURATION_MS)
    errors.add(
      invalidField(
        'spec.duration',
        duration(lifetime),
        `certificate duration must be greater than ${formatGoDuration(MINIMUM_CERTIFICATE_DURATION_MS)}`,
      ),
    );
  const percentage = spec.renewBeforePercentage;
  if (renewBefore !== undefined && percentage !== undefined) {
    const both =
      'renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set';
    errors.add(invalidField('spec.renewBefore', duration(renewBefore), both));
    errors.add(invalidField('spec.renewBeforePercentage', percentage, both));
  }
  if (renewBefore !== undefined && renewBefore < MINIMUM_RENEW_BEFORE_MS)
    errors.add(
      invalidField(
        'spec.renewBefore',
        duration(renewBefore),
        `certificate renewBefore must be greater than ${formatGoDuration(MINIMUM_RENEW_BEFORE_MS)}`,
      ),
    );
  if (renewBefore !== undefined && renewBefore >= lifetime)
    errors.add(
      invalidField(
        'spec.renewBefore',
        duration(renewBefore),
        `certificate duration ${formatGoDuration(lifetime)} must be greater than renewBefore ${formatGoDuration(renewBefore)}`,
      ),
    );
  if (percentage !== undefined) {
    // cert-manager's check uses (100 - percentage): the time before renewal, not renewBefore.
    const before = Math.trunc((lifetime * (100 - percentage)) / 100);
    if (before < MINIMUM_RENEW_BEFORE_MS)
      errors.add(
        invalidField(
          'spec.renewBeforePercentage',
          percentage,
          `certificate renewBeforePercentage must result in a renewBefore greater than ${formatGoDuration(MINIMUM_RENEW_BEFORE_MS)}`,
        ),
      );
    if (before >= lifetime)
      errors.add(
        invalidField(
          'spec.renewBeforePercentage',
          percentage,
          'certificate renewBeforePercentage must result in a renewBefore less than duration',
        ),
      );
  }
}

function validateKeystores(spec: CertificateSpec, errors: FieldErrorList): void {
  const stores = [
    ['jks', 'JKS', spec.keystores?.jks],
    ['pkcs12', 'PKCS#12', spec.keystores?.pkcs12],
  ] as const;
  for (const [key, label, store] of stores) {
    if (!store) continue;
    const path = `spec.keystores.${key}`;
    const hasRef = Boolean(store.passwordSecretRef?.name);
    if (store.password !== undefined && hasRef)
      errors.add(
        forbiddenField(
          path,
          `exactly one of passwordSecretRef and password must be provided for ${label} keystores; cannot set both`,
        ),
      );
    if (store.password === undefined && !hasRef)
      errors.add(
        forbiddenField(
          path,
          // cert-manager's wording, "must" twice included.
          `must set exactly one of passwordSecretRef and password must for ${label} keystores`,
        ),
      );
    if (store.password === '')
      errors.add(
        forbiddenField(
          `${path}.password`,
          `literal password cannot be empty if set on ${label} keystores`,
        ),
      );
  }
}

/**
 * Whether text is an OID cert-manager reads (ParseObjectIdentifier: dot-separated integers
 * of at most 64 bits) and that can be put in a certificate. Ours is stricter on purpose:
 * only the canonical dotted form (no sign, no leading zero, at least two arcs, the first 0 to
 * 2 and the second below 40 under 0 and 1), since any other spelling either fails when the
 * CSR is built or comes back from the certificate spelled differently, which would never match.
 */
function isCanonicalOid(text: string): boolean {
  if (!/^[0-2](\.(0|[1-9][0-9]{0,18}))+$/.test(text)) return false;
  const [first, second, ...rest] = text.split('.').map(BigInt);
  return (
    (first === 2n || (second as bigint) < 40n) &&
    [second, ...rest].every((arc) => (arc as bigint) <= MAX_OID_ARC)
  );
}

/** cert-manager's otherNames rules: an OID in dotted form and a non-empty UTF-8 value. */
function validateOtherNames(spec: CertificateSpec, errors: FieldErrorList): void {
  for (const [i, { oid = '', utf8Value = '' }] of (spec.otherNames ?? []).entries()) {
    const path = `spec.otherNames[${i}]`;
    if (oid === '')
      errors.addItem('spec.otherNames', () => requiredField(`${path}.oid`, 'must be specified'));
    if (!isCanonicalOid(oid))
      errors.addItem('spec.otherNames', () =>
        invalidField(`${path}.oid`, oid, 'invalid oid syntax'),
      );
    // A lone surrogate (from a JSON \uD800 escape) has no UTF-8 encoding.
    if (utf8Value === '' || /\p{Cs}/u.test(utf8Value))
      errors.addItem('spec.otherNames', () =>
        requiredField(`${path}.utf8Value`, 'must be set to a valid non-empty UTF8 string'),
      );
  }
}

/**
 * The entries of nameConstraints.permitted/excluded: CIDR ranges as Go parses them (the
 * message of later cert-manager versions, which check them here too) and names that fit the
 * IA5String they are encoded as (cert-manager fails only when it builds the CSR).
 */
function validateNameConstraintItems(spec: CertificateSpec, errors: FieldErrorList): void {
  for (const side of ['permitted', 'excluded'] as const) {
    const item = spec.nameConstraints?.[side];
    const path = `spec.nameConstraints.${side}`;
    for (const [i, range] of (item?.ipRanges ?? []).entries()) {
      try {
        cidrBytes(range);
      } catch {
        errors.addItem(`${path}.ipRanges`, () =>
          invalidField(`${path}.ipRanges[${i}]`, range, 'invalid CIDR address'),
        );
      }
    }
    for (const list of ['dnsDomains', 'emailAddresses', 'uriDomains'] as const) {
      for (const [i, name] of (item?.[list] ?? []).entries()) {
        if (!isAscii(name))
          errors.addItem(`${path}.${list}`, () =>
            invalidField(`${path}.${list}[${i}]`, name, 'cannot be encoded as an IA5String'),
          );
      }
    }
  }
}

/** The pattern the Certificate CRD gives windowDuration. */
const WINDOW_DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(s|m|h))+$';
const WINDOW_DURATION = new RegExp(WINDOW_DURATION_PATTERN);

/**
 * One renewal window, as cert-manager's validateCertificateRenewalWindows checks it, after the
 * CRD's own checks (required fields, minLength, the windowDuration pattern), which the API
 * server makes and an embedded store does not. Ours: a windowDuration of zero is refused here;
 * cert-manager lets it in, then cannot compute a renewal time for it.
 */
function validateRenewalWindow(window: RenewalWindow, path: string, errors: FieldErrorList): void {
  const { cron, timezone, windowDuration } = window;
  const tooShort = (field: string) =>
    invalidField(
      `${path}.${field}`,
      '',
      `${path}.${field} in body should be at least 1 chars long`,
    );
  if (cron === undefined) errors.add(requiredField(`${path}.cron`, ''));
  else if (cron === '') errors.add(tooShort('cron'));
  if (timezone === '') errors.add(tooShort('timezone'));
  if (windowDuration === undefined || windowDuration === '')
    errors.add(
      requiredField(
        `${path}.windowDuration`,
        'windowDuration must be specified and should be greater than 0',
      ),
    );
  else if (!WINDOW_DURATION.test(windowDuration))
    errors.add(
      invalidField(
        `${path}.windowDuration`,
        windowDuration,
        `${path}.windowDuration in body should match '${WINDOW_DURATION_PATTERN}'`,
      ),
    );
  else if (parseGoDuration(windowDuration) <= 0)
    errors.add(
      invalidField(
        `${path}.windowDuration`,
        windowDuration,
        'windowDuration must be specified and should be greater than 0',
      ),
    );
  const zone = timezone ?? '';
  if (!isKnownTimeZone(zone))
    errors.add(
      invalidField(
        `${path}.timezone`,
        zone,
        'invalid value for timezone. timezone must be IANA compliant',
      ),
    );
  if (cron === undefined || cron === '') return;
  try {
    // Always with a zone (UTC by default) as the controllers read it, so a cron that carries
    // its own TZ= prefix, which cert-manager's webhook lets in and its controllers cannot
    // read, is refused here.
    parseCronSchedule(cron, zone === '' ? 'UTC' : zone);
  } catch (error) {
    errors.add(
      invalidField(
        `${path}.cron`,
        cron,
        `invalid cron syntax: ${(error as Error).message}. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow`,
      ),
    );
  }
}

/** spec.renewal as cert-manager's validateCertificateRenewal checks it. */
function validateRenewal(spec: CertificateSpec, errors: FieldErrorList): void {
  const renewal = spec.renewal;
  if (!renewal) return;
  const policy = renewal.policy;
  if (policy === 'Disabled') {
    if (renewal.windows?.length)
      errors.add(
        forbiddenField(
          'spec.renewal.windows',
          'windows cannot be set when `renewal.policy` is set to Disabled',
        ),
      );
    return;
  }
  if (policy !== 'RenewBefore')
    errors.add(unsupportedField('spec.renewal.policy', policy ?? '', ['Disabled', 'RenewBefore']));
  for (const [i, window] of (renewal.windows ?? []).entries())
    validateRenewalWindow(window, `spec.renewal.windows[${i}]`, errors);
}

/**
 * The fields cert-csi does not implement, refused by name rather than ignored (README lists
 * them): the PKCS#12 profile Modern2026 (PBMAC1, which neither OpenSSL 3.0 nor Java 17 can
 * read).
 */
function refuseUnimplemented(spec: CertificateSpec, errors: FieldErrorList): void {
  const notImplemented = 'not supported by cert-csi (see docs/certificates-and-csrs.md)';
  if (spec.keystores?.pkcs12?.profile === 'Modern2026')
    errors.add(forbiddenField('spec.keystores.pkcs12.profile', `Modern2026 is ${notImplemented}`));
}

/**
 * Checks a Certificate spec as cert-manager's webhook does (ValidateCertificateSpec), in its
 * order and with its messages; returns the field errors, empty when valid.
 */
export function validateCertificateSpec(spec: CertificateSpec): string[] {
  const errors = new FieldErrorList();
  if (!spec.secretName) errors.add(requiredField('spec.secretName', 'must be specified'));
  else if (!isDns1123Subdomain(spec.secretName))
    errors.add(invalidField('spec.secretName', spec.secretName, DNS1123_SUBDOMAIN_MESSAGE));

  errors.addAll(validateIssuerRef(spec.issuerRef, 'spec'));

  let commonName = spec.commonName ?? '';
  // A literal subject too long to parse may hold a common name: no "at least one" error then.
  let literalUnread = false;
  if (spec.literalSubject) {
    if (commonName)
      errors.add(
        invalidField(
          'spec.commonName',
          commonName,
          'When providing a `LiteralSubject` no `commonName` may be provided.',
        ),
      );
    const subject = spec.subject;
    if (
      subject &&
      Object.values(subject).some((value) =>
        Array.isArray(value) ? value.length > 0 : Boolean(value),
      )
    )
      errors.add(
        invalidField(
          'spec.subject',
          { text: JSON.stringify(subject) },
          'When providing a `LiteralSubject` no `Subject` properties may be provided.',
        ),
      );
    if (Buffer.byteLength(spec.literalSubject) > MAX_LITERAL_SUBJECT_BYTES) {
      errors.add(tooLongField('spec.literalSubject', MAX_LITERAL_SUBJECT_BYTES));
      literalUnread = true;
    } else {
      try {
        commonName = subjectFieldsOf(parseLiteralSubject(spec.literalSubject)).commonName;
      } catch (err) {
        const problem = err instanceof PkiError ? err.message : 'cannot be parsed';
        errors.add(invalidField('spec.literalSubject', spec.literalSubject, problem));
      }
    }
  }
  if (
    !literalUnread &&
    !commonName &&
    !spec.dnsNames?.length &&
    !spec.uris?.length &&
    !spec.emailAddresses?.length &&
    !spec.ipAddresses?.length &&
    !spec.otherNames?.length
  )
    errors.add(
      invalidField(
        'spec',
        '',
        'at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set',
      ),
    );
  if (Buffer.byteLength(commonName) > 64) errors.add(tooLongField('spec.commonName', 64));
  for (const [i, ip] of (spec.ipAddresses ?? []).entries()) {
    if (isIP(ip) === 0)
      errors.addItem('spec.ipAddresses', () =>
        invalidField(`spec.ipAddresses[${i}]`, ip, 'invalid IP address'),
      );
  }
  for (const [i, email] of (spec.emailAddresses ?? []).entries()) {
    const problem = emailProblem(email);
    if (problem)
      errors.addItem('spec.emailAddresses', () =>
        invalidField(`spec.emailAddresses[${i}]`, email, problem),
      );
  }
  validateOtherNames(spec, errors);

  const key = spec.privateKey;
  if (key) {
    const size = key.size ?? 0;
    switch (key.algorithm ?? '') {
      case '':
      case 'RSA':
        if (size > 0 && (size < RSA_MIN_BITS || size > RSA_MAX_BITS))
          errors.add(
            invalidField(
              'spec.privateKey.size',
              size,
              `must be between ${RSA_MIN_BITS} and ${RSA_MAX_BITS} for rsa keyAlgorithm`,
            ),
          );
        break;
      case 'ECDSA':
        if (size > 0 && size !== 256 && size !== 384 && size !== 521)
          errors.add(unsupportedField('spec.privateKey.size', size, ['256', '384', '521']));
        break;
      case 'Ed25519':
        break;
      default:
        errors.add(
          invalidField(
            'spec.privateKey.algorithm',
            key.algorithm ?? '',
            'must be either empty or one of rsa, ecdsa or ed25519',
          ),
        );
    }
    if (
      key.rotationPolicy !== undefined &&
      key.rotationPolicy !== 'Never' &&
      key.rotationPolicy !== 'Always'
    )
      errors.add(
        unsupportedField('spec.privateKey.rotationPolicy', key.rotationPolicy, ['Never', 'Always']),
      );
    if (key.encoding !== undefined && key.encoding !== 'PKCS1' && key.encoding !== 'PKCS8')
      errors.add(unsupportedField('spec.privateKey.encoding', key.encoding, ['PKCS1', 'PKCS8']));
  }
  if (spec.signatureAlgorithm && !SIGNATURE_ALGORITHM_NAMES.includes(spec.signatureAlgorithm)) {
    // The CRD's enum, which the API server checks before cert-manager sees the object.
    errors.add(
      unsupportedField(
        'spec.signatureAlgorithm',
        spec.signatureAlgorithm,
        SIGNATURE_ALGORITHM_NAMES,
      ),
    );
  } else if (spec.signatureAlgorithm) {
    const algorithm = key?.algorithm || 'RSA';
    const allowed = ['RSA', 'ECDSA', 'Ed25519'].includes(algorithm)
      ? signatureAlgorithmsFor(algorithm as KeyAlgorithm)
      : undefined;
    if (allowed && !allowed.includes(spec.signatureAlgorithm))
      errors.add(
        invalidField(
          'spec.signatureAlgorithm',
          spec.signatureAlgorithm,
          `for key algorithm ${algorithm} the allowed signature algorithms are [${allowed.join(' ')}]`,
        ),
      );
  }

  validateDurations(spec, errors);
  for (const [i, usage] of (spec.usages ?? []).entries()) {
    if (!isKnownUsage(usage))
      errors.addItem('spec.usages', () =>
        invalidField(`spec.usages[${i}]`, usage, 'unknown keyusage'),
      );
  }
  if (spec.revisionHistoryLimit !== undefined && spec.revisionHistoryLimit < 1)
    errors.add(
      invalidField(
        'spec.revisionHistoryLimit',
        spec.revisionHistoryLimit,
        'must not be less than 1',
      ),
    );
  for (const annotation of Object.keys(spec.secretTemplate?.annotations ?? {})) {
    if (
      annotation.startsWith('cert-manager.io/') &&
      annotation !== 'cert-manager.io/allow-direct-injection'
    )
      errors.addItem('spec.secretTemplate.annotations', () =>
        invalidField(
          'spec.secretTemplate.annotations',
          annotation,
          'cert-manager.io/* annotations are not allowed',
        ),
      );
  }
  if (spec.nameConstraints) {
    if (!spec.isCA)
      errors.add(
        invalidField(
          'spec.nameConstraints',
          { text: JSON.stringify(spec.nameConstraints) },
          'isCa should be true when nameConstraints is set',
        ),
      );
    if (!spec.nameConstraints.permitted && !spec.nameConstraints.excluded)
      errors.add(
        invalidField(
          'spec.nameConstraints',
          { text: JSON.stringify(spec.nameConstraints) },
          'either permitted or excluded must be set',
        ),
      );
    validateNameConstraintItems(spec, errors);
  }
  const formats = new Set<string>();
  const outputFormats = 'spec.additionalOutputFormats';
  for (const format of spec.additionalOutputFormats ?? []) {
    if (formats.has(format.type))
      errors.addItem(outputFormats, () => duplicateField(`${outputFormats}[type]`, format.type));
    formats.add(format.type);
    if (format.type !== 'DER' && format.type !== 'CombinedPEM')
      errors.addItem(outputFormats, () =>
        unsupportedField(`${outputFormats}.type`, format.type, ['DER', 'CombinedPEM']),
      );
  }
  validateKeystores(spec, errors);
  validateRenewal(spec, errors);
  refuseUnimplemented(spec, errors);
  return errors.toArray();
}
