import { attributeKeyIn } from '../../attributes/attribute-keys.js';
import type { IssuerLookup } from '../../issuer/issuer-lookup.js';
import { volumeCaRefusal } from '../../issuer/volume-ca-policy.js';
import type { PublishRequest } from '../volume-publisher.js';

/**
 * A check of a volume before its first issuance with what the node can read besides the
 * attributes (embedded mode: the issuers of its store). It answers why the volume is refused,
 * or undefined; a refusal ends the publish with PermissionDenied before anything is written
 * or any key generated. Kubernetes mode has none: there the node may not read issuers, and
 * the approver's denial of the request is what stops the issuance.
 */
export type IssuanceCheck = (request: PublishRequest) => string | undefined;

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
    return `${attributeKeyIn(volumeContext, 'is-ca')}: "true" asks for a CA certificate: ${refusal}`;
  };
}
