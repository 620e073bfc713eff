import { constants, type KeyObject, sign, verify } from 'node:crypto';
import type { ErrorKind } from '../base/error-catalogue.js';
import { createCsr, type ParsedCsr, parseCsrSync } from './csr.js';
import { childrenOf, rawOf, readSingle, Tag } from './der.js';
import { PkiError } from './errors.js';
import { keySpecOf } from './keys.js';
import { decodePemBlocks, encodePem } from './pem.js';
import { publicKeyFromSpki } from './spki-import.js';

/** The key types kubelet generates for a podCertificate projection (its keyType, KEP-4317). */
export const POD_CERTIFICATE_KEY_TYPES = [
  'RSA3072',
  'RSA4096',
  'ECDSAP256',
  'ECDSAP384',
  'ECDSAP521',
  'ED25519',
] as const;
export type PodCertificateKeyType = (typeof POD_CERTIFICATE_KEY_TYPES)[number];

/** Why a request's key material cannot be used: what the signer maps to a terminal condition. */
export type PodKeyProblem =
  /** Neither encoding present, both present, or bytes that do not parse. */
  | 'missing'
  /** A key kubelet never generates (RSA 2048, an unknown curve...). */
  | 'unsupportedKeyType'
  /** The proof or the stub request's signature does not verify. */
  | 'badProof';

/** A request's key material that cannot be used; the message never holds key bytes. */
export class PodKeyError extends PkiError {
  constructor(
    readonly problem: PodKeyProblem,
    message: string,
  ) {
    super(message);
  }

  override get errorKind(): ErrorKind {
    return 'CERT_CSI_POD_KEY_UNUSABLE';
  }
}

/** The key type name of a public (or private) key, or undefined when kubelet never generates it. */
export function podCertificateKeyTypeOf(key: KeyObject): PodCertificateKeyType | undefined {
  let spec: ReturnType<typeof keySpecOf>;
  try {
    spec = keySpecOf(key);
  } catch {
    return undefined;
  }
  switch (spec.algorithm) {
    case 'RSA':
      return spec.size === 3072 ? 'RSA3072' : spec.size === 4096 ? 'RSA4096' : undefined;
    case 'ECDSA':
      return `ECDSAP${spec.size}`;
    case 'Ed25519':
      return 'ED25519';
  }
}

/** A PodCertificateRequest's key material, base64 as in the API. */
export interface PodKeyMaterial {
  pkixPublicKey?: string | undefined;
  proofOfPossession?: string | undefined;
  stubPKCS10Request?: string | undefined;
}

const SUPPORTED_TYPES_TEXT =
  'supported types are RSA3072, RSA4096, ECDSAP256, ECDSAP384, ECDSAP521 and ED25519';

/**
 * The subject public key of a request, once its proof of possession holds: the 1.36 stub
 * PKCS#10 request's self-signature, or the 1.35 signature over the pod UID (Ed25519 over the
 * raw UID bytes; ECDSA and RSA-PSS over their SHA-256). Throws PodKeyError otherwise.
 */
export function verifiedPodCertificateKey(
  material: PodKeyMaterial,
  podUID: string,
): { publicKey: KeyObject; keyType: PodCertificateKeyType; spkiDer: Uint8Array } {
  const hasPkix = Boolean(material.pkixPublicKey || material.proofOfPossession);
  if (material.stubPKCS10Request && hasPkix) {
    throw new PodKeyError(
      'missing',
      'pkixPublicKey and proofOfPossession must be empty when stubPKCS10Request is set',
    );
  }
  if (material.stubPKCS10Request) {
    const { publicKey, spkiDer } = stubRequestKey(material.stubPKCS10Request);
    return { publicKey, keyType: supportedType(publicKey), spkiDer: new Uint8Array(spkiDer) };
  }
  if (!material.pkixPublicKey || !material.proofOfPossession) {
    throw new PodKeyError(
      'missing',
      'the request carries no key: stubPKCS10Request, or pkixPublicKey with proofOfPossession, is required (a request a Kubernetes 1.35 kubelet wrote has only pkixPublicKey, which certificates.k8s.io/v1 does not show: upgrade the node to 1.36 or later)',
    );
  }
  const spkiDer = Buffer.from(material.pkixPublicKey, 'base64');
  let publicKey: KeyObject;
  try {
    publicKey = publicKeyFromSpki(spkiDer);
  } catch {
    throw new PodKeyError('missing', 'pkixPublicKey is not a DER SubjectPublicKeyInfo');
  }
  const keyType = supportedType(publicKey);
  const proof = Buffer.from(material.proofOfPossession, 'base64');
  if (!verifyPodUidSignature(publicKey, podUID, proof)) {
    throw new PodKeyError(
      'badProof',
      `proofOfPossession is not a ${keyType} signature of the pod UID`,
    );
  }
  return { publicKey, keyType, spkiDer };
}

/**
 * The public key a request asks for, without checking any signature: the stub PKCS#10
 * request's SubjectPublicKeyInfo, or pkixPublicKey. For checks after create, where the API
 * server has verified the proof already (a status write's leaf must carry this key). Throws
 * PodKeyError('missing') when the chosen encoding does not parse.
 */
export function requestedPublicKey(material: PodKeyMaterial): KeyObject {
  if (material.stubPKCS10Request) {
    const der = Buffer.from(material.stubPKCS10Request, 'base64');
    let spki: Uint8Array;
    try {
      // CertificationRequest { CertificationRequestInfo { version, subject, spki, [0] attributes }, ... }
      const [info] = childrenOf(der, readSingle(der), Tag.SEQUENCE, 'certificate request');
      if (!info) throw new PkiError('malformed DER: empty certificate request');
      const [, , key] = childrenOf(der, info, Tag.SEQUENCE, 'certification request info');
      if (key?.tag !== Tag.SEQUENCE) throw new PkiError('malformed DER: missing public key');
      spki = rawOf(der, key);
    } catch (err) {
      throw new PodKeyError('missing', `stubPKCS10Request: ${(err as Error).message}`);
    }
    return spkiKey(spki, 'stubPKCS10Request');
  }
  if (!material.pkixPublicKey) {
    throw new PodKeyError(
      'missing',
      'the request carries neither stubPKCS10Request nor pkixPublicKey',
    );
  }
  return spkiKey(Buffer.from(material.pkixPublicKey, 'base64'), 'pkixPublicKey');
}

function spkiKey(der: Uint8Array, field: string): KeyObject {
  try {
    return publicKeyFromSpki(der);
  } catch {
    throw new PodKeyError('missing', `${field} does not hold a DER SubjectPublicKeyInfo`);
  }
}

function stubRequestKey(stub: string): ParsedCsr {
  const der = Buffer.from(stub, 'base64');
  let parsed: ReturnType<typeof parseCsrSync>;
  try {
    parsed = parseCsrSync(encodePem('CERTIFICATE REQUEST', der));
  } catch (err) {
    const invalidSignature = (err as Error).message.includes('signature is invalid');
    throw new PodKeyError(
      invalidSignature ? 'badProof' : 'missing',
      `stubPKCS10Request: ${(err as Error).message}`,
    );
  }
  return parsed;
}

function supportedType(publicKey: KeyObject): PodCertificateKeyType {
  const keyType = podCertificateKeyTypeOf(publicKey);
  if (!keyType) {
    throw new PodKeyError(
      'unsupportedKeyType',
      `unsupported public key type; ${SUPPORTED_TYPES_TEXT}`,
    );
  }
  return keyType;
}

const PSS_VERIFY = {
  padding: constants.RSA_PKCS1_PSS_PADDING,
  saltLength: constants.RSA_PSS_SALTLEN_AUTO,
};
const PSS_SIGN = {
  padding: constants.RSA_PKCS1_PSS_PADDING,
  saltLength: constants.RSA_PSS_SALTLEN_MAX_SIGN,
};

function verifyPodUidSignature(publicKey: KeyObject, podUID: string, proof: Buffer): boolean {
  const message = Buffer.from(podUID, 'utf8');
  try {
    switch (publicKey.asymmetricKeyType) {
      case 'ed25519':
        return verify(null, message, publicKey, proof);
      case 'ec':
        return verify('sha256', message, { key: publicKey, dsaEncoding: 'der' }, proof);
      default:
        return verify('sha256', message, { key: publicKey, ...PSS_VERIFY }, proof);
    }
  } catch {
    return false;
  }
}

/**
 * kubelet's proof of possession for 1.34/1.35 requests (KEP-4317): the pod UID signed
 * with the new key, as kubelet's generateKeyAndProof does (Go's SignPSS with nil options uses
 * the longest salt). For test clients and benchmarks that play kubelet.
 */
export function signPodUid(privateKey: KeyObject, podUID: string): Buffer {
  const message = Buffer.from(podUID, 'utf8');
  switch (privateKey.asymmetricKeyType) {
    case 'ed25519':
      return sign(null, message, privateKey);
    case 'ec':
      return sign('sha256', message, { key: privateKey, dsaEncoding: 'der' });
    default:
      return sign('sha256', message, { key: privateKey, ...PSS_SIGN });
  }
}

/** kubelet's 1.36 stub request: an empty PKCS#10 request signed by the key, as DER. */
export async function createStubPkcs10Request(privateKey: KeyObject): Promise<Buffer> {
  const pem = await createCsr({ key: privateKey });
  const block = decodePemBlocks(pem)[0];
  /* c8 ignore next */
  if (!block) throw new PkiError('no certificate request was produced');
  return Buffer.from(block.der);
}
