import type { Condition } from './conditions.js';
import { CERT_MANAGER_GROUP, type IssuerReference } from './issuer-ref.js';
import type { KubeObject, ResourceKind } from './meta.js';
import type { SubjectSpec } from './volume-spec.js';

export const CertificateKind: ResourceKind = {
  group: CERT_MANAGER_GROUP,
  version: 'v1',
  kind: 'Certificate',
  plural: 'certificates',
  namespaced: true,
};

/** The subject fields besides the common name (cert-manager's X509Subject). */
export type CertificateSubjectSpec = Omit<SubjectSpec, 'commonName'>;

export type PrivateKeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519';
export type PrivateKeyEncoding = 'PKCS1' | 'PKCS8';
export type RotationPolicy = 'Never' | 'Always';

export interface CertificatePrivateKey {
  rotationPolicy?: RotationPolicy;
  encoding?: PrivateKeyEncoding;
  algorithm?: PrivateKeyAlgorithm;
  size?: number;
}

/** A Secret key holding a keystore password. */
export interface SecretKeySelector {
  name: string;
  key?: string;
}

export type Pkcs12Profile = 'LegacyRC2' | 'LegacyDES' | 'Modern2023' | 'Modern2026';

export interface Pkcs12Keystore {
  create: boolean;
  profile?: Pkcs12Profile;
  password?: string;
  passwordSecretRef?: SecretKeySelector;
}

export interface JksKeystore {
  create: boolean;
  alias?: string;
  password?: string;
  passwordSecretRef?: SecretKeySelector;
}

export interface CertificateKeystores {
  pkcs12?: Pkcs12Keystore;
  jks?: JksKeystore;
}

export interface NameConstraintItem {
  dnsDomains?: string[];
  ipRanges?: string[];
  emailAddresses?: string[];
  uriDomains?: string[];
}

export interface NameConstraints {
  critical?: boolean;
  permitted?: NameConstraintItem;
  excluded?: NameConstraintItem;
}

export interface OtherName {
  oid?: string;
  utf8Value?: string;
}

export interface RenewalWindow {
  cron: string;
  timezone?: string;
  windowDuration: string;
}

export interface CertificateRenewal {
  policy?: 'RenewBefore' | 'Disabled';
  windows?: RenewalWindow[];
}

export type AdditionalOutputFormatType = 'DER' | 'CombinedPEM';

export type SignatureAlgorithm =
  | 'SHA256WithRSA'
  | 'SHA384WithRSA'
  | 'SHA512WithRSA'
  | 'ECDSAWithSHA256'
  | 'ECDSAWithSHA384'
  | 'ECDSAWithSHA512'
  | 'PureEd25519';

/** Every field of cert-manager.io/v1 Certificate's spec (cert-manager's CRD). */
export interface CertificateSpec {
  secretName: string;
  issuerRef: IssuerReference;
  commonName?: string;
  literalSubject?: string;
  subject?: CertificateSubjectSpec;
  dnsNames?: string[];
  ipAddresses?: string[];
  uris?: string[];
  emailAddresses?: string[];
  otherNames?: OtherName[];
  /** Go duration strings, e.g. `2160h`. */
  duration?: string;
  renewBefore?: string;
  renewBeforePercentage?: number;
  renewal?: CertificateRenewal;
  isCA?: boolean;
  usages?: string[];
  encodeUsagesInRequest?: boolean;
  privateKey?: CertificatePrivateKey;
  signatureAlgorithm?: SignatureAlgorithm;
  secretTemplate?: { annotations?: Record<string, string>; labels?: Record<string, string> };
  keystores?: CertificateKeystores;
  additionalOutputFormats?: { type: AdditionalOutputFormatType }[];
  nameConstraints?: NameConstraints;
  revisionHistoryLimit?: number;
}

export interface CertificateStatus {
  conditions?: Condition[];
  /** RFC 3339 timestamps, second precision. */
  lastFailureTime?: string;
  notBefore?: string;
  notAfter?: string;
  renewalTime?: string;
  revision?: number;
  nextPrivateKeySecretName?: string;
  failedIssuanceAttempts?: number;
  /** ACME renewal information; never set here (no ACME issuer). */
  acme?: Record<string, unknown>;
}

export interface Certificate extends KubeObject {
  spec: CertificateSpec;
  status?: CertificateStatus;
}

/** Condition types of a Certificate. */
export const CertificateCondition = {
  Ready: 'Ready',
  Issuing: 'Issuing',
} as const;

/** The revision a CertificateRequest was created for, as a decimal string. */
export const CERTIFICATE_REVISION_ANNOTATION = 'cert-manager.io/certificate-revision';
/** The Certificate a CertificateRequest or Secret belongs to. */
export const CERTIFICATE_NAME_ANNOTATION = 'cert-manager.io/certificate-name';
/** Labels a next-private-key Secret. */
export const NEXT_PRIVATE_KEY_LABEL = 'cert-manager.io/next-private-key';
/** Marks the Secrets cert-manager manages ("for attention of"). */
export const MANAGED_SECRET_LABEL = 'controller.cert-manager.io/fao';
/** A Certificate asking for a temporary certificate while its request is pending. */
export const ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION = 'cert-manager.io/issue-temporary-certificate';
/** The issuer that signed a Secret's certificate, as the issuing controller records it. */
export const ISSUER_NAME_ANNOTATION = 'cert-manager.io/issuer-name';
export const ISSUER_KIND_ANNOTATION = 'cert-manager.io/issuer-kind';
export const ISSUER_GROUP_ANNOTATION = 'cert-manager.io/issuer-group';
