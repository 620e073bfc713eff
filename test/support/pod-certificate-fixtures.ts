import type { KeyObject } from 'node:crypto';
import type { ClusterTrustBundle } from '../../src/api/cluster-trust-bundle.js';
import { formatTimestamp } from '../../src/api/conditions.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
  type PodCertificateRequestSpec,
  type PodCertificateRequestStatus,
} from '../../src/api/pod-certificate-request.js';
import { createSelfSignedCa, signCertificate } from '../../src/pki/certificate.js';
import { generatePrivateKey, type KeySpec, spkiOf } from '../../src/pki/keys.js';
import { createStubPkcs10Request, signPodUid } from '../../src/pki/pod-certificate-key.js';
import { encodeSubjectAltNames } from '../../src/pki/san.js';
import { subjectToDer } from '../../src/pki/subject.js';

// What kubelet and a signer write for a pod certificate (KEP-4317),
// for the admission rules' tests and the fake API server's.

export const SIGNER_NAME = 'example.com/spiffe';
export const POD_UID = '4f1c2d3e-0000-4000-8000-00000000a001';
const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;

/** A fresh key kubelet could generate (ECDSA P-256 unless told). */
export function newKey(spec: KeySpec = { algorithm: 'ECDSA', size: 256 }): Promise<KeyObject> {
  return generatePrivateKey(spec);
}

/** The spec kubelet fills in, without key material. */
export function podIdentity(): PodCertificateRequestSpec {
  return {
    signerName: SIGNER_NAME,
    podName: 'api-0',
    podUID: POD_UID,
    serviceAccountName: 'api',
    serviceAccountUID: '9b8a7c6d-0000-4000-8000-00000000b002',
    nodeName: 'worker-3',
    nodeUID: '1a2b3c4d-0000-4000-8000-00000000c003',
  };
}

/** The key fields of a 1.35 kubelet (pkixPublicKey with the pod UID signed) or a 1.36 one (stub request). */
export async function keyFields(
  key: KeyObject,
  form: 'pkix' | 'stub',
  podUID = POD_UID,
): Promise<Partial<PodCertificateRequestSpec>> {
  if (form === 'stub') {
    return { stubPKCS10Request: (await createStubPkcs10Request(key)).toString('base64') };
  }
  return {
    pkixPublicKey: spkiOf(key).toString('base64'),
    proofOfPossession: signPodUid(key, podUID).toString('base64'),
  };
}

/** A PodCertificateRequest as kubelet creates it (no maxExpirationSeconds: the server defaults it). */
export async function kubeletRequest(
  key: KeyObject,
  form: 'pkix' | 'stub',
  spec: Partial<PodCertificateRequestSpec> = {},
): Promise<PodCertificateRequest> {
  return {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: PodCertificateRequestKind.kind,
    metadata: {
      name: 'req-7xk2q',
      namespace: 'shop',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'api-0', uid: POD_UID }],
    },
    spec: { ...podIdentity(), ...(await keyFields(key, form)), ...spec },
  };
}

/** A signer's CA: key and self-signed certificate. */
export interface TestSigner {
  key: KeyObject;
  certificatePem: string;
}

/** A CA that signs leaves for the tests (its certificate is a valid trust anchor). */
export async function makeSigner(commonName = 'pod signer CA'): Promise<TestSigner> {
  const key = await newKey();
  const certificatePem = await createSelfSignedCa({
    key,
    commonName,
    durationMs: 365 * 24 * HOUR_MS,
    now: new Date(Date.now() - HOUR_MS),
  });
  return { key, certificatePem };
}

/** What a leaf looks like; defaults are a signer's: now - 2 min, 24 h, no names. */
export interface LeafOptions {
  notBefore?: Date;
  lifetimeMs?: number;
  dnsNames?: string[];
  emailAddresses?: string[];
  ipAddresses?: string[];
  isCA?: boolean;
}

/** A leaf certificate PEM for publicKey, signed by signer (or self-signed by signer's key when it is a CA cert of its own). */
export async function issueLeaf(
  signer: TestSigner,
  publicKey: KeyObject,
  options: LeafOptions = {},
): Promise<string> {
  const names = {
    dnsNames: options.dnsNames ?? [],
    emailAddresses: options.emailAddresses ?? [],
    ipAddresses: options.ipAddresses ?? [],
  };
  const hasNames =
    names.dnsNames.length + names.emailAddresses.length + names.ipAddresses.length > 0;
  return signCertificate(
    {
      subjectDer: subjectToDer(hasNames ? {} : { commonName: 'pod' }),
      publicKey,
      ...(hasNames && { sanExtension: { critical: true, der: encodeSubjectAltNames(names) } }),
    },
    {
      durationMs: options.lifetimeMs ?? 24 * HOUR_MS,
      isCA: options.isCA ?? false,
      usages: ['digital signature'],
    },
    signer,
    wholeSeconds(options.notBefore ?? new Date(Date.now() - 2 * MINUTE_MS)),
  );
}

/** A date without milliseconds, as X.509 and metav1.Time hold them. */
export function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

/** The Issued status a signer writes for a leaf issued at notBefore for lifetimeMs. */
export function issuedStatus(
  chain: string,
  notBefore: Date,
  lifetimeMs = 24 * HOUR_MS,
  refreshAfterMs = lifetimeMs / 2,
): PodCertificateRequestStatus {
  const start = wholeSeconds(notBefore).getTime();
  return {
    conditions: [
      {
        type: 'Issued',
        status: 'True',
        reason: 'Issued',
        message: 'issued',
        lastTransitionTime: formatTimestamp(new Date()),
      },
    ],
    certificateChain: chain,
    notBefore: formatTimestamp(new Date(start)),
    beginRefreshAt: formatTimestamp(new Date(start + refreshAfterMs)),
    notAfter: formatTimestamp(new Date(start + lifetimeMs)),
  };
}

/** A terminal Denied or Failed status. */
export function refusedStatus(
  type: 'Denied' | 'Failed',
  reason = 'UnsupportedKeyType',
): PodCertificateRequestStatus {
  return {
    conditions: [
      {
        type,
        status: 'True',
        reason,
        message: 'refused',
        lastTransitionTime: formatTimestamp(new Date()),
      },
    ],
  };
}

/** A ClusterTrustBundle; linked to signerName when given. */
export function trustBundle(name: string, trust: string, signerName?: string): ClusterTrustBundle {
  return {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'ClusterTrustBundle',
    metadata: { name },
    spec: { ...(signerName === undefined ? {} : { signerName }), trustBundle: trust },
  };
}
