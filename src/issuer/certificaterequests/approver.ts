import { CertificateRequestKind } from '../../api/certificate-request.js';
import { setCondition } from '../../api/conditions.js';
import { defineController, watchInformer } from '../../controller/controller-definition.js';
import { writeStatusIfChanged } from '../../controller/status-writer.js';
import type { IssuerStackConfig } from '../stack-config.js';
import { approvalSettled, conditionTypeFor, volumeCaDecision } from './approval-policy.js';
import { requestIssuers } from './request-issuers.js';

/**
 * cert-manager's `certificaterequests-approver`: records the approval
 * policy's decision once per request, after cert-csi's own rule for CA certificates of CSI
 * volumes (volumeCaDecision). Beside other issuers (ownIssuerTypesOnly) it decides
 * only for requests whose issuer exists and is a CA or SelfSigned one; an issuer that appears
 * later requeues its requests, found through an index.
 */
export const approver = defineController<IssuerStackConfig>({
  name: 'certificaterequests-approver',
  setup({ store, informers, events, logger, now, config }) {
    const { requests, isOwnRequest, issuerOf, issuerWatches } = requestIssuers(informers);
    return {
      watches: [watchInformer(requests), ...issuerWatches],
      async sync(key) {
        const request = requests.getByKey(key);
        if (!request || request.metadata.deletionTimestamp || approvalSettled(request)) {
          return undefined;
        }
        if (config.ownIssuerTypesOnly && !isOwnRequest(request)) return undefined;
        // Before the policy, whichever it is: a CA certificate for a pod needs its issuer's consent.
        const decision =
          volumeCaDecision(request, () => issuerOf(request)) ?? (await config.approval(request));
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
