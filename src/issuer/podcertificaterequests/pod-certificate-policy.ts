import { quoted } from '../../api/echoed-value.js';
import { type Issuer, issuerTypeOf } from '../../api/issuer.js';
import { isNamespacedIssuer } from '../../api/issuer-signer-name.js';
import type { Pod } from '../../api/pod.js';
import type {
  PodCertificateRequest,
  PodCertificateRequestSpec,
} from '../../api/pod-certificate-request.js';
import { parseLabelSelector } from '../../store/label-selector.js';

/** A ClusterIssuer serves pod certificates only with this annotation: a label selector over namespaces. */
export const POD_CERTIFICATE_NAMESPACES_ANNOTATION = 'cert-csi.io/pod-certificate-namespaces';

/** The label the API server sets on every Namespace (since 1.21): selectable by name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Denied: the issuer does not serve this pod. */
export const REASON_POLICY_DENIED = 'PolicyDenied';
/** Denied: the issuer cannot sign pod certificates at all (SelfSigned). */
export const REASON_UNSUPPORTED_ISSUER = 'UnsupportedIssuer';
/** Failed: the request does not describe a live pod, or its key is not proven. */
export const REASON_INVALID_REQUEST = 'InvalidRequest';
/** Failed: the API server refused the issued status for a reason a retry cannot cure. */
export const REASON_CERTIFICATE_REJECTED = 'CertificateRejected';
/** Failed: no certificate within the API server's bounds can be made (the CA expires too soon). */
export const REASON_CA_EXPIRES = 'CAExpiresTooSoon';

/** What the signer does with a request once its key is verified. */
export type IssuerVerdict =
  | { step: 'sign' }
  | { step: 'deny'; reason: string; message: string }
  /** Not decidable yet (a cache not filled); looked at again when it changes. */
  | { step: 'wait'; message: string };

/**
 * Whether issuer serves the pod of request: an Issuer serves its own namespace only; a
 * ClusterIssuer serves the namespaces its POD_CERTIFICATE_NAMESPACES_ANNOTATION selects
 * (`""` every one, no annotation none); a SelfSigned issuer never signs pod certificates,
 * since the key that would sign them is the pod's own, which only kubelet holds.
 * namespaceLabels is undefined while the pod's Namespace is not in the cache.
 */
export function issuerVerdict(
  request: PodCertificateRequest,
  issuer: Issuer,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): IssuerVerdict {
  const namespace = request.metadata.namespace ?? '';
  const described = describeIssuer(issuer);
  if (issuerTypeOf(issuer) !== 'ca') {
    return {
      step: 'deny',
      reason: REASON_UNSUPPORTED_ISSUER,
      message: `${described} cannot sign pod certificates: only CA issuers can (a self-signed certificate would need the pod's private key)`,
    };
  }
  if (isNamespacedIssuer(issuer)) {
    if (issuer.metadata.namespace === namespace) return { step: 'sign' };
    return {
      step: 'deny',
      reason: REASON_POLICY_DENIED,
      message: `${described} serves pods of namespace "${issuer.metadata.namespace ?? ''}" only, not of namespace "${namespace}"`,
    };
  }
  const selectorText = issuer.metadata.annotations?.[POD_CERTIFICATE_NAMESPACES_ANNOTATION];
  if (selectorText === undefined) {
    return {
      step: 'deny',
      reason: REASON_POLICY_DENIED,
      message: `${described} does not serve pods of namespace "${namespace}": it has no ${POD_CERTIFICATE_NAMESPACES_ANNOTATION} annotation`,
    };
  }
  let selector: ReturnType<typeof parseLabelSelector>;
  try {
    selector = parseLabelSelector(selectorText);
  } catch (err) {
    return {
      step: 'deny',
      reason: REASON_POLICY_DENIED,
      message: `${described} does not serve pods of namespace "${namespace}": its ${POD_CERTIFICATE_NAMESPACES_ANNOTATION} annotation ${quoted(selectorText)} is not a label selector: ${(err as Error).message}`,
    };
  }
  if (!namespaceLabels) {
    return { step: 'wait', message: `namespace "${namespace}" is not in the cache yet` };
  }
  if (selector.matches({ ...namespaceLabels, [NAMESPACE_NAME_LABEL]: namespace })) {
    return { step: 'sign' };
  }
  return {
    step: 'deny',
    reason: REASON_POLICY_DENIED,
    message: `${described} does not serve pods of namespace "${namespace}": its ${POD_CERTIFICATE_NAMESPACES_ANNOTATION} selector ${quoted(selectorText)} does not select it`,
  };
}

/**
 * Why the pod a request names is not the pod that asked, or undefined when it is: the spec
 * was checked against the pod when kubelet created the request, but the pod may have gone
 * or been replaced since. pod is undefined when it does not exist.
 */
export function podMismatch(
  spec: PodCertificateRequestSpec,
  namespace: string,
  pod: Pod | undefined,
): string | undefined {
  const described = `pod "${namespace}/${spec.podName}"`;
  if (!pod) return `${described} does not exist`;
  if (pod.metadata.uid !== spec.podUID) {
    return `${described} has UID ${quoted(pod.metadata.uid ?? '')}, not the request's ${quoted(spec.podUID)}`;
  }
  const node = pod.spec?.nodeName ?? '';
  if (node !== spec.nodeName) {
    return `${described} is on node ${quoted(node)}, not the request's ${quoted(spec.nodeName)}`;
  }
  const serviceAccount = pod.spec?.serviceAccountName || 'default';
  if (serviceAccount !== spec.serviceAccountName) {
    return `${described} runs as service account ${quoted(serviceAccount)}, not the request's ${quoted(spec.serviceAccountName)}`;
  }
  return undefined;
}

function describeIssuer(issuer: Issuer): string {
  return isNamespacedIssuer(issuer)
    ? `Issuer "${issuer.metadata.namespace ?? ''}/${issuer.metadata.name}"`
    : `ClusterIssuer "${issuer.metadata.name}"`;
}
