import { CertificateKind } from '../../src/api/certificate.js';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import { KubeEventKind } from '../../src/api/kube-event.js';
import { LeaseKind } from '../../src/api/lease.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import { PodKind } from '../../src/api/pod.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';

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
}

/** A cert-manager style CustomResourceDefinition kind with a status subresource. */
export function customResource(kind: ResourceKind): ServedKind {
  return {
    kind,
    statusSubresource: true,
    returnDeletedObject: true,
    requireResourceVersionOnUpdate: true,
    fieldLabels: [],
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
  customResource(CertificateKind),
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
