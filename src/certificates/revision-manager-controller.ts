import { defineController } from '../controller/controller-definition.js';
import { certificateCaches } from './certificate-caches.js';
import {
  CERTIFICATE_RETRY,
  type CertificateControllersConfig,
} from './certificate-controllers-config.js';
import { deleteRequests } from './request-manager-controller.js';
import { requestsToPrune } from './revision-pruning.js';

/** cert-manager's revisionmanager: a Ready Certificate keeps revisionHistoryLimit requests. */
export const revisionManagerController = defineController<CertificateControllersConfig>({
  name: 'certificates-revision-manager',
  retry: CERTIFICATE_RETRY,
  setup({ store, informers }) {
    const caches = certificateCaches(informers);
    const { watches } = caches;
    return {
      watches: [watches.certificates, watches.ownedRequests],
      async sync(key) {
        const certificate = caches.live(key);
        if (!certificate) return undefined;
        await deleteRequests(
          store,
          requestsToPrune(certificate, caches.ownedRequests(certificate)),
        );
        return undefined;
      },
    };
  },
});
