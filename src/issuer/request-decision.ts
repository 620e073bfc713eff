import {
  type CertificateRequest,
  CertificateRequestKind,
  CRCondition,
  isApproved,
  isDenied,
} from '../api/certificate-request.js';
import { setCondition } from '../api/conditions.js';
import { formatNamespacedName, type NamespacedName } from '../api/namespaced-name.js';
import type { ErrorKind } from '../base/error-catalogue.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';

/** A person's word on a CertificateRequest (cmctl approve / deny). */
export interface RequestDecision extends NamespacedName {
  decision: 'Approved' | 'Denied';
  /** The condition's reason (cmctl's default: KubectlCertManager). */
  reason: string;
  /** The condition's message. */
  message: string;
}

/** A request that cannot take the decision: missing, or decided already. */
export class RequestDecisionError extends Error {
  readonly errorKind: ErrorKind = 'CERT_CSI_API_REQUEST_FAILED';
  override readonly name = 'RequestDecisionError';
}

/**
 * Writes the decision as cmctl does: the request read, refused when it is already approved or
 * denied (either way: the condition is final), the Approved or Denied condition set True with
 * the reason and message, one status update. The store's admission (the embedded store's
 * rules, or the cluster's webhook and RBAC) judges the write; its refusal is thrown as it is.
 */
export async function decideRequest(
  store: Pick<ResourceStore, 'get' | 'updateStatus'>,
  decision: RequestDecision,
  now: () => Date,
): Promise<void> {
  const name = formatNamespacedName(decision);
  let request: CertificateRequest;
  try {
    request = await store.get<CertificateRequest>(
      CertificateRequestKind,
      decision.name,
      decision.namespace,
    );
  } catch (err) {
    if (isStoreError(err, 'NotFound')) {
      throw new RequestDecisionError(`CertificateRequest ${name} not found`);
    }
    throw err;
  }
  if (isApproved(request)) {
    throw new RequestDecisionError(`CertificateRequest ${name} is already approved`);
  }
  if (isDenied(request)) {
    throw new RequestDecisionError(`CertificateRequest ${name} is already denied`);
  }
  await store.updateStatus<CertificateRequest>(CertificateRequestKind, {
    ...request,
    status: {
      ...request.status,
      conditions: setCondition(
        request.status?.conditions,
        {
          type: decision.decision === 'Approved' ? CRCondition.Approved : CRCondition.Denied,
          status: 'True',
          reason: decision.reason,
          message: decision.message,
        },
        now(),
      ),
    },
  });
}
