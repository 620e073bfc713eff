import {
  type Certificate,
  CertificateKind,
  ISSUER_GROUP_ANNOTATION,
  ISSUER_KIND_ANNOTATION,
  ISSUER_NAME_ANNOTATION,
} from '../api/certificate.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../api/issuer.js';
import type { Logger } from '../api/logger.js';
import { formatNamespacedName, type NamespacedName } from '../api/namespaced-name.js';
import { type Secret, SecretKind } from '../api/secret.js';
import type { ErrorKind } from '../base/error-catalogue.js';
import { errorMessage } from '../base/error-message.js';
import type { ResourceStore } from '../store/resource-store.js';
import { readCAKeyPair } from './ca-issuer.js';
import {
  type CaIssuer,
  type CaMaker,
  type CaSecretState,
  type CaVerdict,
  caVerdict,
  describeIssuers,
  lostCaMessage,
  type SignedObject,
} from './ca-loss.js';

/**
 * A CA the embedded mode's issuers sign with cannot be used and replacing it needs the
 * operator's word; the message names the issuers, the Secret and the ways on.
 */
export class EmbeddedCaLostError extends Error {
  override readonly name = 'EmbeddedCaLostError';

  get errorKind(): ErrorKind {
    return 'CERT_CSI_EMBEDDED_CA_LOST';
  }
}

/** What the guard found about one CA Secret and who would make a new one. */
export interface CaCheck {
  secret: NamespacedName;
  /** Every Issuer and ClusterIssuer that signs with it. */
  issuers: CaIssuer[];
  /** The Secret as stored; undefined when missing. */
  existing: Secret | undefined;
  verdict: CaVerdict;
  maker: CaMaker;
}

/** What the guard reads besides the store, and what it may do. */
export interface CaGuardOptions {
  /** Namespace of ClusterIssuer Secrets. */
  clusterResourceNamespace: string;
  /** Issuers created after the guard when absent (the built-in ones): guarded as if they existed. */
  builtInIssuers: readonly Issuer[];
  /** Secrets the plugin itself writes a new CA into (the built-in `embedded-ca`). */
  madeByPlugin: readonly NamespacedName[];
  /**
   * Every volume on the data root with the issuer its context names; asked only when a CA
   * Secret is missing or unusable (it reads every volume's metadata).
   */
  signedVolumes: () => Promise<readonly SignedObject[]>;
  /** The Secret's file relative to the state dir, for the refusal; undefined without one. */
  secretFile: (secret: NamespacedName) => string | undefined;
  /** Let lost CAs be replaced (--accept-new-ca): the checks are returned, nothing refused. */
  acceptNewCa: boolean;
  logger: Logger;
}

/**
 * Checks the CA Secret of every CA Issuer and ClusterIssuer before any controller runs (so no
 * Certificate controller re-issues a lost CA first). A lost CA (see caVerdict) is logged at
 * error level and refused with EmbeddedCaLostError unless acceptNewCa; the caller makes or
 * lets make the new CAs the checks allow. Writes nothing.
 */
export async function guardIssuerCas(
  store: ResourceStore,
  options: CaGuardOptions,
): Promise<CaCheck[]> {
  const groups = await caSecretsInUse(store, options);
  const secrets = (await store.list<Secret>(SecretKind)).items;
  const byName = new Map(secrets.map((secret) => [formatNamespacedName(nameOf(secret)), secret]));
  const found = groups.map((group) => {
    const existing = byName.get(formatNamespacedName(group.secret));
    return { ...group, existing, state: secretState(existing) };
  });
  // The data root is read once, and only when a CA is not usable.
  const signed = found.some((group) => group.state.state !== 'usable')
    ? [...(await options.signedVolumes()), ...signedSecrets(secrets)]
    : [];
  const checks: CaCheck[] = [];
  for (const { secret, issuers, existing, state } of found) {
    const verdict = caVerdict(issuers, state, signed);
    const maker = await makerOf(store, secret, options);
    checks.push({ secret, issuers, existing, verdict, maker });
  }
  if (options.acceptNewCa) return checks;
  const refusals: string[] = [];
  for (const check of checks) {
    if (check.verdict.verdict !== 'lost') continue;
    const message = lostCaMessage({
      issuers: check.issuers,
      secret: check.secret,
      problem: check.verdict.problem,
      maker: check.maker,
      secretFile: options.secretFile(check.secret),
    });
    options.logger.error(
      {
        secret: formatNamespacedName(check.secret),
        issuers: describeIssuers(check.issuers),
        volumes: check.verdict.volumes.length,
        secrets: check.verdict.secrets.length,
        reason: message,
      },
      'refusing to start: a CA an issuer signs with is lost',
    );
    refusals.push(message);
  }
  if (refusals.length > 0) throw new EmbeddedCaLostError(refusals.join('\n'));
  return checks;
}

/** The CA Secrets the Issuers and ClusterIssuers (stored or built in) sign with, each with its issuers. */
async function caSecretsInUse(
  store: ResourceStore,
  options: Pick<CaGuardOptions, 'clusterResourceNamespace' | 'builtInIssuers'>,
): Promise<Array<{ secret: NamespacedName; issuers: CaIssuer[] }>> {
  const clusterIssuers = (await store.list<Issuer>(ClusterIssuerKind)).items;
  const stored = [
    ...clusterIssuers.map((issuer) => ({ kind: 'ClusterIssuer' as const, issuer })),
    ...(await store.list<Issuer>(IssuerKind)).items.map((issuer) => ({
      kind: 'Issuer' as const,
      issuer,
    })),
  ];
  const storedNames = new Set(clusterIssuers.map((issuer) => issuer.metadata.name));
  for (const issuer of options.builtInIssuers) {
    // A built-in is created only when absent: a stored one of that name is what will run.
    if (!storedNames.has(issuer.metadata.name)) stored.push({ kind: 'ClusterIssuer', issuer });
  }
  const groups = new Map<string, { secret: NamespacedName; issuers: CaIssuer[] }>();
  for (const { kind, issuer } of stored) {
    const name = issuer.spec.ca?.secretName;
    if (!name) continue;
    const namespace =
      kind === 'ClusterIssuer'
        ? options.clusterResourceNamespace
        : (issuer.metadata.namespace ?? '');
    const secret = { namespace, name };
    const key = formatNamespacedName(secret);
    const group = groups.get(key) ?? { secret, issuers: [] };
    group.issuers.push(
      kind === 'ClusterIssuer'
        ? { kind, name: issuer.metadata.name }
        : { kind, name: issuer.metadata.name, namespace },
    );
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** The Secrets that Certificates were issued into, with the issuer they record. */
function signedSecrets(secrets: readonly Secret[]): SignedObject[] {
  return secrets.flatMap((secret): SignedObject[] => {
    const annotations = secret.metadata.annotations ?? {};
    const name = annotations[ISSUER_NAME_ANNOTATION];
    if (!name) return [];
    const ref = nameOf(secret);
    return [
      {
        kind: 'secret',
        id: formatNamespacedName(ref),
        issuerRef: {
          name,
          kind: annotations[ISSUER_KIND_ANNOTATION] ?? '',
          group: annotations[ISSUER_GROUP_ANNOTATION] ?? '',
        },
        namespace: ref.namespace,
      },
    ];
  });
}

/** A namespaced object's namespace and name (a stored one always has a namespace). */
function nameOf(secret: Secret): NamespacedName {
  return { namespace: secret.metadata.namespace ?? '', name: secret.metadata.name };
}

/** Who writes a new CA into secret: the plugin, the Certificate whose secretName it is, or nobody. */
async function makerOf(
  store: ResourceStore,
  secret: NamespacedName,
  options: Pick<CaGuardOptions, 'madeByPlugin'>,
): Promise<CaMaker> {
  if (options.madeByPlugin.some((made) => sameName(made, secret))) return { by: 'plugin' };
  const { items } = await store.list<Certificate>(CertificateKind, {
    namespace: secret.namespace,
  });
  const certificate = items.find((c) => c.spec.secretName === secret.name);
  return certificate
    ? {
        by: 'certificate',
        certificate: { namespace: secret.namespace, name: certificate.metadata.name },
      }
    : { by: 'nobody' };
}

function sameName(a: NamespacedName, b: NamespacedName): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

/** Whether a CA Secret can sign: missing, unusable (with why) or usable. */
function secretState(secret: Secret | undefined): CaSecretState {
  if (!secret) return { state: 'missing' };
  try {
    readCAKeyPair(secret);
    return { state: 'usable' };
  } catch (err) {
    return { state: 'unusable', reason: errorMessage(err) };
  }
}
