import type { CertificateRequest } from '../../src/api/certificate-request.js';

/**
 * A CertificateRequest in namespace apps with a revision annotation (none when undefined);
 * with owner, controlled by the Certificate of that UID (or merely owned, with controller false).
 */
export function revisionRequest(
  name: string,
  revision: string | undefined,
  owner?: { uid: string; controller?: boolean },
): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name,
      namespace: 'apps',
      ...(revision === undefined
        ? {}
        : { annotations: { 'cert-manager.io/certificate-revision': revision } }),
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'cert-manager.io/v1',
                kind: 'Certificate',
                name: 'web',
                uid: owner.uid,
                controller: owner.controller ?? true,
              },
            ],
          }
        : {}),
    },
    spec: { request: '', issuerRef: { name: 'ca' } },
  };
}
