import { type KeyObject, X509Certificate } from 'node:crypto';
import { decodePrivateKey } from '../pki/keys.js';
import { RecentMemo } from './recent-memo.js';

// One issuance handles the same texts in several objects: the key-manager encodes the next key
// and the request-manager, issuing controller and policy chains read it back from the
// next-private-key Secret; the issuing controller decodes the request's certificate, then
// writes the same text into the Secret the policy chains read. OpenSSL 3 takes ~0.4 ms to
// decode a P-256 key from PKCS#8 (10 times the key's generation) and ~0.14 ms to parse a
// certificate, so each text is decoded once, and a key the controllers encoded themselves
// never is. Keyed by text: the same text always decodes to the same thing.

/** A decoded value, or what decoding it threw. */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Enough for every Certificate in flight to find its texts again while it is issued. */
const CAPACITY = 1024;

const keys = new RecentMemo<string, Decoded<KeyObject>>(CAPACITY);
const certificates = new RecentMemo<string, Decoded<X509Certificate>>(CAPACITY);

function attempt<T>(decode: () => T): Decoded<T> {
  try {
    return { ok: true, value: decode() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** A PEM private key decoded (`decodePrivateKey`), once per text. */
export function decodedKeyPem(pem: string): Decoded<KeyObject> {
  return keys.get(pem, (text) => attempt(() => decodePrivateKey(text)));
}

/** Remembers the key a PEM text was encoded from, so that decoding the text is not needed. */
export function rememberKeyPem(pem: string, key: KeyObject): void {
  keys.set(pem, { ok: true, value: key });
}

/** A PEM certificate (the first of a chain) parsed, once per text. */
export function decodedCertificatePem(pem: string): Decoded<X509Certificate> {
  return certificates.get(pem, (text) => attempt(() => new X509Certificate(text)));
}

/** The certificate of a PEM text, parsed once per text; throws what parsing threw. */
export function certificateOfPem(pem: string): X509Certificate {
  const decoded = decodedCertificatePem(pem);
  if (!decoded.ok) throw decoded.error;
  return decoded.value;
}
