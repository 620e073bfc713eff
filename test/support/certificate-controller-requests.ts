import {
  type Certificate,
  CertificateKind,
  MANAGED_SECRET_LABEL,
  NEXT_PRIVATE_KEY_LABEL,
} from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { apiVersionOf, type OwnerReference } from '../../src/api/meta.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import type { ResourceStore } from '../../src/store/resource-store.js';

/** A Certificate as a user writes it (no status), in namespace. */
export function userCertificate(name: string, namespace: string): Certificate {
  return {
    apiVersion: apiVersionOf(CertificateKind),
    kind: CertificateKind.kind,
    metadata: { name, namespace },
    spec: {
      secretName: `${name}-tls`,
      issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      dnsNames: [`${name}.${namespace}.svc`],
    },
  };
}

/** What every request of the Certificate controllers did, in order, for the test to look at. */
export interface CertificateControllerTrace {
  watched: Certificate;
  request: CertificateRequest;
  nextKey: Secret;
  issued: Secret;
}

/**
 * Every kind of request the Certificate controllers (trigger, keymanager, requestmanager,
 * issuing, readiness, revisionmanager) send for one existing Certificate, through store: list
 * and watch Certificates in every namespace (their informer), a live get, a status update
 * seen by the watch, a next-private-key Secret created with generateName then deleted, a
 * CertificateRequest owned by the Certificate created then deleted, and the issued Secret
 * (spec.secretName) created then updated. Rejects with the first failure.
 *
 * A stand-in while the controllers are not wired into `cert-csi controller`: it lets RBAC
 * tests prove each rule the controllers need is used. The requests name an issuer group no
 * cert-csi controller serves, so the running issuer controllers leave them alone.
 */
export async function certificateControllerRequests(
  store: ResourceStore,
  certificate: Pick<Certificate, 'metadata'>,
): Promise<CertificateControllerTrace> {
  const { name } = certificate.metadata;
  const namespace = certificate.metadata.namespace ?? 'default';
  const listed = await store.list<Certificate>(CertificateKind, {});
  let stop = () => {};
  const watched = new Promise<Certificate>((resolve, reject) => {
    const watch = store.watch<Certificate>(
      CertificateKind,
      { resourceVersion: listed.resourceVersion },
      {
        onEvent: ({ type, object }) => {
          if (type === 'MODIFIED' && object.metadata.name === name && object.status) {
            resolve(object);
          }
        },
        onError: reject,
      },
    );
    stop = () => watch.stop();
  });
  // A refused watch must not be an unhandled rejection while the calls below run.
  watched.catch(() => undefined);
  try {
    const live = await store.get<Certificate>(CertificateKind, name, namespace);
    const owner: OwnerReference = {
      apiVersion: apiVersionOf(CertificateKind),
      kind: CertificateKind.kind,
      name,
      uid: live.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    const nextKey = await store.create<Secret>(SecretKind, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: '',
        generateName: `${name}-`,
        namespace,
        labels: { [NEXT_PRIVATE_KEY_LABEL]: 'true', [MANAGED_SECRET_LABEL]: 'true' },
        ownerReferences: [owner],
      },
      data: { 'tls.key': Buffer.from('key').toString('base64') },
    });
    await store.updateStatus<Certificate>(CertificateKind, {
      ...live,
      status: {
        conditions: [
          {
            type: 'Issuing',
            status: 'True',
            reason: 'DoesNotExist',
            message: 'Issuing certificate as Secret does not exist',
            lastTransitionTime: '2026-11-21T10:00:00Z',
          },
        ],
        nextPrivateKeySecretName: nextKey.metadata.name,
      },
    });
    const request = await store.create<CertificateRequest>(CertificateRequestKind, {
      apiVersion: apiVersionOf(CertificateRequestKind),
      kind: CertificateRequestKind.kind,
      metadata: { name: `${name}-1`, namespace, ownerReferences: [owner] },
      spec: {
        request: Buffer.from('csr').toString('base64'),
        issuerRef: { name: 'elsewhere', kind: 'Issuer', group: 'issuers.example.com' },
      },
    });
    const issued = await store.create<Secret>(SecretKind, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-tls`, namespace },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': '', 'tls.key': '' },
    });
    const updated = await store.update<Secret>(SecretKind, {
      ...issued,
      data: {
        'tls.crt': Buffer.from('crt').toString('base64'),
        'tls.key': nextKey.data?.['tls.key'] ?? '',
      },
    });
    await store.delete(SecretKind, nextKey.metadata.name, namespace);
    await store.delete(CertificateRequestKind, request.metadata.name, namespace);
    return { watched: await watched, request, nextKey, issued: updated };
  } finally {
    stop();
  }
}
