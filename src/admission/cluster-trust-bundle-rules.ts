import { X509Certificate } from 'node:crypto';
import { type ClusterTrustBundle, trustBundleNamePrefix } from '../api/cluster-trust-bundle.js';
import { shortened } from '../api/echoed-value.js';
import { byteLength, nameIsDnsSubdomain } from '../api/kube-names.js';
import { invalidField, requiredField, tooLongField } from '../base/field-error.js';
import { FieldErrorList } from '../base/field-error-list.js';
import { validateSignerName } from '../base/signer-name.js';
import { readCertificateFields } from '../pki/certificate-fields.js';
import { decodeBasicConstraints, ExtensionOid } from '../pki/extensions.js';
import { decodeGoPemBlocks } from '../pki/pem.js';

// kube-apiserver's rules for ClusterTrustBundles (k8s.io/kubernetes
// pkg/apis/certificates/validation ValidateClusterTrustBundle), with its messages.

/** MaxTrustBundleSize: 1 MiB. */
export const CTB_MAX_TRUST_BUNDLE_BYTES = 1024 * 1024;
// validateTrustBundle never echoes the bundle.
const OMITTED = '<value omitted>';
const TRUST_BUNDLE = 'spec.trustBundle';

/**
 * kube-apiserver's create validation of a ClusterTrustBundle: the name (a signer-linked bundle
 * is named `<signer, / as :>:<DNS subdomain>`, an unlinked one has no ':'), the signer name,
 * and the trust bundle (1 MiB at most, CERTIFICATE blocks without headers, each a CA, no
 * duplicates, at least one). Field errors; none admits it.
 */
export function validateClusterTrustBundle(bundle: ClusterTrustBundle): string[] {
  return bundleErrors(bundle, true);
}

/**
 * kube-apiserver's update validation: as create, except that an unchanged trust bundle is not
 * parsed again (so a stricter parser never locks an old bundle), and signerName is immutable.
 */
export function validateClusterTrustBundleUpdate(
  next: ClusterTrustBundle,
  old: ClusterTrustBundle,
): string[] {
  const errors = bundleErrors(next, next.spec?.trustBundle !== old.spec?.trustBundle);
  const signerName = next.spec?.signerName ?? '';
  if (signerName !== (old.spec?.signerName ?? '')) {
    errors.push(invalidField('spec.signerName', signerName, 'field is immutable'));
  }
  return errors;
}

/**
 * The signer a write must be allowed to `attest` for (the ClusterTrustBundleAttest admission
 * plugin), or undefined when none: an unlinked bundle, or an update that changes only
 * ownerReferences and finalizers (garbage collection and storage migration need no grant).
 */
export function clusterTrustBundleAttestSigner(
  next: ClusterTrustBundle,
  old: ClusterTrustBundle | undefined,
): string | undefined {
  const signerName = next.spec?.signerName;
  if (!signerName) return undefined;
  if (old && withoutGcFields(next) === withoutGcFields(old)) return undefined;
  return signerName;
}

function bundleErrors(bundle: ClusterTrustBundle, parseTrustBundle: boolean): string[] {
  const signerName = bundle.spec?.signerName ?? '';
  const errors = nameErrors(bundle, signerName);
  if (signerName !== '') errors.push(...validateSignerName('spec.signerName', signerName));
  if (parseTrustBundle) errors.push(...trustBundleErrors(bundle.spec?.trustBundle ?? ''));
  return errors;
}

/** ValidateObjectMeta's name checks with ValidateClusterTrustBundleName. */
function nameErrors(bundle: ClusterTrustBundle, signerName: string): string[] {
  const errors: string[] = [];
  const { name, generateName } = bundle.metadata;
  if (generateName) {
    for (const problem of bundleNameProblems(generateName, signerName, true)) {
      errors.push(invalidField('metadata.generateName', generateName, problem));
    }
  }
  if (!name) {
    // The API server has generated a name from generateName by now; this rule has not.
    if (!generateName) {
      errors.push(requiredField('metadata.name', 'name or generateName is required'));
    }
    return errors;
  }
  for (const problem of bundleNameProblems(name, signerName, false)) {
    errors.push(invalidField('metadata.name', name, problem));
  }
  return errors;
}

function bundleNameProblems(name: string, signerName: string, prefix: boolean): string[] {
  if (signerName === '') {
    if (name.includes(':')) {
      return ['ClusterTrustBundle without signer name must not have ":" in its name'];
    }
    return nameIsDnsSubdomain(name, prefix);
  }
  const required = trustBundleNamePrefix(signerName);
  if (!name.startsWith(required)) {
    return [
      `ClusterTrustBundle for signerName ${signerName} must be named with prefix ${required}`,
    ];
  }
  return nameIsDnsSubdomain(name.slice(required.length), prefix);
}

/** validateTrustBundle: per-entry problems first; only a clean bundle is checked for duplicates. */
function trustBundleErrors(trustBundle: string): string[] {
  if (byteLength(trustBundle) > CTB_MAX_TRUST_BUNDLE_BYTES) {
    return [tooLongField(TRUST_BUNDLE, CTB_MAX_TRUST_BUNDLE_BYTES)];
  }
  const errors = new FieldErrorList();
  const indices = new Map<string, number[]>();
  decodeGoPemBlocks(trustBundle).forEach((block, i) => {
    const problem =
      block.label !== 'CERTIFICATE'
        ? `entry ${i} has bad block type: ${shortened(block.label)}`
        : Object.keys(block.headers).length > 0
          ? `entry ${i} has PEM block headers`
          : caProblem(block.der, i);
    if (problem) {
      errors.addItem(TRUST_BUNDLE, () => invalidField(TRUST_BUNDLE, OMITTED, problem));
      return;
    }
    const key = Buffer.from(block.der).toString('base64');
    const positions = indices.get(key);
    if (positions) positions.push(i);
    else indices.set(key, [i]);
  });
  // A malformed entry would make duplicate or missing anchors a redundant complaint.
  if (errors.count > 0) return errors.toArray();
  if (indices.size === 0) {
    return [invalidField(TRUST_BUNDLE, OMITTED, 'at least one trust anchor must be provided')];
  }
  for (const positions of indices.values()) {
    if (positions.length > 1) {
      errors.addItem(TRUST_BUNDLE, () =>
        invalidField(
          TRUST_BUNDLE,
          OMITTED,
          `duplicate trust anchor (indices [${positions.join(' ')}])`,
        ),
      );
    }
  }
  return errors.toArray();
}

/**
 * Why entry i is no CA certificate, or undefined. Go checks the CA bit and then that basic
 * constraints are valid; its IsCA is only ever set from a valid extension, so one check
 * (the extension present with cA true) covers both.
 */
function caProblem(der: Uint8Array, i: number): string | undefined {
  let isCA: boolean;
  try {
    new X509Certificate(der);
    const constraints = readCertificateFields(der).extensions.get(ExtensionOid.basicConstraints);
    isCA = constraints ? decodeBasicConstraints(constraints.value).isCA : false;
  } catch {
    return `entry ${i} does not parse as X.509`;
  }
  return isCA ? undefined : `entry ${i} does not have the CA bit set`;
}

/** The object as JSON without ownerReferences, finalizers and the fields the server owns. */
function withoutGcFields(bundle: ClusterTrustBundle): string {
  const metadata: Record<string, unknown> = { ...bundle.metadata };
  for (const field of ['ownerReferences', 'finalizers', 'resourceVersion', 'managedFields']) {
    delete metadata[field];
  }
  return stableJson({ ...bundle, metadata });
}

function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}
