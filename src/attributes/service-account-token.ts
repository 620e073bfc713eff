import { SERVICE_ACCOUNT_TOKENS_KEY } from './attribute-keys.js';

/**
 * The pod's empty-audience service-account token from kubelet's
 * `csi.storage.k8s.io/serviceAccount.tokens` (CSIDriver `tokenRequests: [{audience: ""}]`).
 * Errors say what is missing and never include the value.
 */
export function emptyAudienceToken(raw: string | undefined): string {
  if (raw === undefined) {
    throw new Error(
      `'${SERVICE_ACCOUNT_TOKENS_KEY}' not present in volume context, driver likely doesn't have token requests enabled (or, after a plugin restart, kubelet has not republished the volume yet: tokens are kept in memory only)`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`failed to parse service account tokens from CSI volume context: not JSON`);
  }
  const entry =
    parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>)[''] : undefined;
  const token =
    entry && typeof entry === 'object' ? (entry as { token?: unknown }).token : undefined;
  if (typeof token !== 'string' || token === '') {
    throw new Error(
      "empty audience service account token doesn't exist in CSI volume context, driver likely doesn't have an empty audience token request configured",
    );
  }
  return token;
}
