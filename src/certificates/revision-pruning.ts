import { type Certificate, CertificateCondition } from '../api/certificate.js';
import type { CertificateRequest } from '../api/certificate-request.js';
import { isConditionTrue } from '../api/conditions.js';
import { requestRevision } from './request-revision.js';

/**
 * The owned requests cert-manager's revisionmanager deletes: none unless the Certificate
 * is Ready; otherwise the oldest revisions beyond spec.revisionHistoryLimit (default 1).
 * Requests without a readable revision are never deleted here.
 */
export function requestsToPrune(
  certificate: Certificate,
  owned: readonly CertificateRequest[],
): CertificateRequest[] {
  if (!isConditionTrue(certificate.status?.conditions, CertificateCondition.Ready)) return [];
  const limit = certificate.spec.revisionHistoryLimit ?? 1;
  if (limit >= owned.length) return [];
  const revisions = owned
    .map((request) => ({ request, revision: requestRevision(request) }))
    .filter(
      (entry): entry is { request: CertificateRequest; revision: number } =>
        entry.revision !== undefined,
    )
    .sort((a, b) => a.revision - b.revision);
  return revisions.slice(0, Math.max(0, revisions.length - limit)).map((entry) => entry.request);
}
