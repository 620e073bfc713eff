import {
  type CertificateRequest,
  CRCondition,
  finalState,
  isApproved,
} from '../../api/certificate-request.js';
import { findCondition } from '../../api/conditions.js';

/** Where a request stands, from the point of view of a volume waiting for it. */
export type RequestProgress =
  | { state: 'issued' }
  | { state: 'denied'; message: string }
  | { state: 'failed'; message: string }
  | { state: 'waiting'; message: string };

/**
 * Reads a request's conditions the way csi-lib's manager does (handleRequest), with
 * its messages, so a timed-out publish says exactly what it was waiting for.
 */
export function requestProgress(request: CertificateRequest): RequestProgress {
  const name = request.metadata.name;
  const conditions = request.status?.conditions;
  const state = finalState(request);
  if (state === 'Denied') {
    const denied = findCondition(conditions, CRCondition.Denied);
    return {
      state: 'denied',
      message: `request "${name}" has been denied by the approval plugin: ${denied?.message ?? ''}`,
    };
  }
  const ready = findCondition(conditions, CRCondition.Ready);
  if (state === 'Failed' || state === 'InvalidRequest') {
    return { state: 'failed', message: `request "${name}" has failed: ${ready?.message ?? ''}` };
  }
  if (state === 'Issued') return { state: 'issued' };
  if (!isApproved(request)) {
    return {
      state: 'waiting',
      message: `request "${name}" has not yet been approved by approval plugin`,
    };
  }
  if (!ready) return { state: 'waiting', message: `request "${name}" has no ready condition` };
  if (ready.reason === 'Pending') {
    return { state: 'waiting', message: `request "${name}" is pending: ${ready.message ?? ''}` };
  }
  return {
    state: 'waiting',
    message: `request "${name}" has unrecognised Ready condition state (${ready.reason ?? ''}): ${ready.message ?? ''}`,
  };
}
