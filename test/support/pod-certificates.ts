import { type KeyObject, randomUUID } from 'node:crypto';
import { ClusterIssuerKind } from '../../src/api/issuer.js';
import type { Namespace } from '../../src/api/namespace.js';
import { type Pod, PodKind } from '../../src/api/pod.js';
import type { PodCertificateRequest } from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import { generatePrivateKey, type KeySpec } from '../../src/pki/keys.js';
import type { PodCertificateKeyType } from '../../src/pki/pod-certificate-key.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { clusterIssuer, tlsSecret, withAnnotations, withSpec } from './builders/index.js';
import { keyFields } from './pod-certificate-fixtures.js';

/** The signer of the ClusterIssuer `pods` the cluster tests sign pod certificates with. */
export const PODS_SIGNER = 'clusterissuers.cert-manager.io/pods';
/** The ClusterTrustBundle the publisher keeps for PODS_SIGNER. */
export const PODS_BUNDLE = 'clusterissuers.cert-manager.io:pods:primary';

/**
 * Seeds PODS_SIGNER's issuer: the CA ClusterIssuer `pods` on ca's Secret `cert-csi/pods-ca`,
 * opted in to serve the pods of every namespace.
 */
export async function seedPodsIssuer(
  store: ResourceStore,
  ca: { certificatePem: string; keyPem: string },
): Promise<void> {
  await store.create(
    SecretKind,
    tlsSecret('cert-csi', 'pods-ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  await store.create(
    ClusterIssuerKind,
    clusterIssuer(
      'pods',
      withSpec({ ca: { secretName: 'pods-ca' } }),
      withAnnotations({ [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' }),
    ),
  );
}

/** How kubelet puts the key in a request: 1.34/1.35 (pkixPublicKey + proof) or 1.36 (stub CSR). */
export type KeyMaterialForm = '1.35' | '1.36';

const KEY_SPECS: Record<PodCertificateKeyType, KeySpec> = {
  RSA3072: { algorithm: 'RSA', size: 3072 },
  RSA4096: { algorithm: 'RSA', size: 4096 },
  ECDSAP256: { algorithm: 'ECDSA', size: 256 },
  ECDSAP384: { algorithm: 'ECDSA', size: 384 },
  ECDSAP521: { algorithm: 'ECDSA', size: 521 },
  ED25519: { algorithm: 'Ed25519' },
};

const keys = new Map<PodCertificateKeyType, Promise<KeyObject>>();

/** A fresh private key of a kubelet key type, as kubelet makes for every request. */
export function newKubeletKey(type: PodCertificateKeyType): Promise<KeyObject> {
  return generatePrivateKey(KEY_SPECS[type]);
}

/**
 * A private key of a kubelet key type. kubelet makes a new one per request; tests share one
 * per type (RSA 4096 takes seconds to generate), which changes nothing the signer sees.
 */
export function kubeletKey(type: PodCertificateKeyType): Promise<KeyObject> {
  let key = keys.get(type);
  if (!key) {
    key = newKubeletKey(type);
    keys.set(type, key);
  }
  return key;
}

/** A scheduled pod with fresh UIDs for itself, its service account and its node. */
export interface PodIdentity {
  namespace: string;
  name: string;
  uid: string;
  serviceAccount: string;
  serviceAccountUid: string;
  node: string;
  nodeUid: string;
}

/** A pod identity with random UIDs. */
export function podIdentity(
  namespace: string,
  name: string,
  options: { serviceAccount?: string; node?: string } = {},
): PodIdentity {
  return {
    namespace,
    name,
    uid: randomUUID(),
    serviceAccount: options.serviceAccount ?? 'default',
    serviceAccountUid: randomUUID(),
    node: options.node ?? 'node-1',
    nodeUid: randomUUID(),
  };
}

/**
 * Creates the pod of identity in store and returns the identity with the UID the store gave
 * it (stores assign UIDs), as kubelet reads it before it asks.
 */
export async function createPod(store: ResourceStore, identity: PodIdentity): Promise<PodIdentity> {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: identity.name, namespace: identity.namespace },
    spec: { nodeName: identity.node, serviceAccountName: identity.serviceAccount },
  };
  const created = await store.create(PodKind, pod);
  return { ...identity, uid: created.metadata.uid ?? '' };
}

/** A Namespace with labels. */
export function namespaceObject(name: string, labels: Record<string, string> = {}): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

/**
 * A PodCertificateRequest exactly as kubelet creates it (pkg/kubelet/podcertificate):
 * generateName `req-`, an owner reference to the pod, the seven identity fields,
 * maxExpirationSeconds, and the key in the given form: options.key (of keyType), or the key
 * kubeletKey shares among requests.
 */
export async function kubeletRequest(
  identity: PodIdentity,
  signerName: string,
  keyType: PodCertificateKeyType,
  form: KeyMaterialForm,
  options: {
    maxExpirationSeconds?: number;
    userAnnotations?: Record<string, string>;
    key?: KeyObject;
  } = {},
): Promise<{ request: PodCertificateRequest; key: KeyObject }> {
  const key = options.key ?? (await kubeletKey(keyType));
  const material = await keyFields(key, form === '1.36' ? 'stub' : 'pkix', identity.uid);
  const request: PodCertificateRequest = {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'PodCertificateRequest',
    metadata: {
      name: '',
      generateName: 'req-',
      namespace: identity.namespace,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: identity.name, uid: identity.uid }],
    },
    spec: {
      signerName,
      podName: identity.name,
      podUID: identity.uid,
      serviceAccountName: identity.serviceAccount,
      serviceAccountUID: identity.serviceAccountUid,
      nodeName: identity.node,
      nodeUID: identity.nodeUid,
      maxExpirationSeconds: options.maxExpirationSeconds ?? 86_400,
      ...material,
      ...(options.userAnnotations ? { unverifiedUserAnnotations: options.userAnnotations } : {}),
    },
  };
  return { request, key };
}
