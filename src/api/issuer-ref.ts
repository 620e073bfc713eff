/** A reference from a request to the issuer that should sign it. */
export interface IssuerReference {
  name: string;
  kind?: string;
  group?: string;
}

export const CERT_MANAGER_GROUP = 'cert-manager.io';

/** The reference with cert-manager's defaults: kind `Issuer`, group `cert-manager.io`. */
export function defaultIssuerRef(ref: IssuerReference): Required<IssuerReference> {
  return {
    name: ref.name,
    kind: ref.kind || 'Issuer',
    group: ref.group || CERT_MANAGER_GROUP,
  };
}

/** True when the reference points at a cert-manager.io issuer (empty group counts). */
export function isCertManagerGroup(ref: IssuerReference): boolean {
  return !ref.group || ref.group === CERT_MANAGER_GROUP;
}
