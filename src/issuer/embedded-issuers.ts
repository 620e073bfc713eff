import { encodeBytes } from '../api/certificate-request.js';
import { ClusterIssuerKind, type Issuer } from '../api/issuer.js';
import type { Logger } from '../api/logger.js';
import type { ResourceKind } from '../api/meta.js';
import { type Secret, SecretKind } from '../api/secret.js';
import { errorMessage } from '../base/error-message.js';
import { createSelfSignedCa } from '../pki/certificate.js';
import { encodePrivateKey, generatePrivateKey } from '../pki/keys.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';
import { readCAKeyPair } from './ca-issuer.js';

export const EMBEDDED_CA_ISSUER = 'embedded-ca';
export const SELF_SIGNED_ISSUER = 'self-signed';
const CA_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;

/** What the node knows about the volumes the embedded CA signed, for telling a first start from a loss. */
export interface EmbeddedCaOptions {
  clusterResourceNamespace: string;
  logger: Logger;
  /**
   * Ids of the volumes on the data root whose certificates the embedded CA issued; asked only
   * when the CA Secret is missing or unusable (it reads every volume's metadata).
   */
  volumesUsingCa: () => Promise<readonly string[]>;
  /** Replace a missing or unusable CA even when volumes depend on it (--accept-new-ca). */
  acceptNewCa?: boolean;
}

/** What ensureEmbeddedIssuers did with the CA Secret, and the volumes the old CA signed. */
export interface EmbeddedCaOutcome {
  outcome: 'kept' | 'created' | 'replaced';
  /** Empty unless the CA Secret was missing or unusable. */
  volumesUsingCa: readonly string[];
}

/** The embedded CA cannot be used and replacing it needs the operator's word; names the Secret and the way out. */
export class EmbeddedCaLostError extends Error {
  override readonly name = 'EmbeddedCaLostError';
}

/** Why the CA Secret cannot sign, or undefined when it can. */
function unusableBecause(secret: Secret): string | undefined {
  try {
    readCAKeyPair(secret);
    return undefined;
  } catch (err) {
    return errorMessage(err);
  }
}

/**
 * Makes sure the embedded mode's issuers exist: a ClusterIssuer `embedded-ca` backed by
 * an ECDSA P-256 CA whose key pair is a Secret in the cluster resource namespace, and a
 * ClusterIssuer `self-signed`. Existing objects are kept, so a restart reuses the same
 * CA and pods keep trusting it.
 *
 * A CA is created quietly only on a first start (no Secret, no volume it signed). A Secret that
 * is missing while volumes it signed exist, or that is present but unusable, is a lost CA: their
 * pods trust only the old one. That refuses to start (EmbeddedCaLostError) unless acceptNewCa,
 * which replaces it and says so at error level; an unusable Secret is never overwritten otherwise.
 */
export async function ensureEmbeddedIssuers(
  store: ResourceStore,
  options: EmbeddedCaOptions,
): Promise<EmbeddedCaOutcome> {
  const namespace = options.clusterResourceNamespace;
  const where = `${namespace}/${EMBEDDED_CA_ISSUER}`;
  const existing = await getSecret(store, EMBEDDED_CA_ISSUER, namespace);
  const unusable = existing ? unusableBecause(existing) : undefined;
  const volumes = !existing || unusable !== undefined ? await options.volumesUsingCa() : [];
  const problem = existing
    ? unusable
    : volumes.length > 0
      ? `it is missing, but ${volumes.length} volume(s) on the data root hold certificates it signed (e.g. ${volumes[0]})`
      : undefined;
  let outcome: EmbeddedCaOutcome['outcome'] = 'kept';
  if (problem !== undefined && !options.acceptNewCa) {
    throw new EmbeddedCaLostError(
      `the embedded CA Secret ${where} cannot be used: ${problem}. Refusing to start with a new CA that existing pods do not trust. Restore the state dir from a backup (the Secret is core/secrets/${namespace}/${EMBEDDED_CA_ISSUER}.json in it), or start once with --accept-new-ca to replace the CA (volumes get its certificates and ca.crt as they renew)`,
    );
  }
  if (!existing || problem !== undefined) {
    const secret = await newCaSecret(namespace);
    if (existing) {
      await store.update(SecretKind, { ...existing, type: secret.type, data: secret.data });
    } else {
      await createIfAbsent(store, SecretKind, secret);
    }
    outcome = problem === undefined ? 'created' : 'replaced';
    if (outcome === 'created') {
      options.logger.info({ secret: where }, 'created the embedded CA');
    } else {
      options.logger.error(
        { secret: where, lost: problem, volumes: volumes.length },
        'replaced a lost embedded CA with a new one (--accept-new-ca): volumes it signed keep the old ca.crt until they renew',
      );
    }
  }
  const issuers: Issuer[] = [
    clusterIssuer(EMBEDDED_CA_ISSUER, { ca: { secretName: EMBEDDED_CA_ISSUER } }),
    clusterIssuer(SELF_SIGNED_ISSUER, { selfSigned: {} }),
  ];
  for (const issuer of issuers) await createIfAbsent(store, ClusterIssuerKind, issuer);
  return { outcome, volumesUsingCa: volumes };
}

/** A new self-signed CA in a Secret of the cluster resource namespace. */
async function newCaSecret(namespace: string): Promise<Secret> {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const certificatePem = await createSelfSignedCa({
    key,
    commonName: 'cert-csi embedded CA',
    durationMs: CA_LIFETIME_MS,
  });
  return {
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
}

function clusterIssuer(name: string, spec: Issuer['spec']): Issuer {
  return { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name }, spec };
}

async function getSecret(
  store: ResourceStore,
  name: string,
  namespace: string,
): Promise<Secret | undefined> {
  try {
    return await store.get<Secret>(SecretKind, name, namespace);
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return undefined;
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
