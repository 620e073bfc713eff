import {
  clusterTrustBundleAttestSigner,
  validateClusterTrustBundle,
  validateClusterTrustBundleUpdate,
} from '../../src/admission/cluster-trust-bundle-rules.js';
import {
  podCertificateRequestStatusChanged,
  validatePodCertificateRequestCreate,
  validatePodCertificateRequestStatusUpdate,
  validatePodCertificateRequestUpdate,
  withPodCertificateRequestDefaults,
} from '../../src/admission/pod-certificate-request-rules.js';
import { attestDeniedDetail, signDeniedDetail } from '../../src/admission/signer-authorization.js';
import {
  type ClusterTrustBundle,
  ClusterTrustBundleKind,
} from '../../src/api/cluster-trust-bundle.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../src/api/pod-certificate-request.js';
import { forbiddenField, requiredField } from '../../src/base/field-error.js';
import type { KindStrategy, WriteContext } from './kinds.js';
import { admissionForbidden, invalidFields } from './status.js';

// kube-apiserver's registry strategies and admission plugins for the certificates.k8s.io kinds
// of pod certificates (pkg/registry/certificates, KEP-4317), over the pure rules of
// src/admission.

/** Throws the API server's 422 for errors, if there are any. */
function refuse(kind: ResourceKind, object: KubeObject, errors: readonly string[]): void {
  if (errors.length > 0) throw invalidFields(kind, object.metadata.name ?? '', errors);
}

/**
 * PodCertificateRequests: create wipes status and defaults maxExpirationSeconds before the
 * create validation; an update keeps the stored status and may not touch spec; a status write
 * keeps the stored metadata and spec, is validated against the server's clock, and needs
 * verb `sign` on the signer when it changes the status.
 */
export const podCertificateRequestStrategy: KindStrategy = {
  async create(object, context) {
    const { status: _status, ...rest } = object as PodCertificateRequest;
    const request = withPodCertificateRequestDefaults(rest as PodCertificateRequest);
    // v1 has only the stub, and requires it (`+required`).
    if (context.version === 'v1' && !request.spec.stubPKCS10Request) {
      refuse(PodCertificateRequestKind, request, [requiredField('spec.stubPKCS10Request', '')]);
    }
    refuse(PodCertificateRequestKind, request, validatePodCertificateRequestCreate(request));
    return request;
  },
  update(object, stored) {
    const old = stored as PodCertificateRequest;
    // PrepareForUpdate: the stored status, whatever the body says.
    const next = withPodCertificateRequestDefaults({
      ...(object as PodCertificateRequest),
      status: old.status,
    } as PodCertificateRequest);
    refuse(PodCertificateRequestKind, next, validatePodCertificateRequestUpdate(next, old));
    return next;
  },
  updateStatus(object, stored, context: WriteContext) {
    const old = stored as PodCertificateRequest;
    // ResetObjectMetaForStatus and the stored spec: only status comes from the body.
    const next = {
      ...old,
      status: (object as PodCertificateRequest).status,
    } as PodCertificateRequest;
    refuse(
      PodCertificateRequestKind,
      next,
      validatePodCertificateRequestStatusUpdate(next, old, context.now),
    );
    // Semantically the same status (`{}` for none, another spelling of a time): a no-op.
    if (!podCertificateRequestStatusChanged(next, old)) return old;
    // The strategy's Forbidden is a field error: the API server answers it as 422, not 403.
    const signerName = old.spec.signerName;
    if (!context.allowedOnSigner('sign', signerName)) {
      refuse(PodCertificateRequestKind, next, [
        forbiddenField('spec.signerName', signDeniedDetail(context.user, signerName)),
      ]);
    }
    return next;
  },
};

// The fields of PodCertificateRequestSpec v1 does not have (1.35 kubelets' key material).
const V1BETA1_ONLY_FIELDS = ['pkixPublicKey', 'proofOfPossession'] as const;

/**
 * A stored PodCertificateRequest as a client of version reads it: v1 has no pkixPublicKey
 * and proofOfPossession, so a request a 1.35 kubelet wrote shows no key material at all.
 */
export function podCertificateRequestToVersion(object: KubeObject, version: string): KubeObject {
  if (version !== 'v1') return object;
  const request = object as PodCertificateRequest;
  const spec = { ...request.spec };
  for (const field of V1BETA1_ONLY_FIELDS) delete spec[field];
  return { ...request, spec } as PodCertificateRequest;
}

/**
 * A PodCertificateRequest a client of version wrote, for storage: a v1 body cannot carry the
 * old pair (the decoder drops fields v1 does not have), and a v1 update keeps the stored ones.
 */
export function podCertificateRequestFromVersion(
  object: KubeObject,
  version: string,
  stored: KubeObject | undefined,
): KubeObject {
  const request = object as PodCertificateRequest;
  if (version !== 'v1' || !request.spec) return object;
  const spec = { ...request.spec };
  const old = (stored as PodCertificateRequest | undefined)?.spec;
  for (const field of V1BETA1_ONLY_FIELDS) {
    if (old?.[field] !== undefined) spec[field] = old[field];
    else delete spec[field];
  }
  return { ...request, spec } as PodCertificateRequest;
}

/**
 * ClusterTrustBundles: validation, then the ClusterTrustBundleAttest plugin (verb `attest` on
 * the signer of a linked bundle), which answers 403.
 */
export const clusterTrustBundleStrategy: KindStrategy = {
  async create(object, context) {
    const bundle = object as ClusterTrustBundle;
    refuse(ClusterTrustBundleKind, bundle, validateClusterTrustBundle(bundle));
    checkAttest(bundle, undefined, context);
    return bundle;
  },
  update(object, stored, context) {
    const bundle = object as ClusterTrustBundle;
    const old = stored as ClusterTrustBundle;
    refuse(ClusterTrustBundleKind, bundle, validateClusterTrustBundleUpdate(bundle, old));
    checkAttest(bundle, old, context);
    return bundle;
  },
};

function checkAttest(
  bundle: ClusterTrustBundle,
  old: ClusterTrustBundle | undefined,
  context: WriteContext,
): void {
  const signerName = clusterTrustBundleAttestSigner(bundle, old);
  if (signerName !== undefined && !context.allowedOnSigner('attest', signerName)) {
    throw admissionForbidden(
      ClusterTrustBundleKind,
      bundle.metadata.name ?? '',
      attestDeniedDetail(signerName),
    );
  }
}
