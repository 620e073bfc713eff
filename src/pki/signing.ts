import { type KeyObject, sign } from 'node:crypto';
import { encodeBitString, encodeOid, encodeTlv, sequence, Tag } from './der.js';
import type { HashName, SigningAlgorithm } from './keys.js';

// Certificates and requests are signed here, synchronously with node:crypto on the KeyObject
// itself: no key import and no thread-pool round trip per signature (an ECDSA P-256
// signature takes ~0.05 ms, less than the hop to the pool would).

const NODE_HASH: Record<HashName, string> = {
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};

// RFC 4055 (RSA, parameters NULL), RFC 5758 (ECDSA, parameters absent), RFC 8410 (Ed25519,
// parameters absent): the AlgorithmIdentifier each signature is announced with.
const NULL = encodeTlv(Tag.NULL, new Uint8Array(0));
const IDENTIFIERS = {
  rsa: {
    'SHA-256': sequence([encodeOid('1.2.840.113549.1.1.11'), NULL]),
    'SHA-384': sequence([encodeOid('1.2.840.113549.1.1.12'), NULL]),
    'SHA-512': sequence([encodeOid('1.2.840.113549.1.1.13'), NULL]),
  },
  ecdsa: {
    'SHA-256': sequence([encodeOid('1.2.840.10045.4.3.2')]),
    'SHA-384': sequence([encodeOid('1.2.840.10045.4.3.3')]),
    'SHA-512': sequence([encodeOid('1.2.840.10045.4.3.4')]),
  },
  ed25519: sequence([encodeOid('1.3.101.112')]),
} as const;

/** The AlgorithmIdentifier DER of a signing algorithm. */
export function algorithmIdentifierOf(algorithm: SigningAlgorithm): Uint8Array {
  switch (algorithm.name) {
    case 'RSASSA-PKCS1-v1_5':
      return IDENTIFIERS.rsa[algorithm.hash];
    case 'ECDSA':
      return IDENTIFIERS.ecdsa[algorithm.hash];
    default:
      return IDENTIFIERS.ed25519;
  }
}

/** Signs data with the private key: RSA PKCS#1 v1.5, ECDSA (DER signature, as X.509 carries it) or Ed25519. */
export function signBytes(key: KeyObject, algorithm: SigningAlgorithm, data: Uint8Array): Buffer {
  switch (algorithm.name) {
    case 'RSASSA-PKCS1-v1_5':
      return sign(NODE_HASH[algorithm.hash], data, key);
    case 'ECDSA':
      return sign(NODE_HASH[algorithm.hash], data, { key, dsaEncoding: 'der' });
    default:
      return sign(null, data, key);
  }
}

/**
 * The SEQUENCE X.509 and PKCS#10 share for a signed structure: the to-be-signed DER, the
 * algorithm and the signature as a BIT STRING.
 */
export function signedStructure(
  toBeSigned: Uint8Array,
  key: KeyObject,
  algorithm: SigningAlgorithm,
): Uint8Array {
  return sequence([
    toBeSigned,
    algorithmIdentifierOf(algorithm),
    encodeBitString(signBytes(key, algorithm, toBeSigned)),
  ]);
}
