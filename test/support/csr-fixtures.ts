import type { KeyObject } from 'node:crypto';
import type { KubeConfig, V1CertificateSigningRequest } from '@kubernetes/client-node';
import { decodeBytes, encodeBytes } from '../../src/api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
  type CsrCondition,
} from '../../src/api/certificate-signing-request.js';
import { type CsrRequest, createCsr } from '../../src/pki/csr.js';
import { encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { tlsSecret } from './builders/index.js';
import { clientNode } from './client-node-full.js';

/** A CSR object for signerName over csrPem (usages default to digital signature, key encipherment). */
export function csrObject(
  name: string,
  signerName: string,
  csrPem: string,
  options: {
    usages?: string[];
    expirationSeconds?: number;
    annotations?: Record<string, string>;
    username?: string;
  } = {},
): CertificateSigningRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: CertificateSigningRequestKind.kind,
    metadata: { name, ...(options.annotations ? { annotations: options.annotations } : {}) },
    spec: {
      request: encodeBytes(csrPem),
      signerName,
      usages: options.usages ?? ['digital signature', 'key encipherment'],
      ...(options.expirationSeconds !== undefined
        ? { expirationSeconds: options.expirationSeconds }
        : {}),
      ...(options.username ? { username: options.username } : {}),
    },
  };
}

/** An ECDSA P-256 key, a CSR for it, and the key as a `tls.key` Secret (for SelfSigned). */
export async function keyedCsr(
  request: Omit<CsrRequest, 'key'> = { subject: { commonName: 'csr.example.com' } },
): Promise<{
  key: KeyObject;
  csrPem: string;
  keySecret: (namespace: string, name: string) => ReturnType<typeof tlsSecret>;
}> {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const csrPem = await createCsr({ key, ...request });
  const keyPem = encodePrivateKey(key, 'PKCS8');
  return {
    key,
    csrPem,
    keySecret: (namespace, name) => tlsSecret(namespace, name, { 'tls.key': keyPem }),
  };
}

/**
 * Approves (or denies) a CSR as embedded mode does: a status write appending the condition,
 * with what the API server's approval strategy would fill in.
 */
export async function decideCsr(
  store: ResourceStore,
  name: string,
  type: 'Approved' | 'Denied',
): Promise<CertificateSigningRequest> {
  const csr = await store.get<CertificateSigningRequest>(CertificateSigningRequestKind, name);
  const time = `${new Date().toISOString().slice(0, 19)}Z`;
  const condition: CsrCondition = {
    type,
    status: 'True',
    reason: type === 'Approved' ? 'ApprovedByTest' : 'DeniedByTest',
    message: `${type.toLowerCase()} by the test`,
    lastUpdateTime: time,
    lastTransitionTime: time,
  };
  return store.updateStatus(CertificateSigningRequestKind, {
    ...csr,
    status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), condition] },
  });
}

/** The issued chain of a CSR, PEM. */
export function csrChain(csr: CertificateSigningRequest): string {
  return decodeBytes(csr.status?.certificate) ?? '';
}

/** The types of a CSR's conditions, in order. */
export function csrConditionTypes(csr: CertificateSigningRequest): string[] {
  return (csr.status?.conditions ?? []).map((c) => c.type);
}

/**
 * Approves or denies a CSR through the API server's approval subresource with the real
 * client (what `kubectl certificate approve|deny` does): read it, append the condition, PUT
 * `/approval`. Resolves with the stored CSR; rejects with the client's ApiException.
 */
export async function decideThroughApproval(
  kubeConfig: KubeConfig,
  name: string,
  type: 'Approved' | 'Denied',
): Promise<V1CertificateSigningRequest> {
  const api = kubeConfig.makeApiClient(clientNode.CertificatesV1Api);
  const csr = await api.readCertificateSigningRequest({ name });
  csr.status = {
    ...csr.status,
    conditions: [
      ...(csr.status?.conditions ?? []),
      {
        type,
        status: 'True',
        reason: type === 'Approved' ? 'KubectlApprove' : 'KubectlDeny',
        message: `This CSR was ${type.toLowerCase()} by the test.`,
        lastUpdateTime: new Date(),
      },
    ],
  };
  return api.replaceCertificateSigningRequestApproval({ name, body: csr });
}
