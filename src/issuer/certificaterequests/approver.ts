import { type CertificateRequest, CertificateRequestKind } from '../../api/certificate-request.js';
import { setCondition } from '../../api/conditions.js';
import { issuerTypeOf } from '../../api/issuer.js';
import { isCertManagerGroup } from '../../api/issuer-ref.js';
import { defineController, keyOf, watchInformer } from '../../controller/controller-definition.js';
import { writeStatusIfChanged } from '../../controller/status-writer.js';
import { requestsByIssuer } from '../indexes.js';
import { issuerCaches, issuerIndexValue } from '../issuer-lookup.js';
import { isOwnIssuerType } from '../issuer-signers.js';
import type { IssuerStackConfig } from '../stack-config.js';
import { approvalSettled, conditionTypeFor } from './approval-policy.js';

/**
 * cert-manager's `certificaterequests-approver` (reference §2.3): records the approval
 * policy's decision once per request. Beside other issuers (ownIssuerTypesOnly) it decides
 * only for requests whose issuer exists and is a CA or SelfSigned one; an issuer that appears
 * later requeues its requests, found through an index.
 */
export const approver = defineController<IssuerStackConfig>({
  name: 'certificaterequests-approver',
  setup({ store, informers, events, logger, now, config }) {
    const requests = informers.informer<CertificateRequest>(CertificateRequestKind);
    const { issuers, clusterIssuers, lookup } = issuerCaches(informers);
    requests.addIndex(requestsByIssuer);
    const isOwnRequest = (request: CertificateRequest) => {
      if (!isCertManagerGroup(request.spec.issuerRef)) return false;
      const found = lookup(request.spec.issuerRef, request.metadata.namespace);
      return 'issuer' in found && isOwnIssuerType(issuerTypeOf(found.issuer));
    };
    const requestsOf =
      (kind: string) => (issuer: { metadata: { name: string; namespace?: string } }) =>
        requests
          .byIndex(
            requestsByIssuer,
            issuerIndexValue(kind, issuer.metadata.name, issuer.metadata.namespace),
          )
          .map(keyOf);
    return {
      watches: [
        watchInformer(requests),
        watchInformer(issuers, requestsOf('Issuer')),
        watchInformer(clusterIssuers, requestsOf('ClusterIssuer')),
      ],
      async sync(key) {
        const request = requests.getByKey(key);
        if (!request || request.metadata.deletionTimestamp || approvalSettled(request)) {
          return undefined;
        }
        if (config.ownIssuerTypesOnly && !isOwnRequest(request)) return undefined;
        const decision = await config.approval(request);
        if (decision.decision === 'abstain') return undefined;
        const conditions = setCondition(
          request.status?.conditions,
          {
            type: conditionTypeFor(decision.decision),
            status: 'True',
            reason: decision.reason,
            message: decision.message,
          },
          now(),
        );
        // Deleted meanwhile: nothing left to approve. A Conflict is thrown on to be retried.
        const written = await writeStatusIfChanged(store, CertificateRequestKind, request, {
          ...request.status,
          conditions,
        });
        if (!written) return undefined;
        events.event(
          request,
          decision.decision === 'approve' ? 'Normal' : 'Warning',
          decision.reason,
          decision.message,
        );
        logger.debug({ request: key, decision: decision.decision }, 'approval recorded');
        return undefined;
      },
    };
  },
});
