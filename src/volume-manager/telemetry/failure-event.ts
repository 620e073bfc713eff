import type { EventType } from '../../api/event.js';
import type { KubeObject } from '../../api/meta.js';
import { POD_NAME_KEY, POD_NAMESPACE_KEY, POD_UID_KEY } from '../../attributes/attribute-keys.js';
import { errorMessage } from '../../base/error-message.js';
import type { IssuanceFailureReason } from '../../base/telemetry.js';
import { failureReason } from './volume-telemetry.js';

/** An Event to record on a pod. */
export interface PodEvent {
  pod: KubeObject;
  type: EventType;
  reason: string;
  message: string;
}

const reasons: Record<IssuanceFailureReason, string> = {
  denied: 'CertificateRequestDenied',
  failed: 'CertificateRequestFailed',
  timeout: 'CertificateRequestPending',
  aborted: 'IssuanceAborted',
  'invalid-certificate': 'InvalidCertificate',
  other: 'IssuanceFailed',
};

/**
 * The Event that tells `kubectl describe pod` why its certificate volume is not ready, or
 * undefined when the volume context does not name the pod (kubelet without podInfoOnMount).
 */
export function issuanceFailureEvent(
  volumeId: string,
  volumeContext: Record<string, string>,
  err: unknown,
): PodEvent | undefined {
  const name = volumeContext[POD_NAME_KEY];
  const namespace = volumeContext[POD_NAMESPACE_KEY];
  if (!name || !namespace) return undefined;
  const uid = volumeContext[POD_UID_KEY];
  const detail = errorMessage(err);
  return {
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, ...(uid ? { uid } : {}) },
    },
    type: 'Warning',
    reason: reasons[failureReason(err)],
    message: `certificate for volume ${volumeId}: ${detail}`,
  };
}
