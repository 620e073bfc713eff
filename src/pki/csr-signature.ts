import { constants, type KeyObject, verify } from 'node:crypto';
import {
  childrenOf,
  contentOf,
  decodeOid,
  readChildren,
  readSingle,
  Tag,
  type Tlv,
} from './der.js';
import { PkiError } from './errors.js';

// A PKCS#10 request's self-signature, checked synchronously with node:crypto (admission
// decides a write in one step and cannot await WebCrypto). The failure texts are Go's
// (x509.CertificateRequest.CheckSignature), which cert-manager's webhook puts in its errors.

/** The signed part of a request and its signature, as read from the DER. */
export interface SignedRequest {
  /** The whole CertificationRequestInfo encoding: what was signed. */
  signed: Uint8Array;
  signatureOid: string;
  /** The AlgorithmIdentifier's parameters (their whole encoding), absent when it has none. */
  signatureParams?: Uint8Array;
  /** The BIT STRING content without its unused-bits byte. */
  signature: Uint8Array;
  publicKey: KeyObject;
}

type KeyType = 'rsa' | 'ec' | 'ed25519';
type Hash = 'sha256' | 'sha384' | 'sha512';

interface Algorithm {
  keyType: KeyType;
  /** undefined for Ed25519, which hashes internally. */
  hash?: Hash;
  /** RSA-PSS salt length in bytes. */
  saltLength?: number;
}

// Go's PublicKeyAlgorithm names and the %T of its public key types, for the mismatch message.
const GO_ALGORITHM: Record<KeyType, string> = { rsa: 'RSA', ec: 'ECDSA', ed25519: 'Ed25519' };
const GO_KEY_TYPE: Record<KeyType, string> = {
  rsa: '*rsa.PublicKey',
  ec: '*ecdsa.PublicKey',
  ed25519: 'ed25519.PublicKey',
};

// SHA-1 and MD5 algorithms are left out on purpose: they are refused as insecure.
const FIXED_ALGORITHMS: Readonly<Record<string, Algorithm>> = {
  '1.2.840.113549.1.1.11': { keyType: 'rsa', hash: 'sha256' },
  '1.2.840.113549.1.1.12': { keyType: 'rsa', hash: 'sha384' },
  '1.2.840.113549.1.1.13': { keyType: 'rsa', hash: 'sha512' },
  '1.2.840.10045.4.3.2': { keyType: 'ec', hash: 'sha256' },
  '1.2.840.10045.4.3.3': { keyType: 'ec', hash: 'sha384' },
  '1.2.840.10045.4.3.4': { keyType: 'ec', hash: 'sha512' },
};
const RSA_PSS = '1.2.840.113549.1.1.10';
const ED25519 = '1.3.101.112';
const MGF1 = '1.2.840.113549.1.1.8';
const HASHES: Readonly<Record<string, Hash>> = {
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** Go's ErrUnsupportedAlgorithm text. */
export const UNSUPPORTED_SIGNATURE_ALGORITHM =
  'x509: cannot verify signature: algorithm unimplemented';

/** The hash OID of an AlgorithmIdentifier whose parameters are absent or NULL, as PSS requires. */
function hashOf(der: Uint8Array, identifier: Tlv | undefined): Hash | undefined {
  if (!identifier) return undefined;
  const [oid, params, extra] = childrenOf(der, identifier, Tag.SEQUENCE, 'hash algorithm');
  if (oid?.tag !== Tag.OID || extra) return undefined;
  if (params && (params.tag !== Tag.NULL || params.end !== params.contentStart)) return undefined;
  return HASHES[decodeOid(contentOf(der, oid))];
}

function smallInteger(der: Uint8Array, tlv: Tlv): number {
  if (tlv.tag !== Tag.INTEGER) throw new PkiError('malformed DER: expected INTEGER');
  const bytes = contentOf(der, tlv);
  // Negative or beyond 31 bits: no salt length Go or OpenSSL would take.
  if (bytes.length === 0 || bytes.length > 4 || (bytes[0] as number) >= 0x80) return -1;
  return bytes.reduce((n, b) => n * 256 + b, 0);
}

/**
 * RSASSA-PSS-params (RFC 4055): a SHA-2 hash, MGF1 with the same hash, the default trailer.
 * Any salt length is accepted (Go accepts only the hash length; OpenSSL signs with the
 * longest), undefined for parameters Go would call an unknown algorithm.
 */
function pssAlgorithm(params: Uint8Array | undefined): Algorithm | undefined {
  if (!params) return undefined;
  let hash: Hash | undefined;
  let mgfHash: Hash | undefined;
  let saltLength = 20;
  let trailer = 1;
  for (const field of childrenOf(params, readSingle(params), Tag.SEQUENCE, 'PSS parameters')) {
    const [inner, extra] = readChildren(params, field);
    if (!inner || extra) return undefined;
    switch (field.tag) {
      case 0xa0:
        hash = hashOf(params, inner);
        break;
      case 0xa1: {
        const [oid, mgfParams] = childrenOf(params, inner, Tag.SEQUENCE, 'mask generation');
        if (oid?.tag !== Tag.OID || decodeOid(contentOf(params, oid)) !== MGF1) return undefined;
        mgfHash = hashOf(params, mgfParams);
        break;
      }
      case 0xa2:
        saltLength = smallInteger(params, inner);
        break;
      case 0xa3:
        trailer = smallInteger(params, inner);
        break;
      default:
        return undefined;
    }
  }
  if (!hash || hash !== mgfHash || trailer !== 1 || saltLength < 0) return undefined;
  return { keyType: 'rsa', hash, saltLength };
}

function algorithmOf(request: SignedRequest): Algorithm | undefined {
  if (request.signatureOid === ED25519)
    // RFC 8410: the parameters must be absent.
    return request.signatureParams ? undefined : { keyType: 'ed25519' };
  if (request.signatureOid === RSA_PSS) {
    try {
      return pssAlgorithm(request.signatureParams);
    } catch {
      return undefined;
    }
  }
  return FIXED_ALGORITHMS[request.signatureOid];
}

// verify answers false for any signature bytes; it throws only for options never passed here
// (a negative salt length, an unknown hash).
function signatureHolds(request: SignedRequest, algorithm: Algorithm): boolean {
  const { signed, signature, publicKey } = request;
  switch (algorithm.keyType) {
    case 'ed25519':
      return verify(null, signed, publicKey, signature);
    case 'ec':
      return verify(algorithm.hash, signed, { key: publicKey, dsaEncoding: 'der' }, signature);
    default:
      return algorithm.saltLength === undefined
        ? verify(algorithm.hash, signed, publicKey, signature)
        : verify(
            algorithm.hash,
            signed,
            {
              key: publicKey,
              padding: constants.RSA_PKCS1_PSS_PADDING,
              saltLength: algorithm.saltLength,
            },
            signature,
          );
  }
}

/**
 * Why a request's self-signature does not hold, in Go's words (CheckSignature), or undefined
 * when it verifies: RSA PKCS#1 v1.5 and RSA-PSS with SHA-256/384/512, ECDSA with
 * SHA-256/384/512 on any curve, Ed25519.
 */
export function csrSignatureProblem(request: SignedRequest): string | undefined {
  const algorithm = algorithmOf(request);
  if (!algorithm) return UNSUPPORTED_SIGNATURE_ALGORITHM;
  const keyType = request.publicKey.asymmetricKeyType;
  if (keyType !== 'rsa' && keyType !== 'ec' && keyType !== 'ed25519')
    return UNSUPPORTED_SIGNATURE_ALGORITHM;
  if (keyType !== algorithm.keyType)
    return `x509: signature algorithm specifies an ${GO_ALGORITHM[algorithm.keyType]} public key, but have public key of type ${GO_KEY_TYPE[keyType]}`;
  if (signatureHolds(request, algorithm)) return undefined;
  switch (keyType) {
    case 'ec':
      return 'x509: ECDSA verification failure';
    case 'ed25519':
      return 'x509: Ed25519 verification failure';
    default:
      return 'crypto/rsa: verification error';
  }
}
