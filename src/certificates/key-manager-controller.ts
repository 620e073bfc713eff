import type { KeyObject } from 'node:crypto';
import {
  type Certificate,
  CertificateCondition,
  CertificateKind,
  MANAGED_SECRET_LABEL,
  NEXT_PRIVATE_KEY_LABEL,
} from '../api/certificate.js';
import { isConditionTrue } from '../api/conditions.js';
import { apiVersionOf } from '../api/meta.js';
import { type Secret, SecretKind, TLS_PRIVATE_KEY_KEY } from '../api/secret.js';
import { defineController } from '../controller/controller-definition.js';
import { writeStatusIfChanged } from '../controller/status-writer.js';
import { encodePrivateKey, generatePrivateKey } from '../pki/keys.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';
import { certificateCaches } from './certificate-caches.js';
import {
  CERTIFICATE_RETRY,
  type CertificateControllersConfig,
} from './certificate-controllers-config.js';
import { keyStoredEvent, nextKeyPlan } from './next-key-plan.js';
import { rememberKeyPem } from './pem-decodings.js';

/** Keys generated at once. */
const KEY_GENERATION_WORKERS = 4;

/** Deletes Secrets, ignoring those already gone. */
export async function deleteSecrets(
  store: ResourceStore,
  secrets: readonly Secret[],
): Promise<void> {
  for (const secret of secrets) {
    try {
      await store.delete(SecretKind, secret.metadata.name, secret.metadata.namespace);
    } catch (err) {
      if (!isStoreError(err, 'NotFound')) throw err;
    }
  }
}

/** The next-private-key Secret of a Certificate: PKCS#8, labelled, controlled by it. */
function nextKeySecret(certificate: Certificate, key: KeyObject): Secret {
  const { name, namespace, uid } = certificate.metadata;
  const fixed = certificate.status?.nextPrivateKeySecretName;
  const pem = encodePrivateKey(key, 'PKCS8');
  // The request-manager and the issuing controller read the key back from the Secret.
  rememberKeyPem(pem, key);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...(fixed ? { name: fixed } : { name: '', generateName: `${name}-` }),
      ...(namespace ? { namespace } : {}),
      labels: { [NEXT_PRIVATE_KEY_LABEL]: 'true', [MANAGED_SECRET_LABEL]: 'true' },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(CertificateKind),
          kind: CertificateKind.kind,
          name,
          uid: uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: {
      [TLS_PRIVATE_KEY_KEY]: Buffer.from(pem).toString('base64'),
    },
  };
}

/**
 * cert-manager's keymanager controller: while a Certificate is issuing, exactly one
 * next-private-key Secret, named in status.nextPrivateKeySecretName; none otherwise.
 */
export const keyManagerController = defineController<CertificateControllersConfig>({
  name: 'certificates-key-manager',
  retry: CERTIFICATE_RETRY,
  // Key generation runs off the event loop (RSA takes a few hundred ms): several at once use
  // every core. One Certificate is never synced twice at once.
  workers: () => KEY_GENERATION_WORKERS,
  setup({ store, informers, events, logger }) {
    const caches = certificateCaches(informers);
    const { watches } = caches;
    const writeName = (certificate: Certificate, name: string | undefined) => {
      const { nextPrivateKeySecretName: _old, ...status } = certificate.status ?? {};
      return writeStatusIfChanged(store, CertificateKind, certificate, {
        ...status,
        ...(name !== undefined ? { nextPrivateKeySecretName: name } : {}),
      });
    };
    return {
      watches: [watches.certificates, watches.ownedSecrets, watches.namedSecrets],
      async sync(key) {
        const certificate = caches.live(key);
        if (!certificate || caches.specErrors(certificate).length > 0) return undefined;
        const owned = caches.ownedNextKeySecrets(certificate).map((secret) => ({
          secret,
          key: caches.storedKey(secret),
        }));
        const rotation = certificate.spec.privateKey?.rotationPolicy;
        const plan = nextKeyPlan({
          certificate,
          owned,
          current:
            rotation === 'Never' ? caches.storedKey(caches.secretOf(certificate)) : undefined,
        });
        for (const event of 'events' in plan ? (plan.events ?? []) : [])
          events.event(certificate, event.type, event.reason, event.message);
        switch (plan.action) {
          case 'none':
            return undefined;
          case 'clean-up':
            await deleteSecrets(store, plan.remove);
            if (plan.clearStatusName) await writeName(certificate, undefined);
            return undefined;
          case 'remove':
            await deleteSecrets(store, plan.remove);
            return undefined;
          case 'adopt':
            await writeName(certificate, plan.name);
            return undefined;
          case 'create': {
            const reused = plan.key !== 'generate';
            const privateKey =
              plan.key === 'generate'
                ? await generatePrivateKey({
                    algorithm: certificate.spec.privateKey?.algorithm ?? 'RSA',
                    ...(certificate.spec.privateKey?.size !== undefined
                      ? { size: certificate.spec.privateKey.size }
                      : {}),
                  })
                : plan.key;
            // The cache may be behind: a Secret for a Certificate already gone, or no longer
            // issuing, would only be deleted again.
            const fresh = await store
              .get<Certificate>(
                CertificateKind,
                certificate.metadata.name,
                certificate.metadata.namespace,
              )
              .catch((err: unknown) => {
                if (isStoreError(err, 'NotFound')) return undefined;
                throw err;
              });
            if (
              !fresh ||
              fresh.metadata.uid !== certificate.metadata.uid ||
              !isConditionTrue(fresh.status?.conditions, CertificateCondition.Issuing)
            )
              return undefined;
            const created = await store.create(SecretKind, nextKeySecret(fresh, privateKey));
            const event = keyStoredEvent(
              reused,
              reused ? certificate.spec.secretName : created.metadata.name,
            );
            events.event(certificate, event.type, event.reason, event.message);
            logger.debug({ key, secret: created.metadata.name }, 'stored the next private key');
            // A conflict leaves the Secret unnamed in the status: the next sync adopts it.
            await writeName(fresh, created.metadata.name);
            return undefined;
          }
        }
      },
    };
  },
});
