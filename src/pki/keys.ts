import {
  createECDH,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  generateKeyPairSync,
  type KeyObject,
  X509Certificate,
} from 'node:crypto';
import { promisify } from 'node:util';
import { PkiError } from './errors.js';
import { markMadeByJob } from './jwk-export.js';
import { decodePemBlocks, encodePem, pemText } from './pem.js';
import { encodePrivateKeyInfo } from './private-key-info.js';
import { encodePublicKeyInfo } from './public-key-info.js';

/** Key algorithms, spelled as cert-manager's `privateKey.algorithm`. */
export type KeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519';

/** Algorithm and size of a key; size is bits for RSA and the curve size for ECDSA. */
export interface KeySpec {
  algorithm: KeyAlgorithm;
  size?: number;
}

/** Private key PEM encodings, spelled as the csi-driver `key-encoding` attribute. */
export type KeyEncoding = 'PKCS1' | 'PKCS8';

/** Hashes used for signatures. */
export type HashName = 'SHA-256' | 'SHA-384' | 'SHA-512';

/** A signature algorithm: the scheme (named as in WebCrypto) and its hash; Ed25519 hashes internally. */
export type SigningAlgorithm =
  | { name: 'RSASSA-PKCS1-v1_5'; hash: HashName }
  | { name: 'ECDSA'; hash: HashName }
  | { name: 'Ed25519' };

export const RSA_MIN_BITS = 2048;
export const RSA_MAX_BITS = 8192;
export const RSA_DEFAULT_BITS = 2048;

/** ECDSA sizes, named by their curve's bit size. */
export type EcdsaSize = 256 | 384 | 521;
export const ECDSA_DEFAULT_SIZE: EcdsaSize = 256;

/** A checked key spec with its size filled in. */
export type NormalizedKeySpec =
  | { algorithm: 'RSA'; size: number }
  | { algorithm: 'ECDSA'; size: EcdsaSize }
  | { algorithm: 'Ed25519' };

const CURVES: Record<EcdsaSize, { node: string; jwk: string; hash: HashName }> = {
  256: { node: 'prime256v1', jwk: 'P-256', hash: 'SHA-256' },
  384: { node: 'secp384r1', jwk: 'P-384', hash: 'SHA-384' },
  521: { node: 'secp521r1', jwk: 'P-521', hash: 'SHA-512' },
};

const isEcdsaSize = (size: number): size is EcdsaSize =>
  size === 256 || size === 384 || size === 521;

const generateKeyPairAsync = promisify(generateKeyPair);

/** Checks a key spec and fills in the default size; throws PkiError naming the problem. */
export function normalizeKeySpec(spec: KeySpec): NormalizedKeySpec {
  switch (spec.algorithm) {
    case 'RSA': {
      const size = spec.size ?? RSA_DEFAULT_BITS;
      if (!Number.isInteger(size) || size < RSA_MIN_BITS || size > RSA_MAX_BITS) {
        throw new PkiError(
          `RSA key size must be between ${RSA_MIN_BITS} and ${RSA_MAX_BITS}, got ${size}`,
        );
      }
      return { algorithm: 'RSA', size };
    }
    case 'ECDSA': {
      const size = spec.size ?? ECDSA_DEFAULT_SIZE;
      if (!isEcdsaSize(size)) {
        throw new PkiError(`ECDSA key size must be 256, 384 or 521, got ${size}`);
      }
      return { algorithm: 'ECDSA', size };
    }
    case 'Ed25519':
      if (spec.size !== undefined) {
        throw new PkiError(`Ed25519 keys have no size, got ${spec.size}`);
      }
      return { algorithm: 'Ed25519' };
    default:
      throw new PkiError(`unsupported key algorithm "${String(spec.algorithm)}"`);
  }
}

/**
 * Generates a private key. RSA is generated on the thread pool (RSA-4096 would block the event
 * loop for seconds); an EC or Ed25519 key takes well under a millisecond, less than the round
 * trip to the pool, so it is generated here.
 */
export async function generatePrivateKey(spec: KeySpec): Promise<KeyObject> {
  const normalized = normalizeKeySpec(spec);
  const key = await generateWith(normalized);
  generatedSpecs.set(key, Object.freeze(normalized));
  return key;
}

async function generateWith(spec: NormalizedKeySpec): Promise<KeyObject> {
  if (spec.algorithm === 'RSA') {
    const pair = await generateKeyPairAsync('rsa', {
      modulusLength: spec.size,
      publicExponent: 0x10001,
    });
    markMadeByJob(pair.privateKey);
    return pair.privateKey;
  }
  if (spec.algorithm === 'ECDSA') return generateEcKey(spec.size);
  const key = generateKeyPairSync('ed25519').privateKey;
  markMadeByJob(key);
  return key;
}

// An EC key made without Node's key generation job, which a JWK export of the key can deadlock on
// (jwk-export.ts): the scalar and point from an ECDH generation, imported as a JWK. It costs less
// than generateKeyPairSync and the first export of its public point together (~85 against
// ~115 µs for P-256 on the bench machine).
function generateEcKey(size: EcdsaSize): KeyObject {
  const ecdh = createECDH(CURVES[size].node);
  const point = ecdh.generateKeys();
  const coordinate = (point.length - 1) / 2;
  // getPrivateKey drops leading zero bytes; a JWK's d has the curve's full length (RFC 7518).
  const scalar = ecdh.getPrivateKey();
  const d = Buffer.concat([Buffer.alloc(coordinate - scalar.length), scalar]);
  const key = createPrivateKey({
    key: {
      kty: 'EC',
      crv: CURVES[size].jwk,
      d: d.toString('base64url'),
      x: point.subarray(1, 1 + coordinate).toString('base64url'),
      y: point.subarray(1 + coordinate).toString('base64url'),
    },
    format: 'jwk',
  });
  d.fill(0);
  scalar.fill(0);
  return key;
}

// The spec each key generated here was made with: reading a new key's asymmetricKeyDetails costs
// OpenSSL ~70 µs on its first call (more than generating an EC key), and every CSR asks it.
const generatedSpecs = new WeakMap<KeyObject, NormalizedKeySpec>();

/** Throws PkiError unless key is a private key. */
export function requirePrivate(key: KeyObject): void {
  if (key.type !== 'private')
    throw new PkiError(`a private key is required, got a ${key.type} key`);
}

/** Encodes a private key as PEM: PKCS1 (`RSA PRIVATE KEY`, RSA only) or PKCS8 (`PRIVATE KEY`). */
export function encodePrivateKey(key: KeyObject, encoding: KeyEncoding): string {
  requirePrivate(key);
  if (encoding === 'PKCS1') {
    if (key.asymmetricKeyType !== 'rsa') {
      throw new PkiError(`PKCS1 encoding requires an RSA key, got ${key.asymmetricKeyType}`);
    }
    return String(key.export({ type: 'pkcs1', format: 'pem' }));
  }
  if (encoding === 'PKCS8') return encodePem('PRIVATE KEY', encodePrivateKeyInfo(key));
  throw new PkiError(`unsupported private key encoding "${String(encoding)}"`);
}

/**
 * Encodes a private key as cert-manager writes a Certificate's `tls.key` for
 * `privateKey.encoding`: PKCS1 is `RSA PRIVATE KEY` for RSA, SEC1 `EC PRIVATE KEY` for ECDSA
 * and PKCS#8 for Ed25519 (it has no other form); PKCS8 is `PRIVATE KEY` for every key.
 */
export function encodeCertificatePrivateKey(key: KeyObject, encoding: KeyEncoding): string {
  requirePrivate(key);
  if (encoding !== 'PKCS1') return encodePrivateKey(key, encoding);
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return String(key.export({ type: 'pkcs1', format: 'pem' }));
    case 'ec':
      return String(key.export({ type: 'sec1', format: 'pem' }));
    case 'ed25519':
      return String(key.export({ type: 'pkcs8', format: 'pem' }));
    default:
      throw new PkiError(`unsupported key type ${String(key.asymmetricKeyType)}`);
  }
}

const KEY_TYPE_BY_LABEL: Record<string, 'pkcs1' | 'sec1' | 'pkcs8'> = {
  'RSA PRIVATE KEY': 'pkcs1',
  'EC PRIVATE KEY': 'sec1',
  'PRIVATE KEY': 'pkcs8',
};

/** Decodes a PKCS#1, SEC1 or PKCS#8 PEM private key (the first key block; `EC PARAMETERS` blocks are skipped). */
export function decodePrivateKey(pem: string | Buffer): KeyObject {
  let blocks: ReturnType<typeof decodePemBlocks>;
  try {
    blocks = decodePemBlocks(pemText(pem));
  } catch (err) {
    throw new PkiError(`cannot decode private key: ${(err as Error).message}`);
  }
  if (blocks.some((b) => b.label === 'ENCRYPTED PRIVATE KEY')) {
    throw new PkiError('cannot decode private key: encrypted private keys are not supported');
  }
  const block = blocks.find((b) => KEY_TYPE_BY_LABEL[b.label] !== undefined);
  const type = block && KEY_TYPE_BY_LABEL[block.label];
  if (!block || !type)
    throw new PkiError('cannot decode private key: no private key PEM block found');
  try {
    return createPrivateKey({ key: Buffer.from(block.der), format: 'der', type });
  } catch (err) {
    // OpenSSL's reason strings name the failing decoder, never the key bytes.
    throw new PkiError(`cannot decode private key: ${(err as Error).message}`);
  }
}

/** Returns the algorithm and size of a private or public key; throws PkiError for unsupported keys. */
export function keySpecOf(key: KeyObject): NormalizedKeySpec {
  const generated = generatedSpecs.get(key);
  if (generated) return generated;
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { algorithm: 'RSA', size: Number(details.modulusLength) };
    case 'ec':
      for (const size of [256, 384, 521] as const) {
        if (CURVES[size].node === details.namedCurve) return { algorithm: 'ECDSA', size };
      }
      throw new PkiError(`unsupported elliptic curve ${String(details.namedCurve)}`);
    case 'ed25519':
      return { algorithm: 'Ed25519' };
    default:
      throw new PkiError(`unsupported key type ${String(key.asymmetricKeyType)}`);
  }
}

// A KeyObject never changes: the controllers compare the same keys on many syncs.
const spkis = new WeakMap<KeyObject, Buffer>();

/** Returns the SubjectPublicKeyInfo DER of a private or public key (a copy: callers may write it). */
export function spkiOf(key: KeyObject): Buffer {
  let spki = spkis.get(key);
  if (!spki) {
    spki = encodePublicKeyInfo(key);
    spkis.set(key, spki);
  }
  return Buffer.from(spki);
}

const publicHalves = new WeakMap<KeyObject, KeyObject>();

/** The public key of a private key (remembered), or the public key itself. */
function publicHalfOf(key: KeyObject): KeyObject {
  if (key.type !== 'private') return key;
  let half = publicHalves.get(key);
  if (!half) {
    half = createPublicKey(key);
    publicHalves.set(key, half);
  }
  return half;
}

/**
 * True when both keys (private or public) have the same public key: the same type and key
 * material, as Go's PublicKey.Equal compares them. OpenSSL compares the keys themselves,
 * about 30 times faster than exporting both to SPKI DER (OpenSSL 3's encoders are slow).
 */
export function publicKeysEqual(a: KeyObject, b: KeyObject): boolean {
  // Keys of two types are never equal, and Node 20's equals() leaves OpenSSL's "different key
  // types" error queued for them, which fails the next decoding in the thread.
  if (a.asymmetricKeyType !== b.asymmetricKeyType) return false;
  return publicHalfOf(a).equals(publicHalfOf(b));
}

/** True when the key's public half is the public key of the first certificate in certPem. */
export function keyMatchesCertificate(key: KeyObject, certPem: string): boolean {
  const first = decodePemBlocks(certPem).find((b) => b.label === 'CERTIFICATE');
  if (!first) throw new PkiError('no certificate PEM block found');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(first.der);
  } catch (err) {
    throw new PkiError(`cannot parse certificate: ${(err as Error).message}`);
  }
  return publicKeysEqual(key, cert.publicKey);
}

/** The signature algorithm for a signer key: CSRs use Go's key default (SHA-256 for RSA), certificates use cert-manager's CA choice (RSA hash grows with key size). */
export function signingAlgorithmFor(
  key: KeyObject,
  purpose: 'csr' | 'certificate',
): SigningAlgorithm {
  const spec = keySpecOf(key);
  if (spec.algorithm === 'Ed25519') return { name: 'Ed25519' };
  if (spec.algorithm === 'ECDSA') return { name: 'ECDSA', hash: CURVES[spec.size].hash };
  let hash: HashName = 'SHA-256';
  if (purpose === 'certificate' && spec.size >= 4096) hash = 'SHA-512';
  else if (purpose === 'certificate' && spec.size >= 3072) hash = 'SHA-384';
  return { name: 'RSASSA-PKCS1-v1_5', hash };
}
