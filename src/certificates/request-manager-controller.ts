import { CertificateCondition } from '../api/certificate.js';
import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import { isConditionTrue } from '../api/conditions.js';
import { errorMessage } from '../base/error-message.js';
import { goQuote } from '../base/go-text.js';
import { defineController } from '../controller/controller-definition.js';
import { createCsr } from '../pki/csr.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';
import { certificateCaches } from './certificate-caches.js';
import {
  CERTIFICATE_RETRY,
  type CertificateControllersConfig,
} from './certificate-controllers-config.js';
import { csrRequestFor } from './certificate-csr.js';
import { buildNextRequest, nextRequestPlan } from './next-request-plan.js';

/** Deletes requests, ignoring those already gone. */
export async function deleteRequests(
  store: ResourceStore,
  requests: readonly CertificateRequest[],
): Promise<void> {
  for (const request of requests) {
    try {
      await store.delete(CertificateRequestKind, request.metadata.name, request.metadata.namespace);
    } catch (err) {
      if (!isStoreError(err, 'NotFound')) throw err;
    }
  }
}

/**
 * cert-manager's requestmanager controller: while a Certificate is issuing and its next
 * private key exists, exactly one CertificateRequest for the next revision, for that key.
 */
export const requestManagerController = defineController<CertificateControllersConfig>({
  name: 'certificates-request-manager',
  retry: CERTIFICATE_RETRY,
  setup({ store, informers, events, logger }) {
    const caches = certificateCaches(informers);
    const { watches } = caches;
    return {
      watches: [watches.certificates, watches.ownedRequests, watches.ownedSecrets],
      async sync(key) {
        const certificate = caches.live(key);
        if (!certificate || caches.specErrors(certificate).length > 0) return undefined;
        const status = certificate.status;
        if (!isConditionTrue(status?.conditions, CertificateCondition.Issuing)) return undefined;
        const keyName = status?.nextPrivateKeySecretName;
        if (!keyName) return undefined;
        const nextKey = caches.storedKey(
          caches.secrets.get(keyName, certificate.metadata.namespace),
        );
        if (nextKey.state !== 'key') return undefined;
        const plan = nextRequestPlan({
          certificate,
          owned: await caches.decodedRequests(certificate),
          nextKey: nextKey.key,
        });
        await deleteRequests(store, plan.remove);
        if (plan.duplicates) {
          logger.error(
            { key },
            'Multiple matching CertificateRequest resources exist, delete one of them. This is likely an error and should be reported on the issue tracker!',
          );
          return undefined;
        }
        if (!plan.create) return undefined;
        const revision = (status?.revision ?? 0) + 1;
        const csrPem = await createCsr(csrRequestFor(certificate.spec, nextKey.key));
        const request = buildNextRequest({
          certificate,
          revision,
          keySecretName: keyName,
          csrPem,
        });
        try {
          await store.create(CertificateRequestKind, request);
        } catch (err) {
          // The stable name makes a retried create find the request the cache has not shown yet.
          if (isStoreError(err, 'AlreadyExists')) return undefined;
          events.event(
            certificate,
            'Warning',
            'RequestFailed',
            `Failed to create CertificateRequest: ${errorMessage(err)}`,
          );
          throw err;
        }
        events.event(
          certificate,
          'Normal',
          'Requested',
          `Created new CertificateRequest resource ${goQuote(request.metadata.name)}`,
        );
        return undefined;
      },
    };
  },
});
