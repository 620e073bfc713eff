import type { KeyObject, X509Certificate } from 'node:crypto';
import {
  CERTIFICATE_NAME_ANNOTATION,
  type Certificate,
  ISSUER_GROUP_ANNOTATION,
  ISSUER_KIND_ANNOTATION,
  ISSUER_NAME_ANNOTATION,
} from '../api/certificate.js';
import type { CertificateRequest } from '../api/certificate-request.js';
import { CERT_MANAGER_GROUP } from '../api/issuer-ref.js';
import type { Secret } from '../api/secret.js';
import { errorMessage } from '../base/error-message.js';
import { goList, goQuoteValue, goRfc1123, goTimeString } from '../base/go-text.js';
import type { ParsedCsr } from '../pki/csr.js';
import { parseGoDuration } from '../pki/duration.js';
import { publicKeysEqual } from '../pki/keys.js';
import { renewalTime } from '../pki/renewal-time.js';
import { applyRenewalWindows, type WindowedRenewalTime } from '../pki/renewal-windows.js';
import { privateKeyMismatches } from './private-key-match.js';
import { requestMismatches } from './request-match.js';
import { secretCertificate, secretKey, secretKeyPairs } from './secret-contents.js';
import { issuedNamesMismatches, issuedNamesOf } from './secret-names-match.js';

/** What the trigger and readiness policies look at, decoded once per sync. */
export interface PolicyInput {
  certificate: Certificate;
  /** spec.secretName in the Certificate's namespace, when it exists. */
  secret: Secret | undefined;
  /** The request of status.revision, when there is one. */
  currentRequest: CertificateRequest | undefined;
  /** Its CSR, decoded; the Error when it does not decode. */
  currentCsr: ParsedCsr | Error | undefined;
  now: Date;
}

/** Why a Certificate needs issuing (trigger) or is not ready (readiness). */
export interface PolicyViolation {
  reason: string;
  message: string;
}

/** The reasons of the policy chains (cert-manager's policies/constants.go). */
export const PolicyReason = {
  DoesNotExist: 'DoesNotExist',
  MissingData: 'MissingData',
  InvalidKeyPair: 'InvalidKeyPair',
  InvalidCertificate: 'InvalidCertificate',
  InvalidCertificateRequest: 'InvalidCertificateRequest',
  IncorrectIssuer: 'IncorrectIssuer',
  IncorrectCertificate: 'IncorrectCertificate',
  SecretMismatch: 'SecretMismatch',
  RequestChanged: 'RequestChanged',
  Renewing: 'Renewing',
  WindowError: 'WindowError',
  Expired: 'Expired',
} as const;

/** The Secret once the first checks pass: it exists, and its key and certificate decode and pair. */
interface SecretPair {
  secret: Secret;
  key: KeyObject;
  certificate: X509Certificate;
}

type Check = (input: PolicyInput, pair: SecretPair) => PolicyViolation | undefined;

const violation = (reason: string, message: string): PolicyViolation => ({ reason, message });

/**
 * The first three checks (SecretDoesNotExist, SecretIsMissingData, SecretPublicKeysDiffer): a
 * violation, or the Secret's decoded key pair, which every later check works on.
 */
function secretPair(input: PolicyInput): PolicyViolation | SecretPair {
  const { secret } = input;
  if (!secret)
    return violation(PolicyReason.DoesNotExist, 'Issuing certificate as Secret does not exist');
  if (secret.data === undefined && secret.stringData === undefined)
    return violation(
      PolicyReason.MissingData,
      'Issuing certificate as Secret does not contain any data',
    );
  const key = secretKey(secret);
  if (!key)
    return violation(
      PolicyReason.MissingData,
      'Issuing certificate as Secret does not contain a private key',
    );
  const certificate = secretCertificate(secret);
  if (!certificate)
    return violation(
      PolicyReason.MissingData,
      'Issuing certificate as Secret does not contain a certificate',
    );
  if (!key.ok)
    return violation(
      PolicyReason.InvalidKeyPair,
      `Issuing certificate as Secret contains invalid private key data: ${errorMessage(key.error)}`,
    );
  if (!certificate.ok)
    return violation(
      PolicyReason.InvalidCertificate,
      `Issuing certificate as Secret contains an invalid certificate: ${errorMessage(certificate.error)}`,
    );
  if (!secretKeyPairs(secret))
    return violation(
      PolicyReason.InvalidKeyPair,
      'Issuing certificate as Secret contains a private key that does not match the certificate',
    );
  return { secret, key: key.value, certificate: certificate.value };
}

/** `Kind.group/name` with cert-manager's defaults for an empty kind or group. */
function formatIssuer(name: string, kind: string, group: string): string {
  return `${kind || 'Issuer'}.${group || CERT_MANAGER_GROUP}/${name}`;
}

const secretIssuerAnnotationsMismatch: Check = (input, { secret }) => {
  const annotations = secret.metadata.annotations ?? {};
  const name = annotations[ISSUER_NAME_ANNOTATION] ?? '';
  const kind = annotations[ISSUER_KIND_ANNOTATION] ?? '';
  const group = annotations[ISSUER_GROUP_ANNOTATION] ?? '';
  const ref = input.certificate.spec.issuerRef;
  // Kind and group are compared with their defaults even when the Secret has no annotations.
  if (
    (name !== '' && ref.name !== name) ||
    (ref.kind || 'Issuer') !== (kind || 'Issuer') ||
    (ref.group || CERT_MANAGER_GROUP) !== (group || CERT_MANAGER_GROUP)
  )
    return violation(
      PolicyReason.IncorrectIssuer,
      `Issuing certificate as Secret was previously issued by ${goQuoteValue(formatIssuer(name, kind, group))}`,
    );
  return undefined;
};

const secretCertificateNameMismatch: Check = (input, { secret }) => {
  const name = secret.metadata.annotations?.[CERTIFICATE_NAME_ANNOTATION] ?? '';
  if (name !== '' && name !== input.certificate.metadata.name)
    return violation(
      PolicyReason.IncorrectCertificate,
      `Secret was issued for ${goQuoteValue(name)}. If this message is not transient, you might have two conflicting Certificates pointing to the same secret.`,
    );
  return undefined;
};

const secretPrivateKeyMismatchesSpec: Check = (input, { key }) => {
  const mismatches = privateKeyMismatches(key, input.certificate.spec.privateKey);
  if (mismatches.length > 0)
    return violation(
      PolicyReason.SecretMismatch,
      `Existing private key is not up to date for spec: ${goList(mismatches)}`,
    );
  return undefined;
};

const secretKeyDiffersFromCurrentRequest: Check = (input, { key }) => {
  if (!input.currentRequest) return undefined;
  const csr = input.currentCsr;
  if (!csr || csr instanceof Error)
    return violation(
      PolicyReason.InvalidCertificateRequest,
      `Failed to decode current CertificateRequest: ${errorMessage(csr ?? 'no CSR decoded')}`,
    );
  if (!publicKeysEqual(key, csr.publicKey))
    return violation(
      PolicyReason.SecretMismatch,
      'Secret contains a private key that does not match the current CertificateRequest',
    );
  return undefined;
};

const currentRequestMismatchesSpec: Check = (input, { certificate: issued }) => {
  const { currentRequest, currentCsr, certificate } = input;
  if (!currentRequest) {
    // No request to compare with (issued before, or its request was cleaned up): the Secret's
    // certificate is compared, loosely, instead.
    let mismatches: string[];
    try {
      mismatches = issuedNamesMismatches(issuedNamesOf(issued), certificate.spec);
    } catch (err) {
      return violation(
        PolicyReason.InvalidCertificate,
        `Failed to decode stored certificate: ${errorMessage(err)}`,
      );
    }
    if (mismatches.length > 0)
      return violation(
        PolicyReason.SecretMismatch,
        `Issuing certificate as Existing issued Secret is not up to date for spec: ${goList(mismatches)}`,
      );
    return undefined;
  }
  // A request whose CSR does not decode is no violation here (the check before reports it).
  if (!currentCsr || currentCsr instanceof Error) return undefined;
  const mismatches = requestMismatches(currentRequest.spec, currentCsr, certificate.spec);
  if (mismatches.length > 0)
    return violation(
      PolicyReason.RequestChanged,
      `Fields on existing CertificateRequest resource not up to date: ${goList(mismatches)}`,
    );
  return undefined;
};

/**
 * When the Secret's certificate falls due, from its own validity and the spec (cert-manager's
 * pki.RenewalTime without ARI): none under policy Disabled; under RenewBefore moved into the
 * renewal windows, with the error cert-manager reports as WindowError when none fits.
 */
export function certificateRenewalTime(
  certificate: Certificate,
  issued: X509Certificate,
): WindowedRenewalTime {
  const { renewBefore, renewBeforePercentage, renewal } = certificate.spec;
  if (renewal?.policy === 'Disabled') return { at: undefined };
  let renewBeforeMs: number | undefined;
  try {
    renewBeforeMs = renewBefore === undefined ? undefined : parseGoDuration(renewBefore);
  } catch {
    // Validation refuses such a value before it is stored; here it only means "unset".
    renewBeforeMs = undefined;
  }
  const notBefore = new Date(issued.validFrom);
  const notAfter = new Date(issued.validTo);
  const desired = renewalTime(notBefore, notAfter, renewBeforeMs, renewBeforePercentage);
  return applyRenewalWindows(notBefore, notAfter, desired, renewal?.windows ?? []);
}

const currentCertificateNearingExpiry: Check = (input, { certificate: issued }) => {
  const due = certificateRenewalTime(input.certificate, issued);
  if (!due.at || due.at.getTime() > input.now.getTime()) return undefined;
  if (due.error !== undefined) return violation(PolicyReason.WindowError, due.error);
  const scheduled = input.certificate.status?.renewalTime;
  return violation(
    PolicyReason.Renewing,
    `Renewing certificate as renewal was scheduled at ${statusTimeText(scheduled)}`,
  );
};

/** A status time as Go prints the *metav1.Time field with %s, nil included. */
export function statusTimeText(time: string | undefined): string {
  return time ? goTimeString(new Date(time)) : '<nil>';
}

const currentCertificateHasExpired: Check = (input, { certificate: issued }) => {
  const notAfter = new Date(issued.validTo);
  if (input.now.getTime() <= notAfter.getTime()) return undefined;
  return violation(PolicyReason.Expired, `Certificate expired on ${goRfc1123(notAfter)}`);
};

// After secretPair: the rows both chains share, in cert-manager's order.
const sharedChecks: readonly Check[] = [
  secretIssuerAnnotationsMismatch,
  secretCertificateNameMismatch,
  secretPrivateKeyMismatchesSpec,
  secretKeyDiffersFromCurrentRequest,
  currentRequestMismatchesSpec,
];

function firstViolation(last: Check, input: PolicyInput): PolicyViolation | undefined {
  const pair = secretPair(input);
  if ('reason' in pair) return pair;
  for (const check of [...sharedChecks, last]) {
    const found = check(input, pair);
    if (found) return found;
  }
  return undefined;
}

/** Why the Certificate needs a new certificate now, or undefined (cert-manager's trigger chain). */
export function triggerViolation(input: PolicyInput): PolicyViolation | undefined {
  return firstViolation(currentCertificateNearingExpiry, input);
}

/** Why the Certificate is not ready, or undefined (cert-manager's readiness chain). */
export function readinessViolation(input: PolicyInput): PolicyViolation | undefined {
  return firstViolation(currentCertificateHasExpired, input);
}
