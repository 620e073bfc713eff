import { CertificateCondition, CertificateKind } from '../api/certificate.js';
import { findCondition, observedGenerationOf, setCondition } from '../api/conditions.js';
import { defineController } from '../controller/controller-definition.js';
import { writeStatusIfChanged } from '../controller/status-writer.js';
import { certificateCaches } from './certificate-caches.js';
import {
  CERTIFICATE_RETRY,
  type CertificateControllersConfig,
} from './certificate-controllers-config.js';
import { PolicyReason } from './policy-chains.js';
import { policyInputOf } from './policy-input.js';
import { readinessStatus } from './readiness-status.js';

/** The Ready reason of a Certificate a cluster without cert-manager's webhook let in invalid. */
export const INVALID_SPEC_REASON = 'InvalidSpec';

/** The Ready message of an invalid Certificate: every field error, as the webhook would list them. */
export function invalidSpecMessage(errors: readonly string[]): string {
  return `Certificate is invalid and will not be issued until it is fixed: ${errors.join(', ')}`;
}

/**
 * cert-manager's readiness controller: the Ready condition from the readiness
 * chain and notBefore, notAfter and renewalTime from the Secret's certificate. A Certificate
 * whose spec the webhook would refuse (none runs in front of cert-csi's controllers yet) is
 * Ready=False with every field error, and a Warning event says so once; so does one whose
 * renewal windows cannot place the renewal time (WindowError), each time the status changes.
 */
export const readinessController = defineController<CertificateControllersConfig>({
  name: 'certificates-readiness',
  retry: CERTIFICATE_RETRY,
  setup({ store, informers, events, now }) {
    const caches = certificateCaches(informers);
    const { watches } = caches;
    return {
      watches: [watches.certificates, watches.ownedRequests, watches.namedSecrets],
      async sync(key) {
        const certificate = caches.live(key);
        if (!certificate) return undefined;
        const at = now();
        const errors = caches.specErrors(certificate);
        if (errors.length > 0) {
          const message = invalidSpecMessage(errors);
          const conditions = setCondition(
            certificate.status?.conditions,
            {
              type: CertificateCondition.Ready,
              status: 'False',
              reason: INVALID_SPEC_REASON,
              message,
              ...observedGenerationOf(certificate),
            },
            at,
          );
          const written = await writeStatusIfChanged(store, CertificateKind, certificate, {
            ...certificate.status,
            conditions,
          });
          if (written) events.event(certificate, 'Warning', INVALID_SPEC_REASON, message);
          return undefined;
        }
        const status = readinessStatus(await policyInputOf(caches, certificate, at));
        const written = await writeStatusIfChanged(store, CertificateKind, certificate, status);
        const ready = findCondition(status.conditions, CertificateCondition.Ready);
        if (written && ready?.reason === PolicyReason.WindowError)
          events.event(certificate, 'Warning', PolicyReason.WindowError, `${ready.message}`);
        return undefined;
      },
    };
  },
});
