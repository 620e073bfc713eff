import { type AsymmetricKeyDetails, type KeyObject, X509Certificate } from 'node:crypto';
import type { Condition } from '../api/conditions.js';
import { byteLength, nameIsDnsSubdomain, qualifiedNameErrors } from '../api/kube-names.js';
import {
  PCR_CONDITION_DENIED,
  PCR_CONDITION_FAILED,
  PCR_CONDITION_ISSUED,
  PCR_DEFAULT_MAX_EXPIRATION_SECONDS,
  PCR_MAX_EXPIRATION_SECONDS,
  PCR_MIN_EXPIRATION_SECONDS,
  PCR_NOT_BEFORE_SKEW_SECONDS,
  PCR_REFRESH_MARGIN_SECONDS,
  PCR_TERMINAL_CONDITIONS,
  type PodCertificateRequest,
  type PodCertificateRequestSpec,
  type PodCertificateRequestStatus,
  terminalConditionOf,
} from '../api/pod-certificate-request.js';
import {
  type FieldValue,
  forbiddenField,
  invalidField,
  invalidFieldOmitted,
  requiredField,
  tooLongField,
  unsupportedField,
} from '../base/field-error.js';
import { FieldErrorList } from '../base/field-error-list.js';
import { goTimeString } from '../base/go-text.js';
import { isKubernetesSignerName, validateSignerName } from '../base/signer-name.js';
import { readCertificateFields } from '../pki/certificate-fields.js';
import { formatGoDuration } from '../pki/duration.js';
import { ExtensionOid } from '../pki/extensions.js';
import { publicKeysEqual } from '../pki/keys.js';
import { decodeGoPemBlocks, isStandardBase64 } from '../pki/pem.js';
import {
  type PodKeyError,
  type PodKeyMaterial,
  requestedPublicKey,
  verifiedPodCertificateKey,
} from '../pki/pod-certificate-key.js';
import { decodeSubjectAltNames } from '../pki/san.js';
import { parseKubeTime, RFC3339_DETAIL, validateConditions } from './kube-validation.js';

// kube-apiserver's rules for PodCertificateRequests (KEP-4317;
// pkg/apis/certificates/validation in 1.35, plus the 1.36 stub request). Messages are the API
// server's where it has one; the few it lacks (the 1.36 stub request, malformed JSON the API
// server could not even decode) are marked as ours.

/** MaxPKIXPublicKeySize, MaxProofOfPossessionSize and (1.36) MaxStubPKCS10RequestSize, in bytes. */
export const PCR_MAX_KEY_MATERIAL_BYTES = 10_240;
/** MaxCertificateChainSize, in bytes. */
export const PCR_MAX_CERTIFICATE_CHAIN_BYTES = 102_400;
/** The cap of maxExpirationSeconds for `kubernetes.io` signers (KubernetesMaxMaxExpirationSeconds). */
export const PCR_KUBERNETES_MAX_EXPIRATION_SECONDS = 86_400;
const UID_MAX_LENGTH = 128;
// apimachinery's TotalAnnotationSizeLimitB, which unverifiedUserAnnotations share.
const USER_ANNOTATIONS_MAX_BYTES = 256 * 1024;
const NOT_BEFORE_SKEW_MS = PCR_NOT_BEFORE_SKEW_SECONDS * 1000;
const MIN_LIFETIME_MS = PCR_MIN_EXPIRATION_SECONDS * 1000;
const REFRESH_MARGIN_MS = PCR_REFRESH_MARGIN_SECONDS * 1000;
const CHAIN = 'status.certificateChain';
const KEY_FIELDS = ['pkixPublicKey', 'proofOfPossession', 'stubPKCS10Request'] as const;
type KeyField = (typeof KEY_FIELDS)[number];
const NOT_PKIX = 'must be a valid PKIX-serialized public key';
const NOT_STUB = 'must be a DER-encoded PKCS#10 certificate request'; // ours (1.36)

/** The request as kube-apiserver stores it: spec.maxExpirationSeconds defaults to 86400. */
export function withPodCertificateRequestDefaults(
  request: PodCertificateRequest,
): PodCertificateRequest {
  const spec = request.spec ?? ({} as PodCertificateRequestSpec);
  return {
    ...request,
    spec: {
      ...spec,
      maxExpirationSeconds: spec.maxExpirationSeconds ?? PCR_DEFAULT_MAX_EXPIRATION_SECONDS,
    },
  };
}

/**
 * kube-apiserver's ValidatePodCertificateRequestCreate of a (defaulted) request, in its
 * order: signer name, user annotations, the seven identity fields, maxExpirationSeconds,
 * then the key: exactly one encoding, sizes, a supported key type, and the proof of
 * possession or the stub request's signature. Field errors; none admits the request.
 * Metadata (the name) is left to the store.
 */
export function validatePodCertificateRequestCreate(request: PodCertificateRequest): string[] {
  const spec = request.spec ?? ({} as PodCertificateRequestSpec);
  const errors = validateSignerName('spec.signerName', spec.signerName ?? '');
  if (spec.unverifiedUserAnnotations !== undefined) {
    errors.push(...userAnnotationErrors(spec.unverifiedUserAnnotations));
  }
  errors.push(...nameErrors('spec.podName', spec.podName));
  errors.push(...uidErrors('spec.podUID', spec.podUID));
  errors.push(...nameErrors('spec.serviceAccountName', spec.serviceAccountName));
  errors.push(...uidErrors('spec.serviceAccountUID', spec.serviceAccountUID));
  errors.push(...nameErrors('spec.nodeName', spec.nodeName));
  errors.push(...uidErrors('spec.nodeUID', spec.nodeUID));
  // A JSON null gets here from a client that skipped defaulting; widen to say so.
  const max: unknown = spec.maxExpirationSeconds;
  if (max === undefined || max === null) {
    errors.push(requiredField('spec.maxExpirationSeconds', 'must be set'));
    return errors;
  }
  const cap = isKubernetesSignerName(spec.signerName ?? '')
    ? PCR_KUBERNETES_MAX_EXPIRATION_SECONDS
    : PCR_MAX_EXPIRATION_SECONDS;
  if (
    typeof max !== 'number' ||
    !Number.isInteger(max) ||
    max < PCR_MIN_EXPIRATION_SECONDS ||
    max > cap
  ) {
    errors.push(
      invalidField(
        'spec.maxExpirationSeconds',
        typeof max === 'number' ? max : JSON.stringify(max),
        `must be in the range [${PCR_MIN_EXPIRATION_SECONDS}, ${cap}]`,
      ),
    );
  }
  errors.push(...keyMaterialErrors(spec));
  return errors;
}

/**
 * kube-apiserver's validation of an update of the main resource: the whole spec is immutable
 * (status is the stored one, as the strategy copies it back before validating).
 */
export function validatePodCertificateRequestUpdate(
  next: PodCertificateRequest,
  old: PodCertificateRequest,
): string[] {
  if (canonicalSpec(next.spec) === canonicalSpec(old.spec)) return [];
  return [invalidField('spec', { text: JSON.stringify(next.spec ?? {}) }, 'field is immutable')];
}

/**
 * kube-apiserver's ValidatePodCertificateRequestStatusUpdate (in its order; the
 * first failing group returns): conditions, immutability once terminal, empty fields with
 * Denied or Failed, the issued chain and its times against now (the API server's clock), and
 * no change without a terminal transition. next is the written object after the status
 * strategy (stored metadata and spec, written status); old is the stored object, whose spec
 * gives the requested key and maxExpirationSeconds. The strategy's sign check is not here: it
 * needs the authorizer, see podCertificateRequestStatusChanged.
 */
export function validatePodCertificateRequestStatusUpdate(
  next: PodCertificateRequest,
  old: PodCertificateRequest,
  now: Date,
): string[] {
  const status = next.status ?? {};
  const conditions = status.conditions ?? [];
  const list = 'status.conditions';
  const conditionErrors = new FieldErrorList();
  let terminal = 0;
  conditions.forEach((condition, i) => {
    const at = `${list}[${i}]`;
    const type = condition.type ?? '';
    if (!PCR_TERMINAL_CONDITIONS.includes(type)) {
      conditionErrors.addItem(list, () =>
        unsupportedField(`${at}.type`, type, PCR_TERMINAL_CONDITIONS),
      );
      return;
    }
    terminal++;
    if (terminal > 1) {
      conditionErrors.addItem(list, () =>
        invalidField(
          `${at}.type`,
          type,
          'There may be at most one condition with type "Issued", "Denied", or "Failed"',
        ),
      );
    }
    if (condition.status !== 'True') {
      conditionErrors.addItem(list, () =>
        unsupportedField(`${at}.status`, condition.status ?? '', ['True']),
      );
    }
  });
  conditionErrors.addAll(validateConditions(conditions, list));
  const errors = conditionErrors.toArray();
  // The conditions drive everything below: nothing more to say until they are right.
  if (errors.length > 0) return errors;

  if (terminalConditionOf(old)) {
    return statusesEqual(status, old.status)
      ? []
      : [
          invalidFieldOmitted(
            'status',
            'immutable after PodCertificateRequest is issued, denied, or failed',
          ),
        ];
  }
  const outcome = terminalConditionOf(next)?.type;
  if (outcome === PCR_CONDITION_DENIED || outcome === PCR_CONDITION_FAILED) {
    return statusesEqual(status, { conditions })
      ? []
      : [
          invalidFieldOmitted(
            'status',
            'non-condition status fields must be empty when denying or failing the PodCertificateRequest',
          ),
        ];
  }
  if (outcome === PCR_CONDITION_ISSUED) return issuedStatusErrors(status, old, now);
  return statusesEqual(status, old.status)
    ? []
    : [
        invalidFieldOmitted(
          'status',
          'status is immutable unless transitioning to "Issued", "Denied", or "Failed"',
        ),
      ];
}

/**
 * True when a status write changes the status (semantically: times compared as instants,
 * absent and empty alike). Any change needs verb `sign` on the request's signer (status strategy).
 */
export function podCertificateRequestStatusChanged(
  next: PodCertificateRequest,
  old: PodCertificateRequest,
): boolean {
  return !statusesEqual(next.status, old.status);
}

function nameErrors(path: string, name: string | undefined): string[] {
  const value = name ?? '';
  return nameIsDnsSubdomain(value, false).map((problem) => invalidField(path, value, problem));
}

function uidErrors(path: string, uid: string | undefined): string[] {
  const value = uid ?? '';
  if (value === '') return [invalidField(path, value, 'must not be empty')];
  return byteLength(value) > UID_MAX_LENGTH ? [tooLongField(path, UID_MAX_LENGTH)] : [];
}

/** Object-annotation rules (qualified keys, 256 KiB in all), and every key domain-prefixed. */
function userAnnotationErrors(annotations: Record<string, string>): string[] {
  const path = 'spec.unverifiedUserAnnotations';
  const errors = new FieldErrorList();
  let size = 0;
  // Sorted: Go walks the map in random order, a test wants one.
  for (const [key, value] of Object.entries(annotations).sort(([a], [b]) => (a < b ? -1 : 1))) {
    // String(): a JSON null must not crash the count (Go could not even decode one).
    size += byteLength(key) + byteLength(String(value));
    // As for annotations, case does not matter.
    for (const problem of qualifiedNameErrors(key.toLowerCase())) {
      errors.addItem(path, () => invalidField(path, key, problem));
    }
    if (!key.includes('/')) {
      // ours
      errors.addItem(path, () =>
        invalidField(path, key, "must be domain-prefixed (e.g. 'example.com/key')"),
      );
    }
  }
  if (size > USER_ANNOTATIONS_MAX_BYTES) errors.add(tooLongField(path, USER_ANNOTATIONS_MAX_BYTES));
  return errors.toArray();
}

/** The key material checks of create, each group returning at its first error as upstream. */
function keyMaterialErrors(spec: PodCertificateRequestSpec): string[] {
  for (const field of KEY_FIELDS) {
    const value = spec[field];
    if (value && !isStandardBase64(value)) {
      return [invalidField(`spec.${field}`, value, 'must be base64-encoded bytes')]; // ours
    }
    if (value && Buffer.from(value, 'base64').length > PCR_MAX_KEY_MATERIAL_BYTES) {
      return [tooLongField(`spec.${field}`, PCR_MAX_KEY_MATERIAL_BYTES)];
    }
  }
  const { pkixPublicKey, proofOfPossession, stubPKCS10Request } = spec;
  const podUID = spec.podUID ?? '';
  if (stubPKCS10Request) {
    const both = (['pkixPublicKey', 'proofOfPossession'] as const)
      .filter((field) => spec[field])
      .map((field) =>
        forbiddenField(`spec.${field}`, 'must be empty when stubPKCS10Request is set'),
      );
    if (both.length > 0) return both;
    return checkedKey('stubPKCS10Request', { stubPKCS10Request }, podUID);
  }
  if (!pkixPublicKey && !proofOfPossession) {
    return [
      requiredField(
        'spec.stubPKCS10Request',
        'stubPKCS10Request, or pkixPublicKey with proofOfPossession, must be set',
      ),
    ];
  }
  return checkedKey('pkixPublicKey', { pkixPublicKey, proofOfPossession }, podUID);
}

/** Parses the key of one encoding, checks its type, then verifies its proof. */
function checkedKey(
  field: Extract<KeyField, 'pkixPublicKey' | 'stubPKCS10Request'>,
  material: PodKeyMaterial,
  podUID: string,
): string[] {
  const path = `spec.${field}`;
  const raw = material[field] ?? '';
  let key: KeyObject;
  try {
    key = requestedPublicKey(material);
  } catch {
    return [invalidField(path, raw, field === 'pkixPublicKey' ? NOT_PKIX : NOT_STUB)];
  }
  const typeErrors = keyTypeErrors(path, key, raw);
  if (typeErrors.length > 0) return typeErrors;
  try {
    verifiedPodCertificateKey(material, podUID);
  } catch (err) {
    // verifiedPodCertificateKey turns every failure into a PodKeyError.
    const problem = (err as PodKeyError).problem;
    if (field === 'pkixPublicKey') {
      // An absent proof fails verification just like a wrong one, as in Go.
      return [
        invalidFieldOmitted(
          'spec.proofOfPossession',
          'could not verify proof-of-possession signature',
        ),
      ];
    }
    // A request parseCsr cannot read although its key could be found: malformed elsewhere.
    return problem === 'badProof'
      ? [invalidFieldOmitted(path, 'could not verify the certificate request signature')] // ours
      : [invalidField(path, raw, NOT_STUB)];
  }
  return [];
}

/** kube-apiserver's key type rules, with its messages (the curve text names P256 and P384 only, as Go's does). */
function keyTypeErrors(path: string, key: KeyObject, raw: string): string[] {
  // Set for every key createPublicKey returns (empty for Edwards and Montgomery keys).
  const details = key.asymmetricKeyDetails as AsymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case 'ed25519':
      return [];
    case 'ec':
      if (['prime256v1', 'secp384r1', 'secp521r1'].includes(String(details.namedCurve))) return [];
      // Go parses P-224 and refuses its curve; it cannot parse any other curve at all.
      return details.namedCurve === 'secp224r1'
        ? [invalidField(path, 'curve P-224', 'elliptic public keys must use curve P256 or P384')]
        : [invalidField(path, raw, NOT_PKIX)];
    case 'rsa': {
      const bits = Number(details.modulusLength);
      return bits === 3072 || bits === 4096
        ? []
        : [
            invalidField(
              path,
              `${bits}-bit modulus`,
              'RSA keys must have modulus size 3072 or 4096',
            ),
          ];
    }
    case 'dsa':
    case 'x25519':
      // Keys Go's ParsePKIXPublicKey reads but no signer may get.
      return [
        invalidField(
          path,
          raw,
          'unknown public key type; supported types are Ed25519, ECDSA, and RSA',
        ),
      ];
    default:
      return [invalidField(path, raw, NOT_PKIX)];
  }
}

/** A certificate Go's x509.ParseCertificate would accept, with what the status checks read. */
interface ParsedCertificate {
  notBefore: number;
  notAfter: number;
  publicKey: KeyObject;
  dnsNames: string[];
  emailAddresses: string[];
}

function parseCertificate(der: Uint8Array): ParsedCertificate | undefined {
  try {
    const certificate = new X509Certificate(der);
    const fields = readCertificateFields(der);
    const san = fields.extensions.get(ExtensionOid.subjectAltName);
    const names = san ? decodeSubjectAltNames(san.value) : undefined;
    return {
      notBefore: fields.notBefore.getTime(),
      notAfter: fields.notAfter.getTime(),
      publicKey: certificate.publicKey,
      dnsNames: names?.dnsNames ?? [],
      emailAddresses: names?.emailAddresses ?? [],
    };
  } catch {
    return undefined;
  }
}

const instant = (ms: number): FieldValue => ({ text: goTimeString(new Date(ms)) });

/** The rules of an Issued status: the chain, the leaf's key and names, and the three times. */
function issuedStatusErrors(
  status: PodCertificateRequestStatus,
  old: PodCertificateRequest,
  now: Date,
): string[] {
  const chain = status.certificateChain ?? '';
  if (byteLength(chain) > PCR_MAX_CERTIFICATE_CHAIN_BYTES) {
    return [tooLongField(CHAIN, PCR_MAX_CERTIFICATE_CHAIN_BYTES)];
  }
  const [leafBlock, ...rest] = decodeGoPemBlocks(chain);
  if (!leafBlock) {
    return [
      invalidField(CHAIN, chain, 'issued certificate chain must contain at least one certificate'),
    ];
  }
  const notCertificates =
    'issued certificate chain must consist entirely of CERTIFICATE PEM blocks';
  if (leafBlock.label !== 'CERTIFICATE') return [invalidField(CHAIN, chain, notCertificates)];
  const leaf = parseCertificate(leafBlock.der);
  if (!leaf) return [invalidField(CHAIN, chain, 'leaf certificate does not parse as valid X.509')];

  const errors: string[] = [];
  for (const name of leaf.dnsNames) {
    if (name === '') {
      errors.push(invalidField(CHAIN, name, 'leaf certificate should not contain empty DNSName'));
    }
    if (name.includes('..')) {
      errors.push(invalidField(CHAIN, name, "leaf certificate's DNSName should not contain '..'"));
    }
    if (name.startsWith('.') || name.endsWith('.')) {
      errors.push(
        invalidField(CHAIN, name, "leaf certificate's DNSName should not start or end with '.'"),
      );
    }
  }
  for (const address of leaf.emailAddresses) {
    if (!isMailAddress(address)) {
      errors.push(
        invalidField(CHAIN, address, 'leaf certificate should not contain invalid EmailAddress'),
      );
    }
  }

  const spec = old.spec ?? ({} as PodCertificateRequestSpec);
  let wanted: KeyObject;
  try {
    wanted = requestedPublicKey(spec);
  } catch {
    // Create validation makes this unreachable for a stored request; kept for stray objects.
    const field = spec.stubPKCS10Request ? 'stubPKCS10Request' : 'pkixPublicKey';
    errors.push(
      invalidField(
        `spec.${field}`,
        spec[field] ?? '',
        field === 'pkixPublicKey' ? NOT_PKIX : NOT_STUB,
      ),
    );
    return errors;
  }
  if (!publicKeysEqual(wanted, leaf.publicKey)) {
    errors.push(
      invalidField(CHAIN, chain, 'leaf certificate was not issued to the requested public key'),
    );
    return errors;
  }

  const notBefore = parseKubeTime(status.notBefore);
  const notAfter = parseKubeTime(status.notAfter);
  const beginRefreshAt = parseKubeTime(status.beginRefreshAt);
  const consistent = 'must be present and consistent with the issued certificate';
  if (notBefore === undefined) errors.push(requiredField('status.notBefore', consistent));
  if (notAfter === undefined) errors.push(requiredField('status.notAfter', consistent));
  if (beginRefreshAt === undefined) {
    errors.push(
      requiredField(
        'status.beginRefreshAt',
        'must be present and in the range [notbefore+10min, notafter-10min]',
      ),
    );
  }
  for (const field of ['notBefore', 'notAfter', 'beginRefreshAt'] as const) {
    if (Number.isNaN(parseKubeTime(status[field]))) {
      errors.push(invalidField(`status.${field}`, String(status[field]), RFC3339_DETAIL)); // ours
    }
  }
  if (
    errors.length > 0 ||
    notBefore === undefined ||
    notAfter === undefined ||
    beginRefreshAt === undefined
  ) {
    return errors;
  }

  if (notBefore !== leaf.notBefore) {
    return [
      invalidField(
        'status.notBefore',
        instant(notBefore),
        'must be set to the NotBefore time encoded in the leaf certificate',
      ),
    ];
  }
  // Strictly inside the window, as Go's After and Before.
  const clock = now.getTime();
  if (!(notBefore > clock - NOT_BEFORE_SKEW_MS && notBefore < clock + NOT_BEFORE_SKEW_MS)) {
    return [
      invalidField(
        'status.notBefore',
        instant(notBefore),
        "must be set to within 5 minutes of kube-apiserver's current time",
      ),
    ];
  }
  if (notAfter !== leaf.notAfter) {
    return [
      invalidField(
        'status.notAfter',
        instant(notAfter),
        'must be set to the NotAfter time encoded in the leaf certificate',
      ),
    ];
  }
  const lifetime = leaf.notAfter - leaf.notBefore;
  const asDuration = { text: formatGoDuration(lifetime) };
  if (lifetime < MIN_LIFETIME_MS) {
    return [invalidField(CHAIN, asDuration, 'leaf certificate lifetime must be >= 1 hour')];
  }
  const maxSeconds = spec.maxExpirationSeconds ?? PCR_DEFAULT_MAX_EXPIRATION_SECONDS;
  if (lifetime > maxSeconds * 1000) {
    return [
      invalidField(
        CHAIN,
        asDuration,
        `leaf certificate lifetime must be <= spec.maxExpirationSeconds (${maxSeconds})`,
      ),
    ];
  }
  if (beginRefreshAt < notBefore + REFRESH_MARGIN_MS) {
    return [
      invalidField(
        'status.beginRefreshAt',
        instant(beginRefreshAt),
        'must be at least 10 minutes after status.notBefore',
      ),
    ];
  }
  if (beginRefreshAt > notAfter - REFRESH_MARGIN_MS) {
    return [
      invalidField(
        'status.beginRefreshAt',
        instant(beginRefreshAt),
        'must be at least 10 minutes before status.notAfter',
      ),
    ];
  }
  // The rest of the chain is parsed, not verified: Go's x509 cannot verify a partial chain.
  for (const block of rest) {
    // Upstream spells this one "CERTFICATE"; the leaf's message has the right spelling.
    if (block.label !== 'CERTIFICATE') return [invalidField(CHAIN, chain, notCertificates)];
    if (!parseCertificate(block.der)) {
      return [invalidField(CHAIN, chain, 'intermediate certificate does not parse as valid X.509')];
    }
  }
  return [];
}

// RFC 5322 atext, plus the UTF-8 Go's net/mail accepts (RFC 6532).
const ATOM = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u0080-\\uffff]+";
const DOT_ATOM = `${ATOM}(?:\\.${ATOM})*`;
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\.)*"';
const ADDR_SPEC = `(?:${DOT_ATOM}|${QUOTED})@(?:${DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])`;
const BARE_ADDRESS = new RegExp(`^\\s*${ADDR_SPEC}\\s*$`, 'u');
const NAMED_ADDRESS = new RegExp(`^[^<>]*<${ADDR_SPEC}>\\s*$`, 'u');

/** Whether Go's mail.ParseAddress accepts text: `local@domain` or `Name <local@domain>` (approximated). */
function isMailAddress(text: string): boolean {
  return BARE_ADDRESS.test(text) || NAMED_ADDRESS.test(text);
}

/** A time for comparison: instants compare equal whatever their spelling. */
function timeKey(text: string | undefined): number | string | null {
  const ms = parseKubeTime(text);
  if (ms === undefined) return null;
  return Number.isNaN(ms) ? String(text) : ms;
}

// type, status and reason of a written condition are validated non-empty by now, so an
// absent one in the stored status never equals it either way.
function conditionKey(condition: Condition): unknown[] {
  return [
    condition.type,
    condition.status,
    condition.reason,
    condition.message ?? '',
    timeKey(condition.lastTransitionTime),
    condition.observedGeneration ?? 0,
  ];
}

/** apimachinery's Semantic.DeepEqual of two statuses: absent and empty are the same. */
function statusesEqual(
  a: PodCertificateRequestStatus | undefined,
  b: PodCertificateRequestStatus | undefined,
): boolean {
  const key = (s: PodCertificateRequestStatus | undefined) =>
    JSON.stringify([
      (s?.conditions ?? []).map(conditionKey),
      s?.certificateChain ?? '',
      timeKey(s?.notBefore),
      timeKey(s?.beginRefreshAt),
      timeKey(s?.notAfter),
    ]);
  return key(a) === key(b);
}

/** A spec with its fields in one order and empty values dropped, for an equality test. */
function canonicalSpec(spec: PodCertificateRequestSpec | undefined): string {
  const fields = Object.entries(spec ?? {})
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([name, value]): [string, unknown] => [
      name,
      typeof value === 'object'
        ? Object.entries(value as Record<string, string>).sort(([x], [y]) => (x < y ? -1 : 1))
        : value,
    ])
    .filter(([, value]) => !(Array.isArray(value) && value.length === 0))
    .sort(([x], [y]) => (x < y ? -1 : 1));
  return JSON.stringify(fields);
}
