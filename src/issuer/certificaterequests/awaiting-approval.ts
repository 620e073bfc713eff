import {
  type CertificateRequest,
  CertificateRequestKind,
  CRCondition,
} from '../../api/certificate-request.js';
import { findCondition } from '../../api/conditions.js';
import { defaultIssuerRef } from '../../api/issuer-ref.js';
import { compareCodeUnits } from '../../base/code-unit-order.js';
import type { ResourceStore } from '../../store/resource-store.js';

/** A CertificateRequest no approver has decided on yet, as `cert-csi status --requests` shows it. */
export interface RequestAwaitingApproval {
  namespace: string;
  name: string;
  issuer: { name: string; kind: string; group: string };
  /** spec.username: who created it, as the API server recorded it; "" when unrecorded. */
  requester: string;
  /** metadata.creationTimestamp (RFC 3339); absent when the object has none. */
  createdAt?: string;
  /** Whole seconds since createdAt at the time of the listing. */
  ageSeconds?: number;
}

/**
 * True while a request has neither an Approved nor a Denied condition: the signers wait for
 * an approver (cert-manager's own, approver-policy, or a person with `cmctl approve`).
 */
export function isAwaitingApproval(request: CertificateRequest): boolean {
  const conditions = request.status?.conditions;
  return (
    findCondition(conditions, CRCondition.Approved) === undefined &&
    findCondition(conditions, CRCondition.Denied) === undefined
  );
}

/** The requests awaiting approval among requests, oldest first (then by namespace and name). */
export function requestsAwaitingApproval(
  requests: readonly CertificateRequest[],
  now: Date,
): RequestAwaitingApproval[] {
  return requests
    .filter(isAwaitingApproval)
    .map((request) => {
      const { metadata, spec } = request;
      const issuer = defaultIssuerRef(spec.issuerRef);
      const row: RequestAwaitingApproval = {
        namespace: metadata.namespace ?? '',
        name: metadata.name,
        issuer,
        requester: spec.username ?? '',
      };
      const created = Date.parse(metadata.creationTimestamp ?? '');
      if (!Number.isNaN(created)) {
        row.createdAt = new Date(created).toISOString();
        row.ageSeconds = Math.max(0, Math.floor((now.getTime() - created) / 1000));
      }
      return row;
    })
    .sort(
      (a, b) =>
        (b.ageSeconds ?? -1) - (a.ageSeconds ?? -1) ||
        compareCodeUnits(a.namespace, b.namespace) ||
        compareCodeUnits(a.name, b.name),
    );
}

/** Lists the CertificateRequests of one namespace (every one when undefined) awaiting approval. */
export async function readRequestsAwaitingApproval(
  store: Pick<ResourceStore, 'list'>,
  namespace: string | undefined,
  now: Date = new Date(),
): Promise<RequestAwaitingApproval[]> {
  const { items } = await store.list<CertificateRequest>(
    CertificateRequestKind,
    namespace === undefined ? {} : { namespace },
  );
  return requestsAwaitingApproval(items, now);
}
