import type { Secret } from '../api/secret.js';
import { CA_CERT_KEY, TLS_CERT_KEY, TLS_PRIVATE_KEY_KEY } from '../api/secret.js';
import { KeystoreKey } from '../pki/keystore-data.js';
import {
  COMBINED_PEM_KEY,
  type IssuedSecretContent,
  KEY_DER_KEY,
  TLS_SECRET_TYPE,
} from './issued-secret.js';

/** The data keys the issuing controller owns: written when asked for, removed when not. */
export const MANAGED_DATA_KEYS: readonly string[] = [
  TLS_PRIVATE_KEY_KEY,
  TLS_CERT_KEY,
  CA_CERT_KEY,
  COMBINED_PEM_KEY,
  KEY_DER_KEY,
  ...Object.values(KeystoreKey),
];

// Keystores are re-encrypted with a new salt at each write: only their presence is compared.
const KEYSTORE_KEYS: ReadonlySet<string> = new Set(Object.values(KeystoreKey));
// Certificate-detail annotations come and go with the certificate's fields.
const DETAIL_PREFIX = 'cert-manager.io/';

function encoded(data: Record<string, Uint8Array>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  );
}

/**
 * The Secret after writing content into existing (or a new `kubernetes.io/tls` Secret): the
 * managed data keys replaced by content's, other keys kept; labels and annotations merged,
 * with `cert-manager.io/` annotations content no longer has dropped. A stand-in for
 * cert-manager's server-side apply, which also drops fields it applied before (README).
 */
export function mergeIssuedSecret(
  existing: Secret | undefined,
  target: { name: string; namespace: string },
  content: IssuedSecretContent,
): Secret {
  const data: Record<string, string> = { ...existing?.data };
  for (const key of MANAGED_DATA_KEYS) delete data[key];
  Object.assign(data, encoded(content.data));
  const annotations = Object.fromEntries(
    Object.entries(existing?.metadata.annotations ?? {}).filter(
      ([key]) => !key.startsWith(DETAIL_PREFIX),
    ),
  );
  const { stringData: _written, ...rest } = existing ?? {};
  return {
    ...rest,
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...existing?.metadata,
      name: target.name,
      namespace: target.namespace,
      labels: { ...existing?.metadata.labels, ...content.labels },
      annotations: { ...annotations, ...content.annotations },
    },
    type: existing?.type ?? TLS_SECRET_TYPE,
    data,
  };
}

/**
 * Whether a Secret lacks what content would write (cert-manager's post-issuance checks):
 * labels or annotations missing or different, managed data different, missing or left over
 * (keystores by presence only).
 */
export function secretNeedsContent(secret: Secret, content: IssuedSecretContent): boolean {
  const labels = secret.metadata.labels ?? {};
  const annotations = secret.metadata.annotations ?? {};
  if (Object.entries(content.labels).some(([key, value]) => labels[key] !== value)) return true;
  if (Object.entries(content.annotations).some(([key, value]) => annotations[key] !== value))
    return true;
  const wanted = encoded(content.data);
  for (const key of MANAGED_DATA_KEYS) {
    const have = secret.data?.[key];
    const want = wanted[key];
    if ((have === undefined) !== (want === undefined)) return true;
    if (!KEYSTORE_KEYS.has(key) && have !== want) return true;
  }
  return false;
}
