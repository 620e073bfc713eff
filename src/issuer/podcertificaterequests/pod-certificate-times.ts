import {
  PCR_DEFAULT_MAX_EXPIRATION_SECONDS,
  PCR_MIN_EXPIRATION_SECONDS,
  PCR_REFRESH_MARGIN_SECONDS,
} from '../../api/pod-certificate-request.js';

/**
 * How far notBefore is set back from now: the API server refuses a notBefore more than 5
 * minutes from its own clock, so the backdate covers small skews between the signer and the
 * nodes without risking that window (the reference signers use 2 minutes).
 */
export const BACKDATE_MS = 2 * 60 * 1000;
const REFRESH_MARGIN_MS = PCR_REFRESH_MARGIN_SECONDS * 1000;

/** When a pod certificate starts and how long it is asked to last, before any CA clamp. */
export interface PodCertificateWindow {
  /** now − BACKDATE_MS, on a whole second (X.509 and metav1.Time both drop the fraction). */
  notBefore: Date;
  /** min(maxExpirationSeconds, the signer's limit). */
  durationMs: number;
}

/** The window of a certificate signed now for a request allowing maxExpirationSeconds. */
export function podCertificateWindow(
  now: Date,
  maxExpirationSeconds: number | undefined,
  maxDurationMs: number,
): PodCertificateWindow {
  const requested = (maxExpirationSeconds ?? PCR_DEFAULT_MAX_EXPIRATION_SECONDS) * 1000;
  const start = Math.floor((now.getTime() - BACKDATE_MS) / 1000) * 1000;
  return { notBefore: new Date(start), durationMs: Math.min(requested, maxDurationMs) };
}

/**
 * When kubelet should start refreshing: half-way through the lifetime (the KEP's advice:
 * a 24 h certificate rides out 12 h of signer outage), on a whole second, inside
 * [notBefore + 10 min, notAfter − 10 min]. Undefined when the certificate is shorter than the
 * API server's minimum of 1 h, which no refresh time can fix.
 */
export function beginRefreshAt(notBefore: Date, notAfter: Date): Date | undefined {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  if (lifetime < PCR_MIN_EXPIRATION_SECONDS * 1000) return undefined;
  const half = Math.floor((notBefore.getTime() + lifetime / 2) / 1000) * 1000;
  const earliest = notBefore.getTime() + REFRESH_MARGIN_MS;
  const latest = notAfter.getTime() - REFRESH_MARGIN_MS;
  return new Date(Math.min(Math.max(half, earliest), latest));
}
