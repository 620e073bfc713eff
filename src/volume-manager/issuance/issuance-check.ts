import { defaultIssuerRef, isCertManagerGroup } from '../../api/issuer-ref.js';
import { attributeKeyIn } from '../../attributes/attribute-keys.js';
import { type IssuerLookup, otherKindHint } from '../../issuer/issuer-lookup.js';
import { volumeCaRefusal } from '../../issuer/volume-ca-policy.js';
import type { PublishRequest } from '../volume-publisher.js';

/** Why a volume is refused before its first issuance, and as what: denied or failed. */
export interface IssuanceRefusal {
  message: string;
  /** `denied` ends the publish with PermissionDenied, `failed` with FailedPrecondition. */
  reason: 'denied' | 'failed';
}

/**
 * A check of a volume before its first issuance with what the node can read besides the
 * attributes (embedded mode: the issuers of its store). It answers why the volume is refused,
 * or undefined; a refusal ends the publish before anything is written or any key generated.
 * Kubernetes mode has none: there the node may not read issuers, and the approver's denial of
 * the request is what stops the issuance.
 */
export type IssuanceCheck = (request: PublishRequest) => IssuanceRefusal | undefined;

/** The first refusal of the checks, in order; undefined when each lets the volume through. */
export function allChecks(...checks: IssuanceCheck[]): IssuanceCheck {
  return (request) => {
    for (const check of checks) {
      const refusal = check(request);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  };
}

/**
 * The issuer a volume names must exist (embedded mode: the manifests load at start, so a
 * missing one never comes and a wait for it only runs out): refused as failed, naming it, and
 * what to set when an issuer of the other kind has its name. Issuers of other groups are not
 * this store's to know.
 */
export function issuerExistsCheck(find: IssuerFinder): IssuanceCheck {
  return ({ spec, volumeContext }) => {
    if (!isCertManagerGroup(spec.issuerRef)) return undefined;
    const namespace = spec.pod.namespace;
    const found = find(spec.issuerRef, namespace);
    if (!('notFound' in found)) return undefined;
    const { kind, name } = defaultIssuerRef(spec.issuerRef);
    const where = kind === 'ClusterIssuer' ? '' : ` in namespace ${namespace}`;
    const hint = otherKindHint(found, attributeKeyIn(volumeContext, 'issuer-kind'));
    return {
      message: `${kind} "${name}" not found${where}${hint}; this store's issuers come from the node's --manifests at start`,
      reason: 'failed',
    };
  };
}

/** The issuer an issuerRef names from a namespace, as the process's caches hold it. */
export type IssuerFinder = (
  ref: PublishRequest['spec']['issuerRef'],
  namespace: string,
) => IssuerLookup;

/** The approver's rule for CA certificates of volumes (volume-ca-policy.ts), at publish. */
export function volumeCaCheck(find: IssuerFinder): IssuanceCheck {
  return ({ spec, volumeContext }) => {
    if (!spec.isCA) return undefined;
    const namespace = spec.pod.namespace;
    const refusal = volumeCaRefusal(spec.issuerRef, namespace, () =>
      find(spec.issuerRef, namespace),
    );
    if (refusal === undefined) return undefined;
    return {
      message: `${attributeKeyIn(volumeContext, 'is-ca')}: "true" asks for a CA certificate: ${refusal}`,
      reason: 'denied',
    };
  };
}
