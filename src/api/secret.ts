import type { KubeObject, ResourceKind } from './meta.js';

export const SecretKind: ResourceKind = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
};

export interface Secret extends KubeObject {
  type?: string;
  /** Values base64-encoded, as in the API. */
  data?: Record<string, string>;
  /** Write-only plain-text values, merged into data on write as the API server does. */
  stringData?: Record<string, string>;
}

/** The decoded value of a Secret key (stringData wins, as it does on the API server). */
export function secretValue(secret: Secret, key: string): string | undefined {
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return plain;
  const encoded = secret.data?.[key];
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
}

export const TLS_CERT_KEY = 'tls.crt';
export const TLS_PRIVATE_KEY_KEY = 'tls.key';
export const CA_CERT_KEY = 'ca.crt';
