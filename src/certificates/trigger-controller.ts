import { CertificateCondition, CertificateKind } from '../api/certificate.js';
import { observedGenerationOf, setCondition } from '../api/conditions.js';
import { defineController, keyOf } from '../controller/controller-definition.js';
import { writeStatusIfChanged } from '../controller/status-writer.js';
import { certificateCaches } from './certificate-caches.js';
import {
  CERTIFICATE_RETRY,
  type CertificateControllersConfig,
} from './certificate-controllers-config.js';
import { policyInputOf } from './policy-input.js';
import { triggerDecision } from './trigger-decision.js';

/**
 * cert-manager's trigger controller: sets Issuing=True when the trigger chain finds a
 * reason, unless another Certificate owns the Secret or failures hold it back; looks again
 * at the renewal time or the end of the backoff through the work queue (no polling).
 */
export const triggerController = defineController<CertificateControllersConfig>({
  name: 'certificates-trigger',
  retry: CERTIFICATE_RETRY,
  setup({ store, informers, events, logger, now, config }) {
    const caches = certificateCaches(informers);
    const { watches } = caches;
    const untilMs = (at: Date, from: Date) => Math.max(0, at.getTime() - from.getTime());
    return {
      watches: [watches.certificates, watches.ownedRequests, watches.namedSecrets],
      async sync(key) {
        const certificate = caches.live(key);
        if (!certificate || caches.specErrors(certificate).length > 0) return undefined;
        const at = now();
        const input = await policyInputOf(caches, certificate, at);
        const decision = triggerDecision({
          ...input,
          sharingSecret: caches.sharingSecret(certificate),
          minimumBackoffMs: config.minimumBackoffMs,
          maximumBackoffMs: config.maximumBackoffMs,
        });
        switch (decision.action) {
          case 'none':
            return undefined;
          case 'not-owner':
            logger.debug({ key }, 'another Certificate owns the Secret; looking again later');
            return { requeueAfterMs: decision.recheckAfterMs };
          case 'back-off':
            logger.info(
              { key, until: decision.until.toISOString() },
              `Backing off from issuance due to previously failed issuance(s). Issuance will next be attempted at ${decision.until.toISOString()}`,
            );
            return { requeueAfterMs: untilMs(decision.until, at) };
          case 'up-to-date':
            return decision.recheckAt
              ? { requeueAfterMs: untilMs(decision.recheckAt, at) }
              : undefined;
          case 'issue': {
            const conditions = setCondition(
              certificate.status?.conditions,
              {
                type: CertificateCondition.Issuing,
                status: 'True',
                reason: decision.reason,
                message: decision.message,
                ...observedGenerationOf(certificate),
              },
              at,
            );
            const written = await writeStatusIfChanged(store, CertificateKind, certificate, {
              ...certificate.status,
              conditions,
            });
            if (written && decision.warning)
              events.event(
                certificate,
                'Warning',
                decision.warning.reason,
                decision.warning.message,
              );
            if (written) events.event(certificate, 'Normal', 'Issuing', decision.message);
            logger.debug({ key: keyOf(certificate), reason: decision.reason }, 'issuing');
            return undefined;
          }
        }
      },
    };
  },
});
