import type { KeyObject, X509Certificate } from 'node:crypto';
import { type Secret, secretValue, TLS_CERT_KEY, TLS_PRIVATE_KEY_KEY } from '../api/secret.js';
import { publicKeysEqual } from '../pki/keys.js';
import { type Decoded, decodedCertificatePem, decodedKeyPem } from './pem-decodings.js';

// Every Certificate controller looks at the same Secret on each of its ~10 syncs per issuance
// (trigger and readiness chains, readiness status, issuing): decoding its key and certificate
// each time was a fifth of the CPU of a Certificate in bench/certificates.ts. Informer objects
// are replaced, never mutated, so one decoding per Secret object is one per Secret version (and
// the texts' decodings are shared with the other objects holding them: pem-decodings.ts).

interface Contents {
  keyPem: string | undefined;
  certificatePem: string | undefined;
  key?: Decoded<KeyObject>;
  certificate?: Decoded<X509Certificate>;
  pairs?: boolean;
}

const contents = new WeakMap<Secret, Contents>();

function contentsOf(secret: Secret): Contents {
  let found = contents.get(secret);
  if (!found) {
    found = {
      keyPem: secretValue(secret, TLS_PRIVATE_KEY_KEY),
      certificatePem: secretValue(secret, TLS_CERT_KEY),
    };
    contents.set(secret, found);
  }
  return found;
}

/** The Secret's tls.key decoded, once per Secret object; undefined when it has none (or it is empty). */
export function secretKey(secret: Secret): Decoded<KeyObject> | undefined {
  const found = contentsOf(secret);
  const pem = found.keyPem;
  if (!pem) return undefined;
  found.key ??= decodedKeyPem(pem);
  return found.key;
}

/** The Secret's tls.crt decoded, once per Secret object; undefined when it has none (or it is empty). */
export function secretCertificate(secret: Secret): Decoded<X509Certificate> | undefined {
  const found = contentsOf(secret);
  const pem = found.certificatePem;
  if (!pem) return undefined;
  found.certificate ??= decodedCertificatePem(pem);
  return found.certificate;
}

/** True when the Secret's key and certificate both decode and the key is the certificate's. */
export function secretKeyPairs(secret: Secret): boolean {
  const found = contentsOf(secret);
  if (found.pairs === undefined) {
    const key = secretKey(secret);
    const certificate = secretCertificate(secret);
    found.pairs =
      key?.ok === true &&
      certificate?.ok === true &&
      publicKeysEqual(key.value, certificate.value.publicKey);
  }
  return found.pairs;
}
