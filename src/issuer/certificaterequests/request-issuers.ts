import { type CertificateRequest, CertificateRequestKind } from '../../api/certificate-request.js';
import { issuerTypeOf } from '../../api/issuer.js';
import { isCertManagerGroup } from '../../api/issuer-ref.js';
import type { KubeObject } from '../../api/meta.js';
import {
  type ControllerWatch,
  keyOf,
  watchInformer,
} from '../../controller/controller-definition.js';
import type { SharedInformers } from '../../controller/shared-informers.js';
import { requestsByIssuer } from '../indexes.js';
import { issuerCaches, issuerIndexValue } from '../issuer-lookup.js';
import { isOwnIssuerType } from '../issuer-signers.js';

/** The requests cache of the CertificateRequest controllers and what they read of issuers. */
export function requestIssuers(informers: SharedInformers) {
  const requests = informers.informer<CertificateRequest>(CertificateRequestKind);
  const { issuers, clusterIssuers, lookup } = issuerCaches(informers);
  requests.addIndex(requestsByIssuer);
  const requestsOf = (kind: string) => (issuer: KubeObject) =>
    requests
      .byIndex(
        requestsByIssuer,
        issuerIndexValue(kind, issuer.metadata.name, issuer.metadata.namespace),
      )
      .map(keyOf);
  const issuerOf = (request: CertificateRequest) =>
    lookup(request.spec.issuerRef, request.metadata.namespace);
  return {
    requests,
    issuerOf,
    /** True when the request names an existing cert-manager issuer of a type this stack signs. */
    isOwnRequest(request: CertificateRequest): boolean {
      if (!isCertManagerGroup(request.spec.issuerRef)) return false;
      const found = issuerOf(request);
      return 'issuer' in found && isOwnIssuerType(issuerTypeOf(found.issuer));
    },
    /** An Issuer or ClusterIssuer change requeues the requests that name it (found by index). */
    issuerWatches: [
      watchInformer(issuers, requestsOf('Issuer')),
      watchInformer(clusterIssuers, requestsOf('ClusterIssuer')),
    ] as ControllerWatch[],
  };
}
