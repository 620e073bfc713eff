import { CertificateKind } from '../../src/api/certificate.js';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { CertificateSigningRequestKind } from '../../src/api/certificate-signing-request.js';
import { ClusterTrustBundleKind } from '../../src/api/cluster-trust-bundle.js';
import { ConfigMapKind } from '../../src/api/config-map.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import { KubeEventKind } from '../../src/api/kube-event.js';
import { LeaseKind } from '../../src/api/lease.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import { PodKind } from '../../src/api/pod.js';
import { PodCertificateRequestKind } from '../../src/api/pod-certificate-request.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { TrustManagerBundleKind } from '../../src/api/trust-manager-bundle.js';
import {
  clusterTrustBundleStrategy,
  podCertificateRequestFromVersion,
  podCertificateRequestStrategy,
  podCertificateRequestToVersion,
} from './certificates.js';
import { certificateSigningRequestStrategy } from './csr.js';
import type { AuthorizationDecision, ResourceAttributes } from './rbac-authorizer.js';

/** What a kind's strategy may know about a write besides the objects. */
export interface WriteContext {
  /** The API server's clock. */
  now: Date;
  /** Who is writing. */
  user: string;
  /** Who is writing, as the authenticator describes them (what a CSR records of its requester). */
  requester: {
    username: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  /**
   * Whether the writer may do verb on the `signers` resource named signerName or
   * `<domain>/*` (certauthorization.IsAuthorizedForSignerName); always true without RBAC
   * and for the server's admin identity.
   */
  allowedOnSigner(verb: string, signerName: string): boolean;
  /** The server's authorizer on any request (allowed without RBAC). */
  authorize(request: ResourceAttributes): AuthorizationDecision;
  /** The version of the request's URL (the object given is already converted to storage). */
  version: string;
}

/**
 * A kind's registry strategy and admission plugins, for kinds whose writes the generic
 * semantics do not cover: each returns the object to store (defaulted, with what the server
 * keeps copied in) or throws an ApiStatusError (422 for field errors, 403 from an admission
 * plugin). update and updateStatus get the stored object at the written resourceVersion.
 */
export interface KindStrategy {
  create(object: KubeObject, context: WriteContext): Promise<KubeObject>;
  update(object: KubeObject, stored: KubeObject, context: WriteContext): KubeObject;
  /** The status subresource's strategy; without one, status writes are stored as sent. */
  updateStatus?(object: KubeObject, stored: KubeObject, context: WriteContext): KubeObject;
  /** The approval subresource's strategy (CSRs); the kind has one only when this is set. */
  updateApproval?(object: KubeObject, stored: KubeObject, context: WriteContext): KubeObject;
}

/** A kind the fake API server serves, with the per-kind behaviour of the real server. */
export interface ServedKind {
  kind: ResourceKind;
  /** Has a `/status` subresource (writes to the object then ignore status). */
  statusSubresource: boolean;
  /** DELETE answers the deleted object (custom resources, pods) rather than a Success Status. */
  returnDeletedObject: boolean;
  /** PUT needs metadata.resourceVersion (custom resources refuse unconditional updates). */
  requireResourceVersionOnUpdate: boolean;
  /** Field selector labels besides metadata.name and metadata.namespace. */
  fieldLabels: readonly string[];
  /** What the API server does to every written object of the kind before storing it. */
  normalize: (object: KubeObject) => KubeObject;
  /** Defaulting, validation and admission beyond the generic semantics, for kinds that have them. */
  strategy?: KindStrategy;
  /** Only create is served, and its answer (the strategy's) is not stored: reviews. */
  createOnly?: boolean;
  /**
   * The versions the kind can be served in, preferred first, over one storage (kind.version);
   * the server serves those its servedVersions say. Without it, kind.version only.
   */
  versions?: readonly string[];
  /** The API server's conversion of a stored object to what a client of version reads. */
  toVersion?: (object: KubeObject, version: string) => KubeObject;
  /**
   * Its conversion of an object a client of version wrote into storage; stored is the object
   * the write replaces (none on create), whose fields version cannot express are kept.
   */
  fromVersion?: (object: KubeObject, version: string, stored: KubeObject | undefined) => KubeObject;
}

/**
 * A cert-manager style CustomResourceDefinition kind with a status subresource; fieldLabels
 * are its CRD's `selectableFields` (without the leading dot).
 */
export function customResource(
  kind: ResourceKind,
  fieldLabels: readonly string[] = [],
): ServedKind {
  return {
    kind,
    statusSubresource: true,
    returnDeletedObject: true,
    requireResourceVersionOnUpdate: true,
    fieldLabels,
    normalize: (object) => object,
  };
}

/** A built-in kind: unconditional updates allowed. */
export function builtinKind(
  kind: ResourceKind,
  options: Partial<Omit<ServedKind, 'kind'>> = {},
): ServedKind {
  return {
    kind,
    statusSubresource: false,
    returnDeletedObject: false,
    requireResourceVersionOnUpdate: false,
    fieldLabels: [],
    normalize: (object) => object,
    ...options,
  };
}

/** The kinds cert-csi reads and writes, with the field selectors the API server offers for them. */
export const certCsiKinds: readonly ServedKind[] = [
  // cert-manager's Certificate CRD (deploy/manifests/crds.yaml, unchanged) declares these.
  customResource(CertificateKind, [
    'spec.issuerRef.group',
    'spec.issuerRef.kind',
    'spec.issuerRef.name',
  ]),
  customResource(CertificateRequestKind),
  customResource(IssuerKind),
  customResource(ClusterIssuerKind),
  builtinKind(SecretKind, { fieldLabels: ['type'], normalize: foldStringData }),
  builtinKind(PodKind, {
    statusSubresource: true,
    returnDeletedObject: true,
    fieldLabels: ['spec.nodeName', 'spec.serviceAccountName', 'status.phase'],
  }),
  builtinKind(LeaseKind),
  builtinKind(NamespaceKind, { fieldLabels: ['status.phase'] }),
  // PodCertificateRequests and ClusterTrustBundles refuse unconditional updates.
  builtinKind(PodCertificateRequestKind, {
    statusSubresource: true,
    requireResourceVersionOnUpdate: true,
    fieldLabels: ['spec.signerName', 'spec.podName', 'spec.nodeName'],
    strategy: podCertificateRequestStrategy,
    versions: ['v1', 'v1beta1'],
    toVersion: podCertificateRequestToVersion,
    fromVersion: podCertificateRequestFromVersion,
  }),
  builtinKind(CertificateSigningRequestKind, {
    statusSubresource: true,
    fieldLabels: ['spec.signerName'],
    strategy: certificateSigningRequestStrategy,
  }),
  builtinKind(ClusterTrustBundleKind, {
    requireResourceVersionOnUpdate: true,
    fieldLabels: ['spec.signerName'],
    strategy: clusterTrustBundleStrategy,
    // The same fields in both versions: conversion only changes apiVersion.
    versions: ['v1', 'v1beta1'],
  }),
  builtinKind(KubeEventKind, {
    fieldLabels: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'type',
    ],
  }),
  // Trust bundles volumes follow (trust-bundle attribute): ConfigMaps and trust-manager's Bundle.
  builtinKind(ConfigMapKind),
  customResource(TrustManagerBundleKind),
];

/** The API server folds a Secret's write-only stringData into data (base64) and drops it. */
export function foldStringData(object: KubeObject): KubeObject {
  const secret = object as Secret;
  if (secret.stringData === undefined) return object;
  const { stringData, ...rest } = secret;
  const data = { ...(secret.data ?? {}) };
  for (const [key, value] of Object.entries(stringData)) {
    data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  }
  return { ...rest, data } as Secret;
}
