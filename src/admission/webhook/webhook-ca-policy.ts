import type { X509Certificate } from 'node:crypto';
import { CA_CERT_KEY, type Secret, secretValue } from '../../api/secret.js';
import { errorMessage } from '../../base/error-message.js';
import { readCAKeyPair } from '../../issuer/ca-issuer.js';
import { readCertificateFields } from '../../pki/certificate-fields.js';
import { certificatePem, splitPemCertificates } from '../../pki/chain.js';

const DAY_MS = 24 * 3600 * 1000;

/** Lifetime of the webhook's own CA (cert-manager's webhook CA: 365 days). */
export const WEBHOOK_CA_LIFETIME_MS = 365 * DAY_MS;
/** Lifetime of a serving certificate (cert-manager's webhook leaf: 7 days); renewed at 2/3. */
export const WEBHOOK_LEAF_LIFETIME_MS = 7 * DAY_MS;
/** At most this many CAs are trusted at once: the signing one and those being retired. */
export const MAX_TRUSTED_CAS = 4;

/** What to do with the CA Secret. */
export type CaPlan =
  | { action: 'use' }
  /** No Secret yet: create one with a new CA. */
  | { action: 'create' }
  /**
   * Replace the signing CA with a new one: it is near its end, expired, or the Secret cannot
   * sign. `trusted` are the certificates of the old bundle still worth trusting (valid CAs),
   * which stay in ca.crt after the new one until they expire.
   */
  | { action: 'rotate'; why: string; trusted: X509Certificate[] };

function times(certificate: X509Certificate): { notBefore: number; notAfter: number } {
  const { notBefore, notAfter } = readCertificateFields(certificate.raw);
  return { notBefore: notBefore.getTime(), notAfter: notAfter.getTime() };
}

/** The certificates of a PEM bundle that are CAs valid at now; unreadable text gives none. */
export function stillTrusted(pem: string | undefined, now: number): X509Certificate[] {
  if (!pem) return [];
  let certificates: X509Certificate[];
  try {
    certificates = splitPemCertificates(pem);
  } catch {
    return [];
  }
  return certificates.filter((c) => c.ca && times(c).notAfter > now);
}

/**
 * Why the webhook's CA Secret must get a new CA at now (cert-manager's DynamicAuthority rules):
 * its key pair cannot sign, its certificate is no CA, has expired or has less than a third of
 * lifetimeMs left, or its ca.crt does not hold it. Undefined when it can be used as it is.
 */
export function caSecretProblem(
  secret: Secret,
  now: number,
  lifetimeMs: number = WEBHOOK_CA_LIFETIME_MS,
): string | undefined {
  let signer: X509Certificate;
  try {
    signer = readCAKeyPair(secret).certificates[0] as X509Certificate;
  } catch (err) {
    return `its key pair cannot sign: ${errorMessage(err)}`;
  }
  if (!signer.ca) return 'its certificate is not a CA';
  const { notAfter } = times(signer);
  if (notAfter <= now) return 'its CA has expired';
  if (notAfter - now < lifetimeMs / 3) return 'its CA is in the last third of its life';
  const trusted = stillTrusted(secretValue(secret, CA_CERT_KEY), now);
  if (!trusted.some((c) => c.raw.equals(signer.raw))) {
    return 'its ca.crt does not hold the signing CA';
  }
  return undefined;
}

/**
 * Decides about the webhook's CA Secret at now, plus a trust bundle that keeps retired CAs: a
 * missing Secret is created, one with a caSecretProblem rotated (keeping its still trusted
 * CAs), any other used as it is.
 */
export function caSecretPlan(
  secret: Secret | undefined,
  now: number,
  lifetimeMs: number = WEBHOOK_CA_LIFETIME_MS,
): CaPlan {
  if (!secret) return { action: 'create' };
  const why = caSecretProblem(secret, now, lifetimeMs);
  if (why === undefined) return { action: 'use' };
  return { action: 'rotate', why, trusted: stillTrusted(secretValue(secret, CA_CERT_KEY), now) };
}

/**
 * ca.crt after a new CA: the new one first, then the still trusted old ones (no duplicates),
 * newest first, at most MAX_TRUSTED_CAS in all.
 */
export function trustBundle(newCa: X509Certificate, trusted: readonly X509Certificate[]): string {
  const older = trusted
    .filter(
      (c, i) => !c.raw.equals(newCa.raw) && trusted.findIndex((o) => o.raw.equals(c.raw)) === i,
    )
    .sort((a, b) => times(b).notBefore - times(a).notBefore);
  return [newCa, ...older]
    .slice(0, MAX_TRUSTED_CAS)
    .map((c) => certificatePem(c))
    .join('');
}
