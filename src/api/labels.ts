/** Labels and annotations shared by the node plugin and the controllers. */
export const NODE_ID_HASH_LABEL = 'csi.cert-manager.io/node-id-hash';
export const VOLUME_ID_HASH_LABEL = 'csi.cert-manager.io/volume-id-hash';
/**
 * An Issuer or ClusterIssuer with this annotation set to "true" lets CSI volumes ask it for CA
 * certificates (is-ca); without it such requests are refused (docs/volume-attributes.md, "CA certificates for volumes").
 */
export const ALLOW_IS_CA_ANNOTATION = 'cert-csi.io/allow-is-ca';

/** True when labels mark a CertificateRequest the node plugin made for a CSI volume. */
export function isCsiVolumeRequest(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[NODE_ID_HASH_LABEL] !== undefined || labels?.[VOLUME_ID_HASH_LABEL] !== undefined;
}

/** Names the Secret holding the key a SelfSigned issuer signs with. */
export const PRIVATE_KEY_SECRET_NAME_ANNOTATION = 'cert-manager.io/private-key-secret-name';

const hashAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * csi-lib's HashIdentifier: 32-bit FNV-1 (not FNV-1a) of the UTF-8 bytes, written in
 * decimal, each digit mapped through a 27-letter alphabet. Real cert-manager deployments
 * select on these label values, so the mapping must be bit-exact.
 */
export function hashIdentifier(value: string): string {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(value, 'utf8')) {
    hash = Math.imul(hash, 0x01000193) >>> 0;
    hash = (hash ^ byte) >>> 0;
  }
  let out = '';
  for (const digit of String(hash)) {
    out += hashAlphabet[digit.charCodeAt(0) % hashAlphabet.length];
  }
  return out;
}
