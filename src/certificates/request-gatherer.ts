import { CERTIFICATE_REVISION_ANNOTATION, type Certificate } from '../api/certificate.js';
import type { CertificateRequest } from '../api/certificate-request.js';
import { isControlledBy } from '../api/meta.js';
import type { ErrorKind } from '../base/error-catalogue.js';

/** Two or more owned requests for one revision: the sync stops and retries, like cert-manager's. */
export class DuplicateRequestsError extends Error {
  constructor(which: 'current' | 'next', revision: number) {
    super(
      `multiple CertificateRequests were found for the '${which}' revision ${revision}, issuance is skipped until there are no more duplicates`,
    );
    this.name = 'DuplicateRequestsError';
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_DUPLICATE_REQUESTS';
  }
}

/** The requests of a Certificate's current revision (status.revision) and of the next one. */
export interface GatheredRequests {
  current: CertificateRequest | undefined;
  next: CertificateRequest | undefined;
}

function ofRevision(
  owned: readonly CertificateRequest[],
  revision: number,
  which: 'current' | 'next',
): CertificateRequest | undefined {
  const wanted = String(revision);
  const found = owned.filter(
    (request) => request.metadata.annotations?.[CERTIFICATE_REVISION_ANNOTATION] === wanted,
  );
  if (found.length > 1) throw new DuplicateRequestsError(which, revision);
  return found[0];
}

/**
 * Picks the "current" and "next" requests of a Certificate out of candidate requests (those
 * it controls count; the revision annotation must equal the decimal revision exactly), as
 * cert-manager's gatherer does. There is no current request before the first issuance.
 * Throws DuplicateRequestsError when a revision has more than one.
 */
export function gatherRequests(
  certificate: Certificate,
  candidates: readonly CertificateRequest[],
): GatheredRequests {
  const owned = candidates.filter((request) => isControlledBy(request, certificate));
  const revision = certificate.status?.revision;
  return {
    current: revision === undefined ? undefined : ofRevision(owned, revision, 'current'),
    next: ofRevision(owned, (revision ?? 0) + 1, 'next'),
  };
}
