import type { CertificateRequest } from '../api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CSR_PRIVATE_KEY_SECRET_ANNOTATION,
} from '../api/certificate-signing-request.js';
import type { Issuer } from '../api/issuer.js';
import { defaultIssuerRef } from '../api/issuer-ref.js';
import { issuerOfSignerName } from '../api/issuer-signer-name.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../api/labels.js';
import type { PodCertificateRequest } from '../api/pod-certificate-request.js';
import { byField } from '../controller/indexes.js';
import { issuerIndexValue } from './issuer-lookup.js';

/** CertificateRequests by the issuer they name (see issuerIndexValue). */
export const requestsByIssuer = byField<CertificateRequest>('issuer-ref', (request) => {
  const ref = defaultIssuerRef(request.spec.issuerRef);
  return issuerIndexValue(ref.kind, ref.name, request.metadata.namespace);
});

/** CertificateRequests by the `namespace/name` of the key Secret their annotation names (SelfSigned). */
export const requestsByKeySecret = byField<CertificateRequest>('private-key-secret', (request) => {
  const name = request.metadata.annotations?.[PRIVATE_KEY_SECRET_NAME_ANNOTATION];
  return name ? `${request.metadata.namespace ?? ''}/${name}` : undefined;
});

/**
 * Issuers and ClusterIssuers by the name of their CA Secret: `namespace/name` for an Issuer,
 * the bare name for a ClusterIssuer, whose Secret lives in the cluster resource namespace.
 */
export const issuersByCASecret = byField<Issuer>('ca-secret', (issuer) => {
  const name = issuer.spec.ca?.secretName;
  if (!name) return undefined;
  return issuer.kind === 'ClusterIssuer' ? name : `${issuer.metadata.namespace ?? ''}/${name}`;
});

/** CertificateSigningRequests by the issuer their signer name designates (see issuerIndexValue). */
export const csrsByIssuer = byField<CertificateSigningRequest>('signer-issuer', (csr) => {
  const ref = issuerOfSignerName(csr.spec.signerName ?? '');
  if (!ref) return undefined;
  return issuerIndexValue(ref.kind, ref.name, ref.kind === 'Issuer' ? ref.namespace : undefined);
});

/**
 * CertificateSigningRequests by the name of the key Secret their
 * `experimental.cert-manager.io/private-key-secret-name` annotation names (SelfSigned). The
 * Secret's namespace is the issuer's resource namespace, which the index does not know.
 */
export const csrsByKeySecretName = byField<CertificateSigningRequest>(
  'csr-private-key-secret',
  (csr) => csr.metadata.annotations?.[CSR_PRIVATE_KEY_SECRET_ANNOTATION] || undefined,
);

/**
 * PodCertificateRequests by their `spec.signerName`: the one cache holds every signer's
 * requests, and an issuer's change finds its own through this.
 */
export const podRequestsBySignerName = byField<PodCertificateRequest>(
  'pod-signer-name',
  (request) => request.spec.signerName,
);
