import { encodeBytes } from '../api/certificate-request.js';
import { ClusterIssuerKind, type Issuer } from '../api/issuer.js';
import type { Logger } from '../api/logger.js';
import type { ResourceKind } from '../api/meta.js';
import { formatNamespacedName, type NamespacedName } from '../api/namespaced-name.js';
import { type Secret, SecretKind } from '../api/secret.js';
import { createSelfSignedCa } from '../pki/certificate.js';
import { encodePrivateKey, generatePrivateKey } from '../pki/keys.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';
import { type CaCheck, guardIssuerCas } from './ca-guard.js';
import { type CaVerdict, describeIssuers, type SignedObject } from './ca-loss.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from './podcertificaterequests/pod-certificate-policy.js';

// What a refused start throws, where callers of ensureEmbeddedIssuers have always found it.
export { EmbeddedCaLostError } from './ca-guard.js';

export const EMBEDDED_CA_ISSUER = 'embedded-ca';
export const SELF_SIGNED_ISSUER = 'self-signed';
const CA_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;

/** What the node knows about what its CAs signed, for telling a first start from a loss. */
export interface EmbeddedCaOptions {
  clusterResourceNamespace: string;
  logger: Logger;
  /**
   * Every volume on the data root with the issuer its context names; asked only when a CA
   * Secret is missing or unusable (it reads every volume's metadata).
   */
  signedVolumes: () => Promise<readonly SignedObject[]>;
  /** The Secret's file relative to the state dir, named in a refusal; undefined without one. */
  secretFile: (secret: NamespacedName) => string | undefined;
  /** Replace a missing or unusable CA even when what it signed exists (--accept-new-ca). */
  acceptNewCa?: boolean;
}

/** What follows from ensureEmbeddedIssuers: the volumes to renew with new CAs. */
export interface EmbeddedCaOutcome {
  /** Volumes signed by a lost CA whose loss was accepted; empty otherwise. */
  volumesToRenew: readonly string[];
}

/**
 * Makes sure the embedded mode's issuers exist: a ClusterIssuer `embedded-ca` backed by
 * an ECDSA P-256 CA whose key pair is a Secret in the cluster resource namespace, and a
 * ClusterIssuer `self-signed`. Existing objects are kept, so a restart reuses the same
 * CA and pods keep trusting it.
 *
 * First the CA Secret of every CA issuer, built-in or loaded, is guarded (guardIssuerCas): a
 * lost one refuses to start unless acceptNewCa, which lets it be replaced and says so at error
 * level. A CA is created quietly only on a first start (no Secret, nothing it signed); an
 * unusable Secret is never overwritten otherwise. The new CA of an accepted loss is written
 * here for `embedded-ca`, by the Certificate whose Secret it is otherwise.
 */
export async function ensureEmbeddedIssuers(
  store: ResourceStore,
  options: EmbeddedCaOptions,
): Promise<EmbeddedCaOutcome> {
  const namespace = options.clusterResourceNamespace;
  const embeddedSecret = { namespace, name: EMBEDDED_CA_ISSUER };
  const issuers: Issuer[] = [
    // Serves pods of every namespace: the embedded CA serves this machine only, so its
    // ClusterTrustBundle is published without an opt-in (a trust-bundle source naming its
    // signer works as declared) and the store's pod certificates can use it.
    clusterIssuer(
      EMBEDDED_CA_ISSUER,
      { ca: { secretName: EMBEDDED_CA_ISSUER } },
      { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' },
    ),
    clusterIssuer(SELF_SIGNED_ISSUER, { selfSigned: {} }),
  ];
  const checks = await guardIssuerCas(store, {
    clusterResourceNamespace: namespace,
    builtInIssuers: issuers,
    madeByPlugin: [embeddedSecret],
    signedVolumes: options.signedVolumes,
    secretFile: options.secretFile,
    acceptNewCa: options.acceptNewCa ?? false,
    logger: options.logger,
  });
  const renew = new Set<string>();
  for (const check of checks) {
    const { verdict } = check;
    if (check.maker.by === 'plugin') await makeEmbeddedCa(store, check, options.logger);
    else if (verdict.verdict === 'lost') logAcceptedLoss(check, verdict, options.logger);
    if (verdict.verdict === 'lost') for (const id of verdict.volumes) renew.add(id);
  }
  for (const issuer of issuers) await createIfAbsent(store, ClusterIssuerKind, issuer);
  return { volumesToRenew: [...renew] };
}

/** Writes a new embedded CA on a first start or an accepted loss; keeps a usable one. */
async function makeEmbeddedCa(store: ResourceStore, check: CaCheck, logger: Logger): Promise<void> {
  const { verdict, existing } = check;
  if (verdict.verdict === 'usable') return;
  const where = formatNamespacedName(check.secret);
  const secret = await newCaSecret(check.secret);
  if (existing) {
    await store.update(SecretKind, { ...existing, type: secret.type, data: secret.data });
  } else {
    await createIfAbsent(store, SecretKind, secret);
  }
  if (verdict.verdict === 'firstStart') {
    logger.info({ secret: where }, 'created the embedded CA');
    return;
  }
  logger.error(
    { secret: where, lost: verdict.problem, volumes: verdict.volumes.length },
    'replaced a lost embedded CA with a new one (--accept-new-ca): volumes it signed keep the old ca.crt until they renew',
  );
}

/** Says at error level that a lost CA another party re-makes was accepted (--accept-new-ca). */
function logAcceptedLoss(
  check: CaCheck,
  verdict: Extract<CaVerdict, { verdict: 'lost' }>,
  logger: Logger,
): void {
  logger.error(
    {
      secret: formatNamespacedName(check.secret),
      issuers: describeIssuers(check.issuers),
      lost: verdict.problem,
      volumes: verdict.volumes.length,
      secrets: verdict.secrets.length,
      ...(check.maker.by === 'certificate'
        ? { certificate: formatNamespacedName(check.maker.certificate) }
        : {}),
    },
    'accepted a new CA in place of a lost one (--accept-new-ca): its issuers sign with the new one once it is written; volumes it signed are renewed with it, Certificate Secrets it signed keep the old ca.crt until they renew',
  );
}

/** A new self-signed CA in the Secret at ref. */
async function newCaSecret(ref: NamespacedName): Promise<Secret> {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const certificatePem = await createSelfSignedCa({
    key,
    commonName: 'cert-csi embedded CA',
    durationMs: CA_LIFETIME_MS,
  });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: ref.name, namespace: ref.namespace },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': encodeBytes(certificatePem),
      'tls.key': encodeBytes(encodePrivateKey(key, 'PKCS8')),
      'ca.crt': encodeBytes(certificatePem),
    },
  };
}

function clusterIssuer(
  name: string,
  spec: Issuer['spec'],
  annotations?: Record<string, string>,
): Issuer {
  const metadata = annotations ? { name, annotations } : { name };
  return { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata, spec };
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
