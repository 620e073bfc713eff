import { CERT_MANAGER_GROUP, defaultIssuerRef, type IssuerReference } from '../api/issuer-ref.js';
import { formatNamespacedName, type NamespacedName } from '../api/namespaced-name.js';

// A CA Secret that is gone (or cannot sign) while certificates it signed are still in use is a
// lost CA: a new one would leave their holders trusting a CA nothing signs with any more. The
// same Secret missing with nothing it signed around is a first start. This file decides which
// and words the refusal; ca-guard.ts gathers what it decides from.

/** An Issuer or ClusterIssuer with a CA: kind, name, and an Issuer's namespace. */
export type CaIssuer =
  | { kind: 'ClusterIssuer'; name: string }
  | { kind: 'Issuer'; name: string; namespace: string };

/** Something an issuer signed: a volume on the data root or a Certificate's Secret in the store. */
export interface SignedObject {
  kind: 'volume' | 'secret';
  /** A volume's id, a Secret's `namespace/name`. */
  id: string;
  /** The issuer as the object names it; cert-manager's defaults (Issuer, cert-manager.io) apply. */
  issuerRef: IssuerReference;
  /** A volume's pod namespace, a Secret's namespace: where an Issuer reference points. */
  namespace: string;
}

/** What a CA Secret holds at start. */
export type CaSecretState =
  | { state: 'usable' }
  | { state: 'missing' }
  /** Present but it cannot sign: reason says why (no certificate, a key that does not match...). */
  | { state: 'unusable'; reason: string };

/** Whether a CA Secret may be (re)made quietly. */
export type CaVerdict =
  | { verdict: 'usable' }
  /** Missing, and nothing it signed exists: a new CA breaks nobody. */
  | { verdict: 'firstStart' }
  /** Missing or unusable while what it signed is in use, or unusable at all: needs the operator. */
  | { verdict: 'lost'; problem: string; volumes: string[]; secrets: string[] };

/** Who writes a new CA into the Secret once its loss is accepted. */
export type CaMaker =
  /** The plugin itself (the built-in `embedded-ca`). */
  | { by: 'plugin' }
  /** A Certificate whose spec.secretName is the Secret (the bootstrap pattern). */
  | { by: 'certificate'; certificate: NamespacedName }
  /** Nothing in the store: the operator must load one. */
  | { by: 'nobody' };

/** True when signed names issuer (kind, name, group, and for an Issuer the namespace). */
export function signedBy(issuer: CaIssuer, signed: SignedObject): boolean {
  const ref = defaultIssuerRef(signed.issuerRef);
  return (
    ref.group === CERT_MANAGER_GROUP &&
    ref.kind === issuer.kind &&
    ref.name === issuer.name &&
    (issuer.kind === 'ClusterIssuer' || signed.namespace === issuer.namespace)
  );
}

/**
 * Decides about one CA Secret from the issuers that sign with it, what it holds and everything
 * signed on this node: usable is kept; missing with nothing its issuers signed is a first start;
 * missing while anything they signed exists, or present but unusable, is lost.
 */
export function caVerdict(
  issuers: readonly CaIssuer[],
  secret: CaSecretState,
  signed: readonly SignedObject[],
): CaVerdict {
  if (secret.state === 'usable') return { verdict: 'usable' };
  const dependants = signed.filter((object) => issuers.some((issuer) => signedBy(issuer, object)));
  const volumes = dependants.filter((d) => d.kind === 'volume').map((d) => d.id);
  const secrets = dependants.filter((d) => d.kind === 'secret').map((d) => d.id);
  const held = heldBy(volumes, secrets);
  if (secret.state === 'missing') {
    if (held === undefined) return { verdict: 'firstStart' };
    return { verdict: 'lost', problem: `it is missing, but ${held}`, volumes, secrets };
  }
  const problem = held === undefined ? secret.reason : `${secret.reason}; ${held}`;
  return { verdict: 'lost', problem, volumes, secrets };
}

/** "N volume(s) on the data root and M Certificate Secret(s) ... (e.g. a, b)", or undefined for none. */
function heldBy(volumes: readonly string[], secrets: readonly string[]): string | undefined {
  const counts: string[] = [];
  if (volumes.length > 0) counts.push(`${volumes.length} volume(s) on the data root`);
  if (secrets.length > 0) counts.push(`${secrets.length} Certificate Secret(s) in the store`);
  if (counts.length === 0) return undefined;
  const examples = [volumes[0], secrets[0]].filter((id) => id !== undefined);
  return `${counts.join(' and ')} hold certificates it signed (e.g. ${examples.join(', ')})`;
}

/** `ClusterIssuer "a", Issuer "ns/b"`: the issuers as the refusal names them. */
export function describeIssuers(issuers: readonly CaIssuer[]): string {
  return issuers
    .map((issuer) =>
      issuer.kind === 'ClusterIssuer'
        ? `ClusterIssuer "${issuer.name}"`
        : `Issuer "${issuer.namespace}/${issuer.name}"`,
    )
    .join(', ');
}

/**
 * The refusal of a lost CA: the issuers, the Secret, what is wrong, and the two ways on
 * (restore the Secret's file from a backup, or accept a new CA and who then makes it).
 */
export function lostCaMessage(input: {
  issuers: readonly CaIssuer[];
  secret: NamespacedName;
  problem: string;
  maker: CaMaker;
  /** The Secret's file relative to the state dir, when the store persists there. */
  secretFile: string | undefined;
}): string {
  const { maker } = input;
  const which = maker.by === 'plugin' ? 'the embedded CA Secret' : 'the CA Secret';
  const inBackup = input.secretFile ? ` (the Secret is ${input.secretFile} in it)` : '';
  const accept =
    maker.by === 'plugin'
      ? 'to replace the CA'
      : maker.by === 'certificate'
        ? `to let Certificate ${formatNamespacedName(maker.certificate)} issue a new CA into it`
        : 'to accept a new CA once you load one into it (e.g. with --manifests)';
  return (
    `${describeIssuers(input.issuers)}: ${which} ${formatNamespacedName(input.secret)} cannot be used: ` +
    `${input.problem}. Refusing to start with a new CA that existing pods do not trust. ` +
    `Restore the state dir from a backup${inBackup}, or start once with --accept-new-ca ${accept} ` +
    '(volumes get its certificates and ca.crt as they renew)'
  );
}
