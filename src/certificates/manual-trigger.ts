import {
  type Certificate,
  CertificateCondition,
  CertificateKind,
  type CertificateStatus,
} from '../api/certificate.js';
import { isConditionTrue, observedGenerationOf, setCondition } from '../api/conditions.js';
import { formatNamespacedName, type NamespacedName } from '../api/namespaced-name.js';
import type { ErrorKind } from '../base/error-catalogue.js';
import { errorMessage } from '../base/error-message.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';

/** The Issuing condition's reason when a person asked for the issuance (cmctl renew). */
export const MANUALLY_TRIGGERED_REASON = 'ManuallyTriggered';
/** cmctl renew's message on that condition, word for word. */
export const MANUALLY_TRIGGERED_MESSAGE = 'Certificate re-issuance manually triggered';

/** Status writes tried before a run of Conflicts is given up (each after a fresh read). */
export const MANUAL_TRIGGER_ATTEMPTS = 5;

/**
 * The status with `Issuing=True`, reason ManuallyTriggered, cmctl's message and
 * observedGeneration = metadata.generation; the other conditions and fields are kept. As
 * cert-manager's SetCertificateCondition: lastTransitionTime is now when Issuing was absent or
 * not True, and kept when it already was True (a re-assertion is no transition).
 */
export function manuallyTriggeredStatus(certificate: Certificate, now: Date): CertificateStatus {
  return {
    ...certificate.status,
    conditions: setCondition(
      certificate.status?.conditions,
      {
        type: CertificateCondition.Issuing,
        status: 'True',
        reason: MANUALLY_TRIGGERED_REASON,
        message: MANUALLY_TRIGGERED_MESSAGE,
        ...observedGenerationOf(certificate),
      },
      now,
    ),
  };
}

/** No Certificate of that namespace and name (nothing was written). */
export class CertificateNotFoundError extends Error {
  constructor(ref: NamespacedName) {
    super(`Certificate ${formatNamespacedName(ref)} not found`);
    this.name = 'CertificateNotFoundError';
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_CERTIFICATE_NOT_FOUND';
  }
}

/** What a manual trigger wrote, and whether an issuance was already under way. */
export interface ManualTriggerResult {
  certificate: Certificate;
  /** Issuing was True before: that issuance goes on, now marked as asked for by hand. */
  alreadyIssuing: boolean;
}

/**
 * `cmctl renew` for one Certificate: reads it and writes manuallyTriggeredStatus with a status
 * update. A Conflict (someone wrote in between) is retried on a fresh read, up to
 * MANUAL_TRIGGER_ATTEMPTS writes. A missing Certificate throws CertificateNotFoundError; any
 * other failure is thrown as cmctl words it ("failed to trigger issuance of Certificate …").
 */
export async function triggerManualIssuance(
  store: Pick<ResourceStore, 'get' | 'updateStatus'>,
  ref: NamespacedName,
  now: () => Date,
): Promise<ManualTriggerResult> {
  const failed = (err: unknown) =>
    new Error(
      `failed to trigger issuance of Certificate ${formatNamespacedName(ref)}: ${errorMessage(err)}`,
    );
  for (let attempt = 1; ; attempt++) {
    let current: Certificate;
    try {
      current = await store.get<Certificate>(CertificateKind, ref.name, ref.namespace);
    } catch (err) {
      if (isStoreError(err, 'NotFound')) throw new CertificateNotFoundError(ref);
      throw failed(err);
    }
    const alreadyIssuing = isConditionTrue(
      current.status?.conditions,
      CertificateCondition.Issuing,
    );
    try {
      const certificate = await store.updateStatus<Certificate>(CertificateKind, {
        ...current,
        status: manuallyTriggeredStatus(current, now()),
      });
      return { certificate, alreadyIssuing };
    } catch (err) {
      if (isStoreError(err, 'Conflict') && attempt < MANUAL_TRIGGER_ATTEMPTS) continue;
      // Deleted between the read and the write.
      if (isStoreError(err, 'NotFound')) throw new CertificateNotFoundError(ref);
      throw failed(err);
    }
  }
}
