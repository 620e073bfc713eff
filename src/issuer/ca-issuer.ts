import type { KeyObject, X509Certificate } from 'node:crypto';
import type { Issuer } from '../api/issuer.js';
import {
  CA_CERT_KEY,
  type Secret,
  secretValue,
  TLS_CERT_KEY,
  TLS_PRIVATE_KEY_KEY,
} from '../api/secret.js';
import { type PreparedSigner, prepareSigner, signCertificate } from '../pki/certificate.js';
import { buildChain, certificatePem, splitPemCertificates } from '../pki/chain.js';
import { decodePrivateKey, keyMatchesCertificate } from '../pki/keys.js';
import { certificateTemplate } from './certificate-template.js';
import type { IssuerSigner, SigningContext } from './issuer-signer.js';
import type { SigningResult } from './signing-outcome.js';
import type { SigningInput, SigningRequest } from './signing-request.js';

/** A CA key pair read from a Secret: signer certificate first, then the rest of its chain. */
export interface CAKeyPair {
  certificates: X509Certificate[];
  key: KeyObject;
}

/**
 * Reads `tls.crt`, `tls.key` and the first certificate of `ca.crt` from a CA Secret.
 * Throws with the reason when the Secret does not hold a usable key pair.
 */
export function readCAKeyPair(secret: Secret): CAKeyPair {
  const certPem = secretValue(secret, TLS_CERT_KEY);
  if (!certPem) throw new Error(`secret has no "${TLS_CERT_KEY}"`);
  const keyPem = secretValue(secret, TLS_PRIVATE_KEY_KEY);
  if (!keyPem) throw new Error(`secret has no "${TLS_PRIVATE_KEY_KEY}"`);
  const certificates = splitPemCertificates(certPem);
  const first = certificates[0];
  if (!first) throw new Error(`"${TLS_CERT_KEY}" holds no certificate`);
  const key = decodePrivateKey(keyPem);
  if (!keyMatchesCertificate(key, first.toString())) {
    throw new Error('private key does not match certificate');
  }
  const caPem = secretValue(secret, CA_CERT_KEY);
  const root = caPem ? splitPemCertificates(caPem)[0] : undefined;
  // A self-signed CA's ca.crt repeats tls.crt: keeping one copy lets signing skip the chain build.
  const known = root && certificates.some((c) => c.raw.equals(root.raw));
  return { certificates: root && !known ? [...certificates, root] : certificates, key };
}

interface PreparedPair {
  pair: CAKeyPair;
  signer: PreparedSigner;
}

const MAX_CACHED_SIGNERS = 64;

/**
 * The signer of cert-manager's CA issuer. Each CA Secret is parsed and its key imported
 * once per resourceVersion, not once per request: that work cost more than the signature.
 */
export function createCASigner(): IssuerSigner {
  const cache = new Map<string, { version: string; prepared: Promise<PreparedPair> }>();
  const prepare = (secret: Secret): Promise<PreparedPair> => {
    const id = `${secret.metadata.namespace}/${secret.metadata.name}`;
    const version = `${secret.metadata.uid ?? ''}/${secret.metadata.resourceVersion ?? ''}`;
    const cached = cache.get(id);
    if (cached && cached.version === version && version !== '/') return cached.prepared;
    const prepared = preparePair(secret);
    cache.delete(id);
    if (cache.size >= MAX_CACHED_SIGNERS) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(id, { version, prepared });
    // A Secret that fails to parse must be read again next time, not answered from the cache.
    prepared.catch(() => {
      if (cache.get(id)?.prepared === prepared) cache.delete(id);
    });
    return prepared;
  };
  return (issuer, input, context) => signWithCA(issuer, input, context, prepare);
}

/** Reads a CA Secret's key pair and prepares it for signing. */
async function preparePair(secret: Secret): Promise<PreparedPair> {
  const pair = readCAKeyPair(secret);
  const signer = await prepareSigner({
    certificatePem: String(pair.certificates[0]),
    key: pair.key,
  });
  return { pair, signer };
}

/**
 * Signs one request with a CA issuer, in cert-manager's order: the CA Secret (missing,
 * unusable), then the request, then the signature and the chain. `prepare` reads the CA
 * Secret (cached or not).
 */
export async function signWithCA(
  issuer: Issuer,
  input: SigningInput,
  context: SigningContext,
  prepare: (secret: Secret) => Promise<PreparedPair> = preparePair,
): Promise<SigningResult> {
  const secretRef = {
    namespace: context.resourceNamespace(issuer),
    name: issuer.spec.ca?.secretName ?? '',
  };
  const secret = context.secret(secretRef.namespace, secretRef.name);
  if (!secret) return { kind: 'caSecretMissing', secret: secretRef };
  let prepared: PreparedPair;
  try {
    prepared = await prepare(secret);
  } catch (cause) {
    return { kind: 'caSecretInvalid', secret: secretRef, cause };
  }
  let request: SigningRequest;
  try {
    request = await input.read();
  } catch (cause) {
    return { kind: 'requestInvalid', cause };
  }
  try {
    const template = certificateTemplate(request, issuer);
    const signerCertificate = prepared.pair.certificates[0];
    if (request.boundedByIssuer && signerCertificate) {
      template.notAfterLimit = new Date(signerCertificate.validTo);
    }
    const leafPem = await signCertificate(request.subject, template, prepared.signer, context.now);
    const [root, ...rest] = prepared.pair.certificates;
    if (root && rest.length === 0 && isSelfSignedRoot(root)) {
      // Signed just now by this root: the chain is the leaf and ca.crt the root, with no
      // need to parse and verify what was built (the common embedded and test-CA case).
      return { kind: 'issued', chainPem: leafPem, caPem: certificatePem(root) };
    }
    const chain = buildChain(
      leafPem,
      prepared.pair.certificates.map((c) => c.toString()),
    );
    return { kind: 'issued', chainPem: chain.chainPem, caPem: chain.caPem };
  } catch (cause) {
    return { kind: 'signingFailed', cause };
  }
}

function isSelfSignedRoot(certificate: X509Certificate): boolean {
  return (
    certificate.ca &&
    certificate.subject === certificate.issuer &&
    certificate.checkIssued(certificate)
  );
}
