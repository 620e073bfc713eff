import type { KeyObject } from 'node:crypto';
import type { CertificatePrivateKey } from '../api/certificate.js';
import { ECDSA_DEFAULT_SIZE, keySpecOf, RSA_DEFAULT_BITS } from '../pki/keys.js';

/**
 * The fields of spec.privateKey a key does not satisfy, as cert-manager's
 * PrivateKeyMatchesSpec names them: `spec.privateKey.algorithm` for another key type, else
 * `spec.privateKey.size` for another size (RSA bits or ECDSA curve; Ed25519 has none). An
 * unset algorithm means RSA.
 */
export function privateKeyMismatches(
  key: KeyObject,
  privateKey: CertificatePrivateKey | undefined,
): string[] {
  const wanted = privateKey?.algorithm ?? 'RSA';
  let actual: ReturnType<typeof keySpecOf>;
  try {
    actual = keySpecOf(key);
  } catch {
    // A key type cert-manager cannot use is the wrong algorithm whatever was asked.
    return ['spec.privateKey.algorithm'];
  }
  if (actual.algorithm !== wanted) return ['spec.privateKey.algorithm'];
  if (actual.algorithm === 'Ed25519') return [];
  // A size of 0 is unset, as in Go.
  const size =
    privateKey?.size || (actual.algorithm === 'RSA' ? RSA_DEFAULT_BITS : ECDSA_DEFAULT_SIZE);
  return actual.size === size ? [] : ['spec.privateKey.size'];
}
