import {
  type CertificateRequest,
  type CertificateRequestStatus,
  CRCondition,
  CRReason,
  encodeBytes,
  readyReason,
} from '../../api/certificate-request.js';
import { formatTimestamp, setCondition } from '../../api/conditions.js';

/** A new status, and whether the transition deserves an event. */
export interface StatusChange {
  status: CertificateRequestStatus;
  announce: boolean;
}

export const DENIED_MESSAGE = 'The CertificateRequest was denied by an approval controller';
export const ISSUED_MESSAGE = 'Certificate fetched from issuer successfully';

function ready(
  request: CertificateRequest,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: Date,
): CertificateRequestStatus {
  return {
    ...request.status,
    conditions: setCondition(
      request.status?.conditions,
      { type: CRCondition.Ready, status, reason, message },
      now,
    ),
  };
}

/** Ready=False/Pending; the event is sent only when the request was not already Pending. */
export function pendingStatus(
  request: CertificateRequest,
  message: string,
  now: Date,
): StatusChange {
  return {
    status: ready(request, 'False', CRReason.Pending, message, now),
    announce: readyReason(request) !== CRReason.Pending,
  };
}

/** Ready=False/Failed with failureTime set once: a final state. */
export function failedStatus(
  request: CertificateRequest,
  message: string,
  now: Date,
): StatusChange {
  const status = ready(request, 'False', CRReason.Failed, message, now);
  status.failureTime = request.status?.failureTime ?? formatTimestamp(now);
  return { status, announce: true };
}

/** Ready=False/Denied with failureTime set once, after an approver denied the request. */
export function deniedStatus(request: CertificateRequest, now: Date): StatusChange {
  const status = ready(request, 'False', CRReason.Denied, DENIED_MESSAGE, now);
  status.failureTime = request.status?.failureTime ?? formatTimestamp(now);
  return { status, announce: false };
}

/** Ready=True/Issued with the signed chain and CA. */
export function issuedStatus(
  request: CertificateRequest,
  certificatePem: string,
  caPem: string,
  now: Date,
): StatusChange {
  const status = ready(request, 'True', CRReason.Issued, ISSUED_MESSAGE, now);
  status.certificate = encodeBytes(certificatePem);
  status.ca = encodeBytes(caPem);
  return { status, announce: true };
}
