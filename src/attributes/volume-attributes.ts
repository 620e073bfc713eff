import type { PodInfo, VolumeCertificateSpec } from '../api/volume-spec.js';
import { formatGoDuration, parseGoDuration } from '../pki/duration.js';
import { DEFAULT_USAGES, isKnownUsage, KEY_USAGE_NAMES } from '../pki/usages.js';
import {
  type AttributeError,
  invalidValue,
  requiredValue,
  tooLong,
  tooMany,
} from './attribute-errors.js';
import {
  type AttributeName,
  EPHEMERAL_KEY,
  POD_NAME_KEY,
  POD_NAMESPACE_KEY,
  POD_UID_KEY,
  SERVICE_ACCOUNT_NAME_KEY,
  sortVolumeContext,
} from './attribute-keys.js';
import { AttributeReader } from './attribute-reader.js';
import { readFileAttributes } from './file-attributes.js';
import { parseGid } from './fs-group.js';
import { type PodIpVariables, readIdentity } from './identity-attributes.js';
import { readIssuerRef } from './issuer-attributes.js';
import { readKeyAttributes } from './key-attributes.js';
import { splitList } from './list-splitting.js';
import { dnsLabelProblem, dnsSubdomainProblem } from './object-names.js';
import { readReloadAttributes } from './reload-attributes.js';
import { renewalWindowProblem } from './renewal-window.js';
import { readTrustBundle } from './trust-bundle-attribute.js';

export type { AttributeError } from './attribute-errors.js';
export { formatAttributeErrors } from './attribute-errors.js';
export { ATTRIBUTE_PREFIX, LEGACY_ATTRIBUTE_PREFIX } from './attribute-keys.js';

export type ParsedVolumeAttributes =
  | { ok: true; spec: VolumeCertificateSpec; deprecatedKeys: string[] }
  | { ok: false; errors: AttributeError[] };

/** The error key for a bad CSI volume_mount_group (the pod's fsGroup). */
export const VOLUME_MOUNT_GROUP_KEY = 'volume_mount_group';

// cert-manager's DefaultCertificateDuration: 90 days.
const DEFAULT_DURATION_MS = 90 * 24 * 60 * 60 * 1000;
// Formatted once: Go's duration text is BigInt arithmetic, and every publish without a duration asked.
const DEFAULT_DURATION_TEXT = formatGoDuration(DEFAULT_DURATION_MS);
// Kubernetes UIDs are 36-character UUIDs (static pods: 32 hex digits); the cap keeps
// a forged one from bloating the CertificateRequest's owner reference.
const POD_UID_MAX_CHARACTERS = 128;
// The API server's TotalAnnotationSizeLimitB: keys and values together, in bytes.
const ANNOTATIONS_MAX_BYTES = 256 * 1024;
const POD_INFO_REQUIRED = requiredValue(
  'set by kubelet when the CSIDriver sets podInfoOnMount: true; the CertificateRequest is created in the pod namespace',
);

/**
 * What ${POD_IP} and ${POD_IPS} stand for while the pod's IPs are unknown: an address of
 * TEST-NET-1 (RFC 5737), so that the attributes using them are still checked at publish.
 * A spec holding it is never issued (its podIPs is empty).
 */
export const POD_IP_PLACEHOLDER = '192.0.2.1';

/** What ${POD_IP} and ${POD_IPS} stand for with the pod's IPs (the placeholder while none is known). */
export function podIpVariables(podIPs: readonly string[]): PodIpVariables {
  return {
    POD_IP: podIPs[0] ?? POD_IP_PLACEHOLDER,
    POD_IPS: podIPs.length > 0 ? podIPs.join(',') : POD_IP_PLACEHOLDER,
  };
}

/** Parses, defaults, validates and expands kubelet's volume context. */
export function parseVolumeAttributes(
  volumeContext: Readonly<Record<string, string>>,
  options: {
    volumeMountGroup?: string | undefined;
    /** The pod's IPs, first one first, for ${POD_IP} and ${POD_IPS}; unknown when absent or empty. */
    podIPs?: readonly string[];
  } = {},
): ParsedVolumeAttributes {
  const sorted = sortVolumeContext(volumeContext);
  const attrs = new AttributeReader(sorted.attributes);
  const kubeletErrors: AttributeError[] = [];
  const pod = readPod(sorted.kubelet, kubeletErrors);

  const issuerRef = readIssuerRef(attrs);
  const durationText = attrs.nonEmpty('duration');
  const podIPs = options.podIPs ?? [];
  const identity = readIdentity(
    attrs,
    {
      POD_NAME: pod.name,
      POD_NAMESPACE: pod.namespace,
      POD_UID: pod.uid,
      SERVICE_ACCOUNT_NAME: pod.serviceAccountName,
    },
    podIpVariables(podIPs),
  );
  const spec: VolumeCertificateSpec = {
    issuerRef,
    subject: identity.subject,
    dnsNames: identity.dnsNames,
    ipAddresses: identity.ipAddresses,
    uris: identity.uris,
    duration: durationText ?? DEFAULT_DURATION_TEXT,
    durationMs: readDuration(attrs, 'duration', durationText) ?? DEFAULT_DURATION_MS,
    isCA: readBoolean(attrs, 'is-ca'),
    usages: readUsages(attrs),
    key: readKeyAttributes(attrs),
    files: readFileAttributes(attrs),
    reusePrivateKey: readBoolean(attrs, 'reuse-private-key'),
    disableAutoRenew: readBoolean(attrs, 'disable-auto-renew'),
    annotations: sorted.annotations,
    pod,
  };
  if (identity.literalSubject !== undefined) spec.literalSubject = identity.literalSubject;
  if (identity.usesPodIPs) {
    spec.podIPs = [...podIPs];
    spec.podIpSans = {
      template: attrs.value('ip-sans') ?? '',
      keys: {
        dnsNames: attrs.keyOf('dns-names'),
        ipSans: attrs.keyOf('ip-sans'),
        uriSans: attrs.keyOf('uri-sans'),
      },
    };
  }
  // Unlike csi-driver, "" is not a way to leave renew-before unset: it is an error.
  const renewBeforeText = attrs.value('renew-before');
  const renewBeforeMs = readDuration(attrs, 'renew-before', renewBeforeText);
  if (renewBeforeMs !== undefined) spec.renewBeforeMs = renewBeforeMs;
  const noRoom = renewalWindowProblem(spec.durationMs, renewBeforeMs);
  if (noRoom) {
    const text = noRoom.name === 'duration' ? durationText : renewBeforeText;
    attrs.fail(noRoom.name, invalidValue(text ?? '', noRoom.detail));
  }
  const fsGroup = readFsGroup(attrs, options.volumeMountGroup, kubeletErrors);
  if (fsGroup !== undefined) spec.fsGroup = fsGroup;
  const trustBundle = readTrustBundle(attrs, pod.namespace);
  if (trustBundle !== undefined) spec.trustBundle = trustBundle;
  const reload = readReloadAttributes(attrs);
  if (reload !== undefined) spec.reload = reload;

  checkAnnotationsSize(sorted.annotations, kubeletErrors);

  const errors = [...sorted.errors, ...kubeletErrors, ...attrs.errors];
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, spec, deprecatedKeys: sorted.deprecatedKeys };
}

// The CertificateRequest is created in the pod's namespace and owned by the pod,
// so pod info (CSIDriver podInfoOnMount) is required, not optional.
function readPod(kubelet: ReadonlyMap<string, string>, errors: AttributeError[]): PodInfo {
  if (kubelet.get(EPHEMERAL_KEY) !== 'true') {
    errors.push({ key: EPHEMERAL_KEY, message: 'only ephemeral volume types are supported' });
  }
  // The request is created in the namespace and owned by the pod: the API server's name rules.
  const checks: Array<[string, (text: string) => string | undefined]> = [
    [POD_NAME_KEY, dnsSubdomainProblem],
    [POD_NAMESPACE_KEY, dnsLabelProblem],
  ];
  for (const [key, problemOf] of checks) {
    const value = kubelet.get(key);
    const problem = value ? problemOf(value) : POD_INFO_REQUIRED;
    if (problem !== undefined) errors.push({ key, message: problem });
  }
  const serviceAccount = kubelet.get(SERVICE_ACCOUNT_NAME_KEY);
  const serviceAccountProblem = serviceAccount ? dnsSubdomainProblem(serviceAccount) : undefined;
  if (serviceAccountProblem !== undefined) {
    errors.push({ key: SERVICE_ACCOUNT_NAME_KEY, message: serviceAccountProblem });
  }
  const uid = kubelet.get(POD_UID_KEY) ?? '';
  if (uid.length > POD_UID_MAX_CHARACTERS) {
    errors.push({ key: POD_UID_KEY, message: tooLong(uid, POD_UID_MAX_CHARACTERS) });
  }
  return {
    name: kubelet.get(POD_NAME_KEY) ?? '',
    namespace: kubelet.get(POD_NAMESPACE_KEY) ?? '',
    uid: kubelet.get(POD_UID_KEY) ?? '',
    serviceAccountName: kubelet.get(SERVICE_ACCOUNT_NAME_KEY) ?? '',
  };
}

// A Go duration that must be positive: csi-driver accepts zero and negative ones.
function readDuration(
  attrs: AttributeReader,
  name: AttributeName,
  text: string | undefined,
): number | undefined {
  if (text === undefined) return undefined;
  let ms: number;
  try {
    ms = parseGoDuration(text);
  } catch (err) {
    attrs.fail(
      name,
      invalidValue(text, `must be a valid duration string: ${(err as Error).message}`),
    );
    return undefined;
  }
  if (ms > 0) return ms;
  attrs.fail(name, invalidValue(text, `${name} must be greater than zero`));
  return undefined;
}

function readBoolean(attrs: AttributeReader, name: AttributeName): boolean {
  const text = attrs.nonEmpty(name);
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  attrs.fail(name, invalidValue(text, 'may only accept values of "true" or "false"'));
  return false;
}

// Order as given, duplicates kept, as csi-driver sends them in spec.usages.
function readUsages(attrs: AttributeReader): string[] {
  const text = attrs.nonEmpty('key-usages');
  if (text === undefined) return [...DEFAULT_USAGES];
  const usages = splitList(text);
  // Duplicates are kept as csi-driver keeps them, but a list longer than there are
  // usages is no list of usages.
  if (usages.length > KEY_USAGE_NAMES.length) {
    attrs.fail('key-usages', tooMany(usages.length, KEY_USAGE_NAMES.length, 'usages'));
    return usages;
  }
  for (const usage of usages) {
    if (!isKnownUsage(usage))
      attrs.fail('key-usages', invalidValue(usage, 'not a valid key usage'));
  }
  return usages;
}

// The attribute wins over the CSI volume_mount_group (the pod's fsGroup), as in csi-lib.
function readFsGroup(
  attrs: AttributeReader,
  volumeMountGroup: string | undefined,
  errors: AttributeError[],
): number | undefined {
  const attribute = attrs.nonEmpty('fs-group');
  const text = attribute ?? (volumeMountGroup || undefined);
  if (text === undefined) return undefined;
  const parsed = parseGid(text);
  if (parsed.ok) return parsed.gid;
  if (attribute !== undefined) attrs.fail('fs-group', parsed.message);
  else errors.push({ key: VOLUME_MOUNT_GROUP_KEY, message: parsed.message });
  return undefined;
}

// The API server refuses a CertificateRequest whose annotations are too large; name the largest.
function checkAnnotationsSize(
  annotations: Readonly<Record<string, string>>,
  errors: AttributeError[],
): void {
  let total = 0;
  let largest: [string, number] = ['', 0];
  for (const [key, value] of Object.entries(annotations)) {
    const size = Buffer.byteLength(key, 'utf8') + Buffer.byteLength(value, 'utf8');
    total += size;
    if (size > largest[1]) largest = [key, size];
  }
  if (total <= ANNOTATIONS_MAX_BYTES) return;
  errors.push({
    key: largest[0],
    message: `Too long: annotations may not be more than ${ANNOTATIONS_MAX_BYTES} bytes in total (they have ${total}; this one ${largest[1]})`,
  });
}
