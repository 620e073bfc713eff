import { type Issuer, IssuerKind } from '../api/issuer.js';
import { defaultIssuerRef, type IssuerReference, isCertManagerGroup } from '../api/issuer-ref.js';
import { ALLOW_IS_CA_ANNOTATION } from '../api/labels.js';
import type { IssuerLookup } from './issuer-lookup.js';

// A CA certificate in a pod lets that pod mint certificates for any name every pod trusts
// (kubernetes.default.svc ...). cert-manager and csi-driver sign one for any volume asking
// with is-ca: "true"; here an issuer must opt in. The rule is one pure function, applied by
// the approver to requests made for CSI volumes and, in embedded mode, at publish.

const OPT_IN = `${ALLOW_IS_CA_ANNOTATION}: "true"`;

/** True when the issuer lets CSI volumes have CA certificates (the annotation, exactly "true"). */
export function allowsVolumeCa(issuer: Issuer): boolean {
  return issuer.metadata.annotations?.[ALLOW_IS_CA_ANNOTATION] === 'true';
}

function described(ref: Required<IssuerReference>, namespace: string): string {
  return ref.kind === IssuerKind.kind
    ? `Issuer "${namespace}/${ref.name}"`
    : `${ref.kind} "${ref.name}"`;
}

/**
 * Why a CSI volume in namespace may not have a CA certificate from the issuer ref names, or
 * undefined when that issuer opts in. Only cert-manager.io issuers can opt in (their
 * annotations are readable); lookup is asked only for those.
 */
export function volumeCaRefusal(
  ref: IssuerReference,
  namespace: string,
  lookup: () => IssuerLookup,
): string | undefined {
  const full = defaultIssuerRef(ref);
  if (!isCertManagerGroup(ref)) {
    return `${full.kind} "${full.name}" of group "${full.group}" cannot allow CA certificates for CSI volumes: only an Issuer or ClusterIssuer of cert-manager.io with the annotation ${OPT_IN} can`;
  }
  const found = lookup();
  const who = described(full, namespace);
  if ('notFound' in found) {
    return `${who} does not exist, so it cannot allow CA certificates for CSI volumes (annotation ${OPT_IN})`;
  }
  if (allowsVolumeCa(found.issuer)) return undefined;
  return `${who} does not allow CA certificates for CSI volumes: set the annotation ${OPT_IN} on it to allow them`;
}
