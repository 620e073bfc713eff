import { RecentResults } from './recent-results.js';

// The certificates this process signed lately, by the base64 of their DER. Admission checks
// that a status write's certificates parse (Kubernetes' CSR and PodCertificateRequest status
// rules); one the signer produced a moment ago is known to, and parsing it again with
// X509Certificate cost more than signing it. 256 of at most 16 KiB of base64 bound the memory.
const recent = new RecentResults<true>(256, 16 * 1024);

/** Records der as a certificate this process just issued (src/pki's own encoding). */
export function rememberIssued(der: Uint8Array): void {
  recent.set(Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64'), true);
}

/** True when der is, byte for byte, a certificate this process issued lately. */
export function issuedHere(der: Uint8Array): boolean {
  return recent.has(Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64'));
}
