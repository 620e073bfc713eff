import type { KeyObject } from 'node:crypto';
import { quoted } from '../api/echoed-value.js';
import { PkiError } from './errors.js';
import { type KeyAlgorithm, keySpecOf, type SigningAlgorithm } from './keys.js';

// cert-manager's spec.signatureAlgorithm names (the Certificate CRD's enum) and how each is
// signed (signing.ts). Node signs all seven: RSA PKCS#1 v1.5 and ECDSA with SHA-256/384/512
// (ECDSA with any of them on any curve, as Go allows) and Ed25519.
const ALGORITHMS: Readonly<Record<string, { key: KeyAlgorithm; signing: SigningAlgorithm }>> = {
  SHA256WithRSA: { key: 'RSA', signing: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } },
  SHA384WithRSA: { key: 'RSA', signing: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' } },
  SHA512WithRSA: { key: 'RSA', signing: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' } },
  ECDSAWithSHA256: { key: 'ECDSA', signing: { name: 'ECDSA', hash: 'SHA-256' } },
  ECDSAWithSHA384: { key: 'ECDSA', signing: { name: 'ECDSA', hash: 'SHA-384' } },
  ECDSAWithSHA512: { key: 'ECDSA', signing: { name: 'ECDSA', hash: 'SHA-512' } },
  PureEd25519: { key: 'Ed25519', signing: { name: 'Ed25519' } },
};

/** The signature algorithm names a Certificate may ask for, in the CRD's order. */
export const SIGNATURE_ALGORITHM_NAMES: readonly string[] = Object.keys(ALGORITHMS);

/** The names that fit each key algorithm, in the CRD's order (cert-manager's keyAlgToAllowedSigAlgs). */
export function signatureAlgorithmsFor(key: KeyAlgorithm): string[] {
  return SIGNATURE_ALGORITHM_NAMES.filter((name) => ALGORITHMS[name]?.key === key);
}

/** How to sign with key under cert-manager's algorithm name; throws PkiError for an unknown name or one that does not fit the key. */
export function namedSigningAlgorithm(key: KeyObject, name: string): SigningAlgorithm {
  const entry = Object.hasOwn(ALGORITHMS, name) ? ALGORITHMS[name] : undefined;
  if (!entry) throw new PkiError(`unsupported signature algorithm ${quoted(name)}`);
  const algorithm = keySpecOf(key).algorithm;
  if (entry.key !== algorithm)
    throw new PkiError(`signature algorithm ${name} cannot sign with an ${algorithm} key`);
  return entry.signing;
}
