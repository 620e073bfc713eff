import type { X509Certificate } from 'node:crypto';
import { certificatePem, splitPemCertificates } from '../../pki/chain.js';

/** Previous roots kept in a bundle at most: a CA rotated every day still gives a bounded bundle. */
export const MAX_PREVIOUS_ROOTS = 8;

/**
 * The trust bundle of a signer: its current trust anchors first, then the anchors the bundle
 * held before that are still valid at now (kept so that pods trusting the bundle keep
 * accepting certificates issued before a CA rotation; no pod certificate outlives the CA that
 * signed it), newest first, at most MAX_PREVIOUS_ROOTS of them. No certificate appears twice.
 */
export function trustBundleContent(
  current: readonly X509Certificate[],
  previousPem: string | undefined,
  now: Date,
): string {
  const kept: X509Certificate[] = [];
  const seen = (certificate: X509Certificate) => kept.some((k) => k.raw.equals(certificate.raw));
  for (const certificate of current) if (!seen(certificate)) kept.push(certificate);
  let previous: X509Certificate[] = [];
  try {
    previous = previousPem ? splitPemCertificates(previousPem) : [];
  } catch {
    // A bundle someone else garbled is replaced by the current anchors.
  }
  let added = 0;
  for (const certificate of previous) {
    if (added >= MAX_PREVIOUS_ROOTS) break;
    if (seen(certificate) || !certificate.ca || new Date(certificate.validTo) <= now) continue;
    kept.push(certificate);
    added++;
  }
  return kept.map(certificatePem).join('');
}

/** The trust anchor of a CA chain (issuing certificate first): its top-most CA certificate. */
export function trustAnchorOf(chain: readonly X509Certificate[]): X509Certificate | undefined {
  return chain.filter((certificate) => certificate.ca).at(-1);
}
