import { encodeBytes } from '../api/certificate-request.js';
import { ClusterIssuerKind, type Issuer } from '../api/issuer.js';
import type { Logger } from '../api/logger.js';
import type { ResourceKind } from '../api/meta.js';
import { type Secret, SecretKind } from '../api/secret.js';
import { createSelfSignedCa } from '../pki/certificate.js';
import { encodePrivateKey, generatePrivateKey } from '../pki/keys.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';

export const EMBEDDED_CA_ISSUER = 'embedded-ca';
export const SELF_SIGNED_ISSUER = 'self-signed';
const CA_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;

/**
 * Makes sure the embedded mode's issuers exist: a ClusterIssuer `embedded-ca` backed by
 * an ECDSA P-256 CA whose key pair is a Secret in the cluster resource namespace, and a
 * ClusterIssuer `self-signed`. Existing objects are kept, so a restart reuses the same
 * CA and pods keep trusting it.
 */
export async function ensureEmbeddedIssuers(
  store: ResourceStore,
  options: { clusterResourceNamespace: string; logger: Logger },
): Promise<void> {
  const namespace = options.clusterResourceNamespace;
  if (!(await exists(store, SecretKind, EMBEDDED_CA_ISSUER, namespace))) {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const certificatePem = await createSelfSignedCa({
      key,
      commonName: 'cert-csi embedded CA',
      durationMs: CA_LIFETIME_MS,
    });
    const secret: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: EMBEDDED_CA_ISSUER, namespace },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': encodeBytes(certificatePem),
        'tls.key': encodeBytes(encodePrivateKey(key, 'PKCS8')),
        'ca.crt': encodeBytes(certificatePem),
      },
    };
    await createIfAbsent(store, SecretKind, secret);
    options.logger.info(
      { secret: `${namespace}/${EMBEDDED_CA_ISSUER}` },
      'created the embedded CA',
    );
  }
  const issuers: Issuer[] = [
    clusterIssuer(EMBEDDED_CA_ISSUER, { ca: { secretName: EMBEDDED_CA_ISSUER } }),
    clusterIssuer(SELF_SIGNED_ISSUER, { selfSigned: {} }),
  ];
  for (const issuer of issuers) await createIfAbsent(store, ClusterIssuerKind, issuer);
}

function clusterIssuer(name: string, spec: Issuer['spec']): Issuer {
  return { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name }, spec };
}

async function exists(
  store: ResourceStore,
  kind: ResourceKind,
  name: string,
  namespace?: string,
): Promise<boolean> {
  try {
    await store.get(kind, name, namespace);
    return true;
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return false;
    throw err;
  }
}

async function createIfAbsent<T extends Secret | Issuer>(
  store: ResourceStore,
  kind: ResourceKind,
  obj: T,
): Promise<void> {
  try {
    await store.create(kind, obj);
  } catch (err) {
    if (!isStoreError(err, 'AlreadyExists')) throw err;
  }
}
