import { type Condition, findCondition } from './conditions.js';
import { CERT_MANAGER_GROUP } from './issuer-ref.js';
import type { KubeObject, ResourceKind } from './meta.js';

export const IssuerKind: ResourceKind = {
  group: CERT_MANAGER_GROUP,
  version: 'v1',
  kind: 'Issuer',
  plural: 'issuers',
  namespaced: true,
};

export const ClusterIssuerKind: ResourceKind = {
  group: CERT_MANAGER_GROUP,
  version: 'v1',
  kind: 'ClusterIssuer',
  plural: 'clusterissuers',
  namespaced: false,
};

export interface CAIssuerSpec {
  secretName: string;
  crlDistributionPoints?: string[];
  ocspServers?: string[];
  issuingCertificateURLs?: string[];
}

export interface SelfSignedIssuerSpec {
  crlDistributionPoints?: string[];
}

/** The spec of an Issuer or ClusterIssuer; other issuer types (acme, vault...) are kept but not acted on. */
export interface IssuerSpec {
  ca?: CAIssuerSpec;
  selfSigned?: SelfSignedIssuerSpec;
  [otherType: string]: unknown;
}

export interface IssuerStatus {
  conditions?: Condition[];
}

/** An Issuer or a ClusterIssuer: the same shape, told apart by kind. */
export interface Issuer extends KubeObject {
  spec: IssuerSpec;
  status?: IssuerStatus;
}

/** The issuer types this stack signs for. */
export type IssuerType = 'ca' | 'selfSigned';

/**
 * Every issuer type key cert-manager knows, in the order its webhook checks them; used to
 * detect "no type" versus "not ours".
 */
export const ISSUER_TYPE_KEYS = ['acme', 'ca', 'selfSigned', 'vault', 'venafi'] as const;

/** The configured issuer type key, or undefined when none is set. */
export function issuerTypeOf(issuer: Issuer): string | undefined {
  for (const key of ISSUER_TYPE_KEYS) {
    if (issuer.spec?.[key] !== undefined && issuer.spec[key] !== null) return key;
  }
  return undefined;
}

/** True when the issuer's Ready condition is True. */
export function isIssuerReady(issuer: Issuer): boolean {
  return findCondition(issuer.status?.conditions, 'Ready')?.status === 'True';
}
