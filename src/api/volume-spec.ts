import type { IssuerReference } from './issuer-ref.js';
import type { TrustBundleSource } from './trust-bundle-source.js';

/** Subject fields of a requested certificate (cert-manager's names, lists in order). */
export interface SubjectSpec {
  commonName?: string;
  organizations?: string[];
  organizationalUnits?: string[];
  countries?: string[];
  provinces?: string[];
  localities?: string[];
  streetAddresses?: string[];
  postalCodes?: string[];
  serialNumber?: string;
}

export type KeyAlgorithmName = 'RSA' | 'ECDSA' | 'Ed25519';
export type KeyEncodingName = 'PKCS1' | 'PKCS8';

/** The pod a volume belongs to, from kubelet's volume context (podInfoOnMount). */
export interface PodInfo {
  name: string;
  namespace: string;
  uid: string;
  serviceAccountName: string;
}

/** The signals a volume may ask the node to send after a rewrite (an allow-list). */
export type ReloadSignalName = 'SIGHUP' | 'SIGUSR1' | 'SIGUSR2' | 'SIGTERM';

/** How the application learns of each new generation of the volume (docs/reloading.md). */
export interface ReloadSpec {
  /**
   * reload-url as written: `http://${POD_IP}[:port][/path]`, POSTed to after each rewrite with
   * ${POD_IP} replaced by the pod's IP of the time.
   */
  url?: string;
  /** reload-signal: the signal, and whose process receives it. */
  signal?: {
    name: ReloadSignalName;
    /** reload-container: the container whose init process is signalled (default: every one). */
    container?: string;
    /** reload-pid-file (embedded mode): the file holding the pid to signal. */
    pidFile?: string;
  };
}

/**
 * Everything a volume's attributes ask for, validated, defaulted and with variables
 * expanded: what the volume manager issues and the file writer writes.
 */
export interface VolumeCertificateSpec {
  issuerRef: Required<IssuerReference>;
  /** When non-empty it replaces every subject field (RFC 4514 string). */
  literalSubject?: string;
  subject: SubjectSpec;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  /** Go duration string sent as spec.duration, e.g. `2160h0m0s`. */
  duration: string;
  durationMs: number;
  isCA: boolean;
  usages: string[];
  key: { algorithm: KeyAlgorithmName; size?: number; encoding: KeyEncodingName };
  files: {
    ca: string;
    certificate: string;
    privateKey: string;
    /** Present when pkcs12-enable is "true". */
    pkcs12?: { filename: string; password: string };
    /** combined-pem-file: the private key, then the leaf and its chain, in one file. */
    combinedPem?: string;
    /** Present when jks-enable is "true": keystore (key + chain) and truststore (CA) files. */
    jks?: { filename: string; truststoreFilename: string; password: string };
  };
  /** Group owning the files: the fs-group attribute, else the CSI volume_mount_group. */
  fsGroup?: number;
  renewBeforeMs?: number;
  reusePrivateKey: boolean;
  disableAutoRenew: boolean;
  /** Attributes with another prefix, copied verbatim to the CertificateRequest. */
  annotations: Record<string, string>;
  pod: PodInfo;
  /** reload-url and reload-signal: who is told of each rewrite; absent when nobody. */
  reload?: ReloadSpec;
  /** Where the CA file comes from instead of the request's status.ca (trust-bundle attribute). */
  trustBundle?: TrustBundleSource;
  /**
   * Present when ip-sans uses ${POD_IP} or ${POD_IPS}: the pod IPs they were
   * expanded with, first one first. Empty while the pod has no IP: the SANs then hold a
   * placeholder that only served validation, and the volume waits for the pod's IPs.
   */
  podIPs?: string[];
  /**
   * With podIPs: the ip-sans attribute as written, which an issuance expands again with the
   * pod's real IPs (attributes/pod-ip-expansion.ts), and the keys the SAN lists came under,
   * to name in the errors those IPs may cause.
   */
  podIpSans?: {
    template: string;
    keys: { dnsNames: string; ipSans: string; uriSans: string };
  };
}
