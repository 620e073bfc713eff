import { didYouMean } from '../base/edit-distance.js';
import { annotationKeyProblem } from './annotation-keys.js';
import type { AttributeError } from './attribute-errors.js';

export const ATTRIBUTE_PREFIX = 'csi.cert-manager.io/';
export const LEGACY_ATTRIBUTE_PREFIX = 'csi.certmanager.k8s.io/';
/** Keys kubelet sets itself (pod info, ephemeral, service-account tokens). */
export const KUBELET_PREFIX = 'csi.storage.k8s.io/';

export const EPHEMERAL_KEY = 'csi.storage.k8s.io/ephemeral';
export const POD_NAME_KEY = 'csi.storage.k8s.io/pod.name';
export const POD_NAMESPACE_KEY = 'csi.storage.k8s.io/pod.namespace';
export const POD_UID_KEY = 'csi.storage.k8s.io/pod.uid';
export const SERVICE_ACCOUNT_NAME_KEY = 'csi.storage.k8s.io/serviceAccount.name';
/** kubelet's token requests (CSIDriver tokenRequests): JSON `{audience: {token, expirationTimestamp}}`. */
export const SERVICE_ACCOUNT_TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';
/**
 * The pod's IPs, comma-separated, first one first, for ${POD_IP} and ${POD_IPS} in embedded
 * mode (`cert-csi publish --pod-ip`). kubelet never sends it; Kubernetes mode ignores it and
 * reads the pod's IPs from the API server.
 */
export const POD_IPS_KEY = 'csi.storage.k8s.io/pod.ips';

/** Every attribute name read under ATTRIBUTE_PREFIX: csi-driver's, plus cert-csi's own (docs/volume-attributes.md). */
export const ATTRIBUTE_NAMES = [
  'issuer-name',
  'issuer-kind',
  'issuer-group',
  'common-name',
  'literal-subject',
  'organizations',
  'organizationalunits',
  'countries',
  'provinces',
  'localities',
  'streetaddresses',
  'postalcodes',
  'serialnumber',
  'dns-names',
  'ip-sans',
  'uri-sans',
  'duration',
  'is-ca',
  'key-usages',
  'key-algorithm',
  'key-size',
  'key-encoding',
  'ca-file',
  'certificate-file',
  'privatekey-file',
  'fs-group',
  'renew-before',
  'reuse-private-key',
  'disable-auto-renew',
  'pkcs12-enable',
  'pkcs12-filename',
  'pkcs12-password',
  // Not csi-driver attributes: extra outputs (docs/volume-attributes.md, "Extra outputs").
  'combined-pem-file',
  'jks-enable',
  'jks-filename',
  'jks-truststore-filename',
  'jks-password',
  // The CA file follows a trust bundle (docs/trust-bundles.md).
  'trust-bundle',
  // Who is told of each rewrite (docs/reloading.md).
  'reload-url',
  'reload-signal',
  'reload-container',
  'reload-pid-file',
] as const;

export type AttributeName = (typeof ATTRIBUTE_NAMES)[number];

/** `unknown attribute`, with the nearest attribute's key under prefix as a "did you mean". */
function unknownAttribute(name: string, prefix: string): string {
  return `unknown attribute${didYouMean(name, ATTRIBUTE_NAMES, (n) => prefix + n)}`;
}

const isAttributeName = (name: string): name is AttributeName =>
  (ATTRIBUTE_NAMES as readonly string[]).includes(name);

/** The value of one attribute and the key it was given under (current or legacy prefix). */
export interface AttributeEntry {
  key: string;
  value: string;
}

/** A volume context sorted by who reads it. */
export interface SortedVolumeContext {
  attributes: Map<AttributeName, AttributeEntry>;
  /** csi.storage.k8s.io keys, never echoed in messages (one holds tokens). */
  kubelet: Map<string, string>;
  annotations: Record<string, string>;
  deprecatedKeys: string[];
  errors: AttributeError[];
}

/** Sorts a volume context into attributes (legacy keys folded in), kubelet keys and annotations. */
export function sortVolumeContext(context: Readonly<Record<string, string>>): SortedVolumeContext {
  const sorted: SortedVolumeContext = {
    attributes: new Map(),
    kubelet: new Map(),
    annotations: {},
    deprecatedKeys: [],
    errors: [],
  };
  const legacy: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (key.startsWith(ATTRIBUTE_PREFIX)) {
      const name = key.slice(ATTRIBUTE_PREFIX.length);
      if (isAttributeName(name)) sorted.attributes.set(name, { key, value });
      // csi-driver ignores these, so a typo such as `dns-name` went unnoticed.
      else sorted.errors.push({ key, message: unknownAttribute(name, ATTRIBUTE_PREFIX) });
    } else if (key.startsWith(LEGACY_ATTRIBUTE_PREFIX)) {
      legacy.push([key, value]);
    } else if (key.startsWith(KUBELET_PREFIX)) {
      sorted.kubelet.set(key, value);
    } else if (key.includes('/')) {
      const problem = annotationKeyProblem(key);
      // The API server would refuse the CertificateRequest; say so now, naming the key.
      if (problem === undefined) sorted.annotations[key] = value;
      else sorted.errors.push({ key, message: `not a valid annotation key: ${problem}` });
    }
  }
  // After the current keys, so that the current key wins whatever the order.
  for (const [key, value] of legacy) {
    sorted.deprecatedKeys.push(key);
    const name = key.slice(LEGACY_ATTRIBUTE_PREFIX.length);
    if (!isAttributeName(name)) {
      sorted.errors.push({ key, message: unknownAttribute(name, LEGACY_ATTRIBUTE_PREFIX) });
      continue;
    }
    const current = sorted.attributes.get(name);
    if (current === undefined) sorted.attributes.set(name, { key, value });
    else if (current.value !== value) {
      sorted.errors.push({ key, message: `conflicts with ${ATTRIBUTE_PREFIX}${name}` });
    }
  }
  return sorted;
}

/** The key an attribute was given under in a volume context (current or legacy prefix), else the current-prefix key. */
export function attributeKeyIn(
  context: Readonly<Record<string, string>>,
  name: AttributeName,
): string {
  return sortVolumeContext(context).attributes.get(name)?.key ?? `${ATTRIBUTE_PREFIX}${name}`;
}
