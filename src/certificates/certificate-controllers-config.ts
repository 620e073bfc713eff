import type { RetryPolicy } from '../controller/controller-definition.js';
import { DEFAULT_MAXIMUM_BACKOFF_MS, DEFAULT_MINIMUM_BACKOFF_MS } from './issuance-backoff.js';

/** What the Certificate controllers share: one value per process. */
export interface CertificateControllersConfig {
  /** cert-manager's --certificate-request-minimum-backoff-duration. */
  minimumBackoffMs: number;
  /** cert-manager's --certificate-request-maximum-backoff-duration. */
  maximumBackoffMs: number;
}

/** A configuration with cert-manager's defaults for what is not given. */
export function certificateControllersConfig(
  options: Partial<CertificateControllersConfig> = {},
): CertificateControllersConfig {
  return {
    minimumBackoffMs: options.minimumBackoffMs ?? DEFAULT_MINIMUM_BACKOFF_MS,
    maximumBackoffMs: options.maximumBackoffMs ?? DEFAULT_MAXIMUM_BACKOFF_MS,
  };
}

/** cert-manager's DefaultCertificateRateLimiter: per-item retries from 1 s up to 30 s. */
export const CERTIFICATE_RETRY: RetryPolicy = { baseDelayMs: 1_000, maxDelayMs: 30_000 };
