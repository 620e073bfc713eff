import {
  type CertificateSigningRequest,
  CSR_CONDITION_APPROVED,
  CSR_CONDITION_DENIED,
  CSR_CONDITION_FAILED,
  CSR_DURATION_ANNOTATION,
  CSR_IS_CA_ANNOTATION,
  CSR_MINIMUM_DURATION_MS,
  hasCsrCondition,
} from '../../api/certificate-signing-request.js';
import { type Issuer, isIssuerReady, issuerTypeOf } from '../../api/issuer.js';
import { parseSignerName } from '../../api/issuer-signer-name.js';
import { errorMessage } from '../../base/error-message.js';
import { goQuote } from '../../base/go-text.js';
import { formatGoDuration, parseGoDuration } from '../../pki/duration.js';
import { DEFAULT_DURATION_MS } from '../certificate-template.js';
import type { SignerScope } from '../certificaterequests/request-plan.js';

/** The issuer a CSR's signer name designates, in cert-manager's terms. */
export interface CsrIssuerRef {
  kind: 'Issuer' | 'ClusterIssuer';
  /** '' for a ClusterIssuer (and for an Issuer named without a namespace). */
  namespace: string;
  name: string;
}

/** What the signer does once the requester may use the issuer. */
export type CsrSigningPlan =
  /** A final answer: the Failed condition (and a Warning event of the same reason). */
  | { step: 'fail'; reason: string; message: string }
  /** Not now: a Warning event, the CSR stays as it is until something it depends on changes. */
  | { step: 'warn'; reason: string; message: string }
  | { step: 'sign'; issuer: Issuer; issuerType: string; durationMs: number; isCA: boolean };

/** What a CSR signer controller does next for one CSR. */
export type CsrPlan =
  | { step: 'ignore' }
  /** The Normal WaitingApproval event, nothing else. */
  | { step: 'waitForApproval' }
  | { step: 'warn'; reason: string; message: string }
  /**
   * A namespaced Issuer: the requester must hold `reference` on it (a SubjectAccessReview)
   * before `afterReview`; without it the CSR fails with deniedReference(issuer).
   */
  | { step: 'reviewReference'; issuer: CsrIssuerRef; afterReview: CsrSigningPlan }
  | CsrSigningPlan;

export const WAITING_APPROVAL_MESSAGE = 'Waiting for the Approved condition before issuing';
const GROUP = 'cert-manager.io';

/** The issuer kind of a signer-name type (cert-manager's IssuerKindFromType). */
function kindOfType(type: string): CsrIssuerRef['kind'] | undefined {
  if (type === 'issuers') return 'Issuer';
  if (type === 'clusterissuers') return 'ClusterIssuer';
  return undefined;
}

/**
 * The issuer a CSR's signer name designates (cert-manager's parser, its group, the `issuers` or
 * `clusterissuers` type), or undefined for a signer name that designates none.
 */
export function csrIssuerRef(signerName: string): CsrIssuerRef | undefined {
  const parsed = parseSignerName(signerName);
  if (!parsed || parsed.group !== GROUP) return undefined;
  const kind = kindOfType(parsed.type);
  return kind && { kind, namespace: parsed.namespace, name: parsed.name };
}

/** `Issuer ns/name`, `ClusterIssuer /name`: how cert-manager names an issuer in CSR events. */
function described(ref: CsrIssuerRef): string {
  return `${ref.kind} ${ref.namespace}/${ref.name}`;
}

/**
 * The sync order of cert-manager's CSR controller (certificatesigningrequests/sync.go), as
 * one pure function: malformed or foreign signer names, Failed and Denied (by type, whatever
 * the status), approval, an existing certificate, the issuer (missing, untyped, another type),
 * the `reference` review for namespaced Issuers, the duration, readiness. lookup reads the
 * issuer from the cache; scope says which steps this controller takes (see SignerScope).
 */
export function planCsrSync(
  csr: CertificateSigningRequest,
  lookup: (ref: CsrIssuerRef) => Issuer | undefined,
  scope: SignerScope,
): CsrPlan {
  const parsed = parseSignerName(csr.spec.signerName);
  if (!parsed || parsed.group !== GROUP) return { step: 'ignore' };
  if (hasCsrCondition(csr, CSR_CONDITION_FAILED)) return { step: 'ignore' };
  if (hasCsrCondition(csr, CSR_CONDITION_DENIED)) return { step: 'ignore' };
  const ref = csrIssuerRef(csr.spec.signerName);
  // Which controller announces approval depends on the issuer's type, so it is looked up first.
  const found = ref && lookup(ref);
  const responsible = scope.responsibleFor(found ? issuerTypeOf(found) : undefined);
  if (!hasCsrCondition(csr, CSR_CONDITION_APPROVED)) {
    return responsible ? { step: 'waitForApproval' } : { step: 'ignore' };
  }
  if (csr.status?.certificate) return { step: 'ignore' };
  if (!ref) return { step: 'ignore' };
  if (!found) {
    return responsible
      ? {
          step: 'warn',
          reason: 'IssuerNotFound',
          message: `Referenced ${described(ref)} not found`,
        }
      : { step: 'ignore' };
  }
  const issuerType = issuerTypeOf(found);
  if (issuerType === undefined) {
    return responsible
      ? {
          step: 'warn',
          reason: 'IssuerTypeMissing',
          message: `Referenced ${described(ref)} is missing type`,
        }
      : { step: 'ignore' };
  }
  if (!scope.handles(issuerType)) return { step: 'ignore' };
  const afterReview = planSigning(csr, ref, found, issuerType);
  return ref.kind === 'Issuer'
    ? { step: 'reviewReference', issuer: ref, afterReview }
    : afterReview;
}

/** The Failed answer to a requester who may not reference the namespaced Issuer. */
export function deniedReference(ref: CsrIssuerRef): CsrSigningPlan {
  return {
    step: 'fail',
    reason: 'DeniedReference',
    message: `Requester may not reference Namespaced Issuer ${ref.namespace}/${ref.name}`,
  };
}

/** The steps after the reference review: duration (parsed, at least 10 minutes), readiness. */
function planSigning(
  csr: CertificateSigningRequest,
  ref: CsrIssuerRef,
  issuer: Issuer,
  issuerType: string,
): CsrSigningPlan {
  const duration = requestedDuration(csr);
  if ('error' in duration) {
    return {
      step: 'fail',
      reason: 'ErrorParseDuration',
      message: `Failed to parse requested duration: ${duration.error}`,
    };
  }
  if (duration.ms < CSR_MINIMUM_DURATION_MS) {
    return {
      step: 'fail',
      reason: 'InvalidDuration',
      message: `CertificateSigningRequest minimum allowed duration is ${formatGoDuration(CSR_MINIMUM_DURATION_MS)}, requested ${formatGoDuration(duration.ms)}`,
    };
  }
  if (!isIssuerReady(issuer)) {
    return {
      step: 'warn',
      reason: 'IssuerNotReady',
      message: `Referenced ${ref.kind} ${issuer.metadata.namespace ?? ''}/${issuer.metadata.name} does not have a Ready status condition`,
    };
  }
  return {
    step: 'sign',
    issuer,
    issuerType,
    durationMs: duration.ms,
    isCA: csr.metadata.annotations?.[CSR_IS_CA_ANNOTATION] === 'true',
  };
}

/**
 * The lifetime a CSR asks for, with cert-manager's precedence: the duration annotation (a Go
 * duration, even when spec.expirationSeconds is set), then spec.expirationSeconds, then 90 days.
 */
export function requestedDuration(
  csr: CertificateSigningRequest,
): { ms: number } | { error: string } {
  const annotation = csr.metadata.annotations?.[CSR_DURATION_ANNOTATION];
  if (annotation === undefined) {
    const seconds = csr.spec.expirationSeconds;
    return { ms: typeof seconds === 'number' ? seconds * 1000 : DEFAULT_DURATION_MS };
  }
  try {
    return { ms: parseGoDuration(annotation) };
  } catch (err) {
    return {
      error: `failed to parse requested duration on annotation ${goQuote(CSR_DURATION_ANNOTATION)}: ${errorMessage(err)}`,
    };
  }
}
