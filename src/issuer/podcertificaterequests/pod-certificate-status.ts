import { formatTimestamp } from '../../api/conditions.js';
import {
  type PCR_CONDITION_DENIED,
  type PCR_CONDITION_FAILED,
  PCR_CONDITION_ISSUED,
  type PodCertificateRequestStatus,
} from '../../api/pod-certificate-request.js';

/** The one status write that issues a request: the chain (leaf first) and its three times. */
export function issuedPodStatus(
  chainPem: string,
  times: { notBefore: Date; beginRefreshAt: Date; notAfter: Date },
  message: string,
  now: Date,
): PodCertificateRequestStatus {
  return {
    conditions: [
      {
        type: PCR_CONDITION_ISSUED,
        status: 'True',
        reason: 'Issued',
        message,
        lastTransitionTime: formatTimestamp(now),
      },
    ],
    certificateChain: chainPem,
    notBefore: formatTimestamp(times.notBefore),
    beginRefreshAt: formatTimestamp(times.beginRefreshAt),
    notAfter: formatTimestamp(times.notAfter),
  };
}

/** A terminal refusal: Denied (the signer will not) or Failed (it cannot); nothing else is set. */
export function refusedPodStatus(
  type: typeof PCR_CONDITION_DENIED | typeof PCR_CONDITION_FAILED,
  reason: string,
  message: string,
  now: Date,
): PodCertificateRequestStatus {
  return {
    conditions: [
      { type, status: 'True', reason, message, lastTransitionTime: formatTimestamp(now) },
    ],
  };
}
