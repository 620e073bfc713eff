import {
  type CertificateRequest,
  CertificateRequestKind,
  encodeBytes,
} from '../../api/certificate-request.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../../api/labels.js';
import { apiVersionOf } from '../../api/meta.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';

/** The labels that tie a request to one volume on one node (csi-lib's hash). */
export function volumeLabels(nodeId: string, volumeId: string): Record<string, string> {
  return {
    [NODE_ID_HASH_LABEL]: hashIdentifier(nodeId),
    [VOLUME_ID_HASH_LABEL]: hashIdentifier(volumeId),
  };
}

/**
 * The CertificateRequest csi-lib creates for a volume (its manager's submitRequest): in the
 * pod's namespace, labelled with the node and volume hashes, owned by the pod so Kubernetes
 * garbage-collects it with the pod, carrying the pass-through annotations.
 */
export function buildCertificateRequest(
  spec: VolumeCertificateSpec,
  options: { name: string; nodeId: string; volumeId: string; csrPem: string },
): CertificateRequest {
  const annotations = spec.annotations;
  return {
    apiVersion: apiVersionOf(CertificateRequestKind),
    kind: CertificateRequestKind.kind,
    metadata: {
      name: options.name,
      namespace: spec.pod.namespace,
      labels: volumeLabels(options.nodeId, options.volumeId),
      ...(Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
      ...(spec.pod.uid
        ? {
            ownerReferences: [
              { apiVersion: 'v1', kind: 'Pod', name: spec.pod.name, uid: spec.pod.uid },
            ],
          }
        : {}),
    },
    spec: {
      request: encodeBytes(options.csrPem),
      issuerRef: { ...spec.issuerRef },
      duration: spec.duration,
      isCA: spec.isCA,
      usages: [...spec.usages],
    },
  };
}
