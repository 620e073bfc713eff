import { observedGenerationOf, setCondition } from '../api/conditions.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../api/issuer.js';
import { objectKey, type ResourceKind } from '../api/meta.js';
import { type Secret, SecretKind } from '../api/secret.js';
import type { ErrorKind } from '../base/error-catalogue.js';
import {
  type ControllerDefinition,
  defineController,
  keyOf,
  watchInformer,
} from '../controller/controller-definition.js';
import { writeStatusIfChanged } from '../controller/status-writer.js';
import { issuersByCASecret } from './indexes.js';
import { resourceNamespaceOf } from './issuer-lookup.js';
import { issuerReadiness } from './issuer-readiness.js';
import type { IssuerStackConfig } from './stack-config.js';

/** Thrown to have the work queue retry an issuer with backoff. */
export class IssuerNotReadyError extends Error {
  get errorKind(): ErrorKind {
    return 'CERT_CSI_ISSUER_NOT_READY';
  }
}

/**
 * The readiness controller of one issuer kind (cert-manager's `issuers` and `clusterissuers`):
 * the Ready condition from the issuer's setup check, rechecked when its CA Secret changes.
 */
function issuerReadinessController(
  name: string,
  kind: ResourceKind,
): ControllerDefinition<IssuerStackConfig> {
  return defineController<IssuerStackConfig>({
    name,
    setup({ store, informers, events, now, config }) {
      const issuers = informers.informer<Issuer>(kind);
      const secrets = informers.informer<Secret>(SecretKind);
      issuers.addIndex(issuersByCASecret);
      const clusterScoped = !kind.namespaced;
      // A Secret change (deletion too) rechecks the issuers whose CA it holds.
      const issuersOfSecret = (secret: Secret) => {
        const { namespace, name: secretName } = secret.metadata;
        if (clusterScoped && namespace !== config.clusterResourceNamespace) return [];
        const value = clusterScoped ? secretName : objectKey(namespace, secretName);
        return issuers.byIndex(issuersByCASecret, value).map(keyOf);
      };
      return {
        watches: [
          watchInformer(issuers),
          watchInformer(secrets, issuersOfSecret, { deletes: true }),
        ],
        async sync(key) {
          const issuer = issuers.getByKey(key);
          if (!issuer || issuer.metadata.deletionTimestamp) return undefined;
          const namespace = resourceNamespaceOf(issuer, config.clusterResourceNamespace);
          const readiness = issuerReadiness(issuer, (secretName) =>
            secrets.get(secretName, namespace),
          );
          if (!readiness) return undefined;
          const conditions = setCondition(
            issuer.status?.conditions,
            {
              ...readiness.condition,
              ...observedGenerationOf(issuer),
            },
            now(),
          );
          const written = await writeStatusIfChanged(store, kind, issuer, {
            ...issuer.status,
            conditions,
          });
          const { event } = readiness;
          if (written && event) events.event(issuer, event.type, event.reason, event.message);
          if (readiness.retry) {
            throw new IssuerNotReadyError(`${key}: ${readiness.condition.message}`);
          }
          return undefined;
        },
      };
    },
  });
}

/** Ready conditions of Issuers. */
export const issuersController = issuerReadinessController('issuers', IssuerKind);

/** Ready conditions of ClusterIssuers. */
export const clusterIssuersController = issuerReadinessController(
  'clusterissuers',
  ClusterIssuerKind,
);
