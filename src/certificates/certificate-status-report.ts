import type { X509Certificate } from 'node:crypto';
import {
  type Certificate,
  CertificateKind,
  ISSUER_GROUP_ANNOTATION,
  ISSUER_KIND_ANNOTATION,
  ISSUER_NAME_ANNOTATION,
} from '../api/certificate.js';
import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import type { Condition } from '../api/conditions.js';
import { defaultIssuerRef } from '../api/issuer-ref.js';
import type { NamespacedName } from '../api/namespaced-name.js';
import {
  CA_CERT_KEY,
  type Secret,
  SecretKind,
  secretValue,
  TLS_CERT_KEY,
  TLS_PRIVATE_KEY_KEY,
} from '../api/secret.js';
import { errorMessage } from '../base/error-message.js';
import { readCertificateFields } from '../pki/certificate-fields.js';
import { splitPemCertificates } from '../pki/chain.js';
import { decodePrivateKey, keySpecOf, publicKeysEqual } from '../pki/keys.js';
import { describeSubject } from '../pki/subject.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';
import { CertificateNotFoundError } from './manual-trigger.js';
import { gatherRequests } from './request-gatherer.js';
import { issuedNamesOf } from './secret-names-match.js';

// What `cert-csi status --certificate` shows (cmctl status certificate's content, with the
// current and the next request and the last failure), as data: the text and --json forms are
// both made from it.

/** The first certificate of the Secret's tls.crt. */
export interface LeafSummary {
  /** RFC 4514, as `openssl x509 -subject -nameopt RFC2253` prints it. */
  subject: string;
  issuer: string;
  /** Lowercase hex, as cmctl prints it. */
  serialNumber: string;
  notBefore: string;
  notAfter: string;
  /** `RSA 2048`, `ECDSA P-256`, `Ed25519`, or the key type when unsupported. */
  publicKey: string;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  emailAddresses: string[];
}

/**
 * tls.key against the leaf: absent, matching it, not matching it, not a usable key, or present
 * with no readable certificate to compare it with.
 */
export type PrivateKeyState = 'missing' | 'matches' | 'mismatch' | 'unreadable' | 'present';

/** The Secret spec.secretName names. */
export interface SecretReport {
  name: string;
  found: boolean;
  /** Why it could not be read (other than not existing). */
  error?: string;
  /** The issuer the issuing controller recorded (cert-manager.io/issuer-name, -kind, -group). */
  issuerAnnotations: { name?: string; kind?: string; group?: string };
  certificate?: LeafSummary;
  /** Why there is no certificate summary although the Secret exists. */
  certificateError?: string;
  privateKey?: PrivateKeyState;
  privateKeyError?: string;
  /** ca.crt is set. */
  hasCA?: boolean;
}

/** A CertificateRequest of the Certificate, as the gatherer found it. */
export interface RequestReport {
  name: string;
  namespace: string;
  createdAt?: string;
  conditions: Condition[];
  failureTime?: string;
}

/** The requests of the current revision and of the next one. */
export interface RequestsReport {
  /** status.revision; no current request without one. */
  currentRevision?: number;
  nextRevision: number;
  current?: RequestReport;
  next?: RequestReport;
  /** Why they could not be told (duplicates of a revision, the list failed). */
  error?: string;
}

/** Everything `cert-csi status --certificate` prints. */
export interface CertificateStatusReport {
  name: string;
  namespace: string;
  createdAt?: string;
  generation?: number;
  /** With cert-manager's defaults filled in. */
  issuerRef: { name: string; kind: string; group: string };
  dnsNames: string[];
  conditions: Condition[];
  notBefore?: string;
  notAfter?: string;
  renewalTime?: string;
  revision?: number;
  lastFailureTime?: string;
  failedIssuanceAttempts?: number;
  secret: SecretReport;
  requests: RequestsReport;
}

/** What the report is made of; secret and requests are an error's message when not read. */
export interface CertificateStatusInput {
  certificate: Certificate;
  /** undefined when the Secret does not exist. */
  secret: Secret | undefined | { error: string };
  requests: CertificateRequest[] | { error: string };
}

// The fields that have a value: an absent one stays absent in --json rather than null.
const defined = <T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };

/** The report of a Certificate and what was read beside it; never throws. */
export function certificateStatusReport(input: CertificateStatusInput): CertificateStatusReport {
  const { certificate } = input;
  const status = certificate.status ?? {};
  const { metadata, spec } = certificate;
  return {
    name: metadata.name,
    namespace: metadata.namespace ?? '',
    ...defined({ createdAt: metadata.creationTimestamp, generation: metadata.generation }),
    issuerRef: defaultIssuerRef(spec.issuerRef),
    dnsNames: spec.dnsNames ?? [],
    conditions: status.conditions ?? [],
    ...defined({
      notBefore: status.notBefore,
      notAfter: status.notAfter,
      renewalTime: status.renewalTime,
      revision: status.revision,
      lastFailureTime: status.lastFailureTime,
      failedIssuanceAttempts: status.failedIssuanceAttempts,
    }),
    secret: secretReport(spec.secretName, input.secret),
    requests: requestsReport(certificate, input.requests),
  };
}

function secretReport(name: string, secret: CertificateStatusInput['secret']): SecretReport {
  if (secret === undefined) return { name, found: false, issuerAnnotations: {} };
  if ('error' in secret) return { name, found: false, error: secret.error, issuerAnnotations: {} };
  const annotations = secret.metadata.annotations ?? {};
  const report: SecretReport = {
    name,
    found: true,
    issuerAnnotations: defined({
      name: annotations[ISSUER_NAME_ANNOTATION],
      kind: annotations[ISSUER_KIND_ANNOTATION],
      group: annotations[ISSUER_GROUP_ANNOTATION],
    }),
    hasCA: Boolean(secretValue(secret, CA_CERT_KEY)),
  };
  let leaf: X509Certificate | undefined;
  const certPem = secretValue(secret, TLS_CERT_KEY);
  if (!certPem) {
    report.certificateError = `${TLS_CERT_KEY} is not set`;
  } else {
    try {
      leaf = splitPemCertificates(certPem)[0];
      if (!leaf) throw new Error('no PEM certificate in it');
      report.certificate = leafSummary(leaf);
    } catch (err) {
      leaf = undefined;
      report.certificateError = `${TLS_CERT_KEY} cannot be read: ${errorMessage(err)}`;
    }
  }
  const keyPem = secretValue(secret, TLS_PRIVATE_KEY_KEY);
  if (!keyPem) {
    report.privateKey = 'missing';
  } else {
    try {
      const key = decodePrivateKey(keyPem);
      // Without a readable certificate there is nothing to compare it with.
      if (!leaf) report.privateKey = 'present';
      else report.privateKey = publicKeysEqual(key, leaf.publicKey) ? 'matches' : 'mismatch';
    } catch (err) {
      report.privateKey = 'unreadable';
      report.privateKeyError = errorMessage(err);
    }
  }
  return report;
}

function leafSummary(leaf: X509Certificate): LeafSummary {
  const fields = readCertificateFields(leaf.raw);
  const names = issuedNamesOf(leaf);
  return {
    subject: describeSubject(fields.subjectDer),
    issuer: describeSubject(fields.issuerDer),
    serialNumber: leaf.serialNumber.toLowerCase(),
    notBefore: fields.notBefore.toISOString().replace(/\.000Z$/, 'Z'),
    notAfter: fields.notAfter.toISOString().replace(/\.000Z$/, 'Z'),
    publicKey: publicKeyText(leaf),
    dnsNames: names.dnsNames,
    ipAddresses: names.ipAddresses,
    uris: names.uris,
    emailAddresses: names.emailAddresses,
  };
}

function publicKeyText(leaf: X509Certificate): string {
  try {
    const spec = keySpecOf(leaf.publicKey);
    if (spec.algorithm === 'RSA') return `RSA ${spec.size}`;
    if (spec.algorithm === 'ECDSA') return `ECDSA P-${spec.size}`;
    return spec.algorithm;
  } catch {
    return String(leaf.publicKey.asymmetricKeyType ?? 'unknown');
  }
}

function requestsReport(
  certificate: Certificate,
  requests: CertificateStatusInput['requests'],
): RequestsReport {
  const revision = certificate.status?.revision;
  const base = {
    ...(revision === undefined ? {} : { currentRevision: revision }),
    nextRevision: (revision ?? 0) + 1,
  };
  if ('error' in requests) return { ...base, error: requests.error };
  try {
    const { current, next } = gatherRequests(certificate, requests);
    return {
      ...base,
      ...(current ? { current: requestReport(current) } : {}),
      ...(next ? { next: requestReport(next) } : {}),
    };
  } catch (err) {
    // Duplicates of a revision: cert-manager's own message.
    return { ...base, error: errorMessage(err) };
  }
}

function requestReport(request: CertificateRequest): RequestReport {
  return {
    name: request.metadata.name,
    namespace: request.metadata.namespace ?? '',
    ...defined({
      createdAt: request.metadata.creationTimestamp,
      failureTime: request.status?.failureTime,
    }),
    conditions: request.status?.conditions ?? [],
  };
}

/**
 * Reads a Certificate, its Secret and the CertificateRequests of its namespace from a store
 * (the cluster API, or an embedded plugin's state dir) and makes the report. A missing
 * Certificate throws CertificateNotFoundError; a Secret or request list that cannot be read is
 * reported in its section.
 */
export async function readCertificateStatus(
  store: Pick<ResourceStore, 'get' | 'list'>,
  ref: NamespacedName,
): Promise<CertificateStatusReport> {
  let certificate: Certificate;
  try {
    certificate = await store.get<Certificate>(CertificateKind, ref.name, ref.namespace);
  } catch (err) {
    if (isStoreError(err, 'NotFound')) throw new CertificateNotFoundError(ref);
    throw err;
  }
  const [secret, requests] = await Promise.all([
    store.get<Secret>(SecretKind, certificate.spec.secretName, ref.namespace).then(
      (found) => found,
      (err: unknown) => (isStoreError(err, 'NotFound') ? undefined : { error: errorMessage(err) }),
    ),
    store.list<CertificateRequest>(CertificateRequestKind, { namespace: ref.namespace }).then(
      (list) => list.items,
      (err: unknown) => ({ error: errorMessage(err) }),
    ),
  ]);
  return certificateStatusReport({ certificate, secret, requests });
}
