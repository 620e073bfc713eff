import type { KeyObject, X509Certificate } from 'node:crypto';
import {
  CA_CERT_KEY,
  type Secret,
  secretValue,
  TLS_CERT_KEY,
  TLS_PRIVATE_KEY_KEY,
} from '../api/secret.js';
import { signCertificate } from '../pki/certificate.js';
import { buildChain, splitPemCertificates } from '../pki/chain.js';
import { decodePrivateKey, keyMatchesCertificate } from '../pki/keys.js';
import { withCause } from './request-status.js';
import { templateFromRequest } from './request-template.js';
import type { Signer } from './signer.js';

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
  return { certificates: root ? [...certificates, root] : certificates, key };
}

/** The CA issuer's signer (reference §3.2). */
export const signWithCA: Signer = async (request, issuer, context) => {
  const secretName = issuer.spec.ca?.secretName ?? '';
  const namespace = context.resourceNamespace(issuer);
  const where = `${namespace}/${secretName}`;
  const secret = context.secret(namespace, secretName);
  if (!secret) {
    return {
      outcome: 'pending',
      reason: 'SecretMissing',
      message: withCause(
        `Referenced secret ${where} not found`,
        `secrets "${secretName}" not found`,
      ),
    };
  }
  let pair: CAKeyPair;
  try {
    pair = readCAKeyPair(secret);
  } catch (err) {
    return {
      outcome: 'pending',
      reason: 'SecretInvalidData',
      message: withCause(`Failed to parse signing CA keypair from secret ${where}`, err),
    };
  }
  let template: Awaited<ReturnType<typeof templateFromRequest>>;
  try {
    template = await templateFromRequest(request, issuer);
  } catch (err) {
    return {
      outcome: 'failed',
      reason: 'SigningError',
      message: withCause('Error generating certificate template', err),
    };
  }
  try {
    const [signerCert] = pair.certificates;
    const leafPem = await signCertificate(
      template.csr,
      template.template,
      { certificatePem: String(signerCert), key: pair.key },
      context.now,
    );
    const chain = buildChain(
      leafPem,
      pair.certificates.map((c) => c.toString()),
    );
    return { outcome: 'issued', certificatePem: chain.chainPem, caPem: chain.caPem };
  } catch (err) {
    return {
      outcome: 'failed',
      reason: 'SigningError',
      message: withCause('Error signing certificate', err),
    };
  }
};
