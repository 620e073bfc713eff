import { type KeyObject, X509Certificate } from 'node:crypto';
import { decodePrivateKey } from '../pki/keys.js';
import { RecentResults } from '../pki/recent-results.js';

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
/** A key or a chain far larger than any this stack makes (RSA-8192 PKCS#8 is ~6.4 KB) is not held. */
const MAX_TEXT_LENGTH = 64 * 1024;

const keys = new RecentResults<Decoded<KeyObject>>(CAPACITY, MAX_TEXT_LENGTH);
const certificates = new RecentResults<Decoded<X509Certificate>>(CAPACITY, MAX_TEXT_LENGTH);

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
