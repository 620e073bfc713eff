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
import { forbiddenField } from '../../src/base/field-error.js';
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
  async create(object) {
    const { status: _status, ...rest } = object as PodCertificateRequest;
    const request = withPodCertificateRequestDefaults(rest as PodCertificateRequest);
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
