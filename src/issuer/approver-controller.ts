import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import { setCondition } from '../api/conditions.js';
import type { EventRecorder } from '../api/event.js';
import type { Logger } from '../api/logger.js';
import { isStoreError } from '../store/errors.js';
import type { Informer } from '../store/informer.js';
import type { ResourceStore } from '../store/resource-store.js';
import { type ApprovalPolicy, approvalSettled, conditionTypeFor } from './approval-policy.js';
import { getByKey } from './cache-lookup.js';

export interface ApproverDeps {
  store: ResourceStore;
  requests: Informer<CertificateRequest>;
  policy: ApprovalPolicy;
  events: EventRecorder;
  logger: Logger;
  now: () => Date;
}

/** Syncs the approval of one request, by cache key. */
export async function syncApproval(deps: ApproverDeps, key: string): Promise<void> {
  const request = getByKey(deps.requests, key);
  if (!request || request.metadata.deletionTimestamp || approvalSettled(request)) return;
  const decision = await deps.policy(request);
  if (decision.decision === 'abstain') return;
  const conditions = setCondition(
    request.status?.conditions,
    {
      type: conditionTypeFor(decision.decision),
      status: 'True',
      reason: decision.reason,
      message: decision.message,
    },
    deps.now(),
  );
  try {
    await deps.store.updateStatus(CertificateRequestKind, {
      ...request,
      status: { ...request.status, conditions },
    });
  } catch (err) {
    // Deleted meanwhile: nothing left to approve. A Conflict is thrown on to be retried.
    if (isStoreError(err, 'NotFound')) return;
    throw err;
  }
  deps.events.event(
    request,
    decision.decision === 'approve' ? 'Normal' : 'Warning',
    decision.reason,
    decision.message,
  );
  deps.logger.debug({ request: key, decision: decision.decision }, 'approval recorded');
}
