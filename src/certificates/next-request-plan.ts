import { createHash, type KeyObject } from 'node:crypto';
import {
  CERTIFICATE_NAME_ANNOTATION,
  CERTIFICATE_REVISION_ANNOTATION,
  type Certificate,
  CertificateCondition,
  CertificateKind,
} from '../api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
  encodeBytes,
} from '../api/certificate-request.js';
import { findCondition } from '../api/conditions.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../api/labels.js';
import { apiVersionOf } from '../api/meta.js';
import type { ParsedCsr } from '../pki/csr.js';
import { publicKeysEqual } from '../pki/keys.js';
import { requestMismatches } from './request-match.js';
import { requestRevision } from './request-revision.js';
import { isStaleFailure } from './stale-failure.js';

/** An owned request and its CSR, decoded (the Error when it does not decode). */
export interface OwnedRequest {
  request: CertificateRequest;
  csr: ParsedCsr | Error;
}

/** What cert-manager's requestmanager controller does in one sync. */
export interface NextRequestPlan {
  /** Requests to delete: no readable revision; of the next revision but stale or failed before. */
  remove: CertificateRequest[];
  /** Create the next revision's request (none is left). */
  create: boolean;
  /** Several requests remain for the next revision: cert-manager only logs this and waits. */
  duplicates: boolean;
}

/**
 * Keeps exactly one request for the next revision, (status.revision ?? 0) + 1: requests without
 * an integer revision go; of the next revision's, those that no longer match the spec, whose CSR
 * does not decode or is for another key than the next private key, and those that failed (or
 * were denied) before the current Issuing condition began (a previous attempt's) go. None left: create one.
 */
export function nextRequestPlan(input: {
  certificate: Certificate;
  owned: readonly OwnedRequest[];
  nextKey: KeyObject;
}): NextRequestPlan {
  const { certificate, owned, nextKey } = input;
  const next = (certificate.status?.revision ?? 0) + 1;
  const issuingSince = findCondition(
    certificate.status?.conditions,
    CertificateCondition.Issuing,
  )?.lastTransitionTime;
  const remove: CertificateRequest[] = [];
  const kept: CertificateRequest[] = [];
  for (const { request, csr } of owned) {
    const revision = requestRevision(request);
    if (revision === undefined) {
      remove.push(request);
      continue;
    }
    if (revision !== next) continue;
    if (
      csr instanceof Error ||
      requestMismatches(request.spec, csr, certificate.spec).length > 0 ||
      !publicKeysEqual(csr.publicKey, nextKey)
    ) {
      remove.push(request);
      continue;
    }
    if (isStaleFailure(request, issuingSince)) {
      remove.push(request);
      continue;
    }
    kept.push(request);
  }
  return { remove, create: kept.length === 0, duplicates: kept.length > 1 };
}

// Names under this length are used as they are; longer ones are shortened and hashed.
const MAX_BASE_NAME = 233;
const HASH_LENGTH = 64;

/** Cut to at most max characters, ending on a letter or digit (cert-manager's DNSSafeShortenToNCharacters). */
function dnsSafeShorten(name: string, max: number): string {
  if (name.length < max) return name;
  const cut = name.slice(0, max);
  const lastAlphanumeric = cut.search(/[a-zA-Z0-9][^a-zA-Z0-9]*$/);
  return lastAlphanumeric < 0 ? '' : cut.slice(0, lastAlphanumeric + 1);
}

/**
 * The request's stable name (cert-manager's StableCertificateRequestName): `<certificate>-<revision>`,
 * where a certificate name over 233 characters becomes its first 168 (ending on a letter or
 * digit), a dash and the SHA-256 of the whole name, so a retried create finds AlreadyExists.
 */
export function certificateRequestName(certificateName: string, revision: number): string {
  let base = certificateName;
  if (base.length > MAX_BASE_NAME) {
    const hash = createHash('sha256').update(certificateName).digest('hex');
    const prefix = dnsSafeShorten(certificateName, MAX_BASE_NAME - HASH_LENGTH - 1);
    base = prefix ? `${prefix}-${hash}` : hash;
  }
  return `${base}-${revision}`;
}

// cert-manager's default --copied-annotation-prefixes: everything but these tools' own.
const NOT_COPIED = ['kubectl.kubernetes.io/', 'fluxcd.io/', 'argocd.argoproj.io/'];

/**
 * The CertificateRequest for the next revision: the Certificate's annotations (but the tools'
 * own) and labels, the revision, key Secret and Certificate annotations, a controller owner
 * reference, and duration, issuerRef, isCA and usages copied as written (usages not defaulted).
 */
export function buildNextRequest(input: {
  certificate: Certificate;
  revision: number;
  keySecretName: string;
  csrPem: string;
}): CertificateRequest {
  const { certificate, revision, keySecretName, csrPem } = input;
  const { spec, metadata } = certificate;
  const copied = Object.fromEntries(
    Object.entries(metadata.annotations ?? {}).filter(
      ([key]) => !NOT_COPIED.some((p) => key.startsWith(p)),
    ),
  );
  return {
    apiVersion: apiVersionOf(CertificateRequestKind),
    kind: CertificateRequestKind.kind,
    metadata: {
      name: certificateRequestName(metadata.name, revision),
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
      ...(metadata.labels ? { labels: { ...metadata.labels } } : {}),
      annotations: {
        ...copied,
        [CERTIFICATE_REVISION_ANNOTATION]: String(revision),
        [PRIVATE_KEY_SECRET_NAME_ANNOTATION]: keySecretName,
        [CERTIFICATE_NAME_ANNOTATION]: metadata.name,
      },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(CertificateKind),
          kind: CertificateKind.kind,
          name: metadata.name,
          uid: metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      request: encodeBytes(csrPem),
      issuerRef: { ...spec.issuerRef },
      ...(spec.duration !== undefined ? { duration: spec.duration } : {}),
      ...(spec.isCA !== undefined ? { isCA: spec.isCA } : {}),
      ...(spec.usages !== undefined ? { usages: [...spec.usages] } : {}),
    },
  };
}
