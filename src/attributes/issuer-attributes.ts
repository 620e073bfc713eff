import { CERT_MANAGER_GROUP, defaultIssuerRef } from '../api/issuer-ref.js';
import { isResourceKind, RESOURCE_KIND_RULE } from '../api/kube-names.js';
import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import { invalidValue, requiredValue, unsupportedValue } from './attribute-errors.js';
import type { AttributeReader } from './attribute-reader.js';
import { dnsSubdomainProblem } from './object-names.js';

const CERT_MANAGER_KINDS = ['Issuer', 'ClusterIssuer'];

/**
 * Reads issuer-name, issuer-kind and issuer-group with cert-manager's defaults. The name
 * must be an object name (the issuer is looked up by it), the group an API group (a DNS
 * subdomain), and the kind one cert-manager.io serves (its CertificateRequest webhook
 * says so) or, for other groups, a CRD kind: csi-driver checks none of these.
 */
export function readIssuerRef(attrs: AttributeReader): VolumeCertificateSpec['issuerRef'] {
  const name = attrs.nonEmpty('issuer-name');
  if (name === undefined)
    attrs.fail('issuer-name', requiredValue('issuer-name is a required field'));
  else {
    const problem = dnsSubdomainProblem(name);
    if (problem !== undefined) attrs.fail('issuer-name', problem);
  }
  const ref = defaultIssuerRef({
    name: name ?? '',
    kind: attrs.value('issuer-kind') ?? '',
    group: attrs.value('issuer-group') ?? '',
  });
  if (ref.group !== CERT_MANAGER_GROUP) {
    const problem = dnsSubdomainProblem(ref.group);
    if (problem !== undefined) attrs.fail('issuer-group', problem);
    if (!isResourceKind(ref.kind)) {
      attrs.fail('issuer-kind', invalidValue(ref.kind, RESOURCE_KIND_RULE));
    }
  } else if (!CERT_MANAGER_KINDS.includes(ref.kind)) {
    attrs.fail('issuer-kind', unsupportedValue(ref.kind, CERT_MANAGER_KINDS));
  }
  return ref;
}
