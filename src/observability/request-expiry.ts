import { X509Certificate } from 'node:crypto';
import { type CertificateRequest, decodeBytes } from '../api/certificate-request.js';

// The informer replaces a cached object on every change, so an object's certificate never
// changes: parsing it once per object keeps a scrape from parsing thousands of certificates.
const parsed = new WeakMap<CertificateRequest, number | undefined>();

/**
 * The NotAfter of a request's leaf (the first PEM block of status.certificate) in Unix
 * seconds; 0 without a certificate, undefined when the certificate does not parse (csi-lib
 * then emits no series).
 */
export function requestExpirySeconds(request: CertificateRequest): number | undefined {
  const encoded = request.status?.certificate;
  if (!encoded) return 0;
  if (parsed.has(request)) return parsed.get(request);
  let seconds: number | undefined;
  try {
    const leaf = new X509Certificate(decodeBytes(encoded) as string);
    seconds = Math.floor(Date.parse(leaf.validTo) / 1000);
  } catch {
    seconds = undefined;
  }
  parsed.set(request, seconds);
  return seconds;
}
