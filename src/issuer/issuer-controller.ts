import { setCondition } from '../api/conditions.js';
import type { EventRecorder } from '../api/event.js';
import type { Issuer } from '../api/issuer.js';
import type { Logger } from '../api/logger.js';
import type { ResourceKind } from '../api/meta.js';
import type { Secret } from '../api/secret.js';
import { isStoreError } from '../store/errors.js';
import type { Informer } from '../store/informer.js';
import type { ResourceStore } from '../store/resource-store.js';
import { getByKey } from './cache-lookup.js';
import { issuerReadiness } from './issuer-setup.js';
import { resourceNamespaceOf } from './request-controller.js';

export interface IssuerControllerDeps {
  store: ResourceStore;
  kind: ResourceKind;
  issuers: Informer<Issuer>;
  secrets: Informer<Secret>;
  clusterResourceNamespace: string;
  events: EventRecorder;
  logger: Logger;
  now: () => Date;
}

/** Thrown to have the work queue retry an issuer with backoff. */
export class IssuerNotReadyError extends Error {}

/** Syncs the Ready condition of one Issuer or ClusterIssuer, by cache key. */
export async function syncIssuer(deps: IssuerControllerDeps, key: string): Promise<void> {
  const issuer = getByKey(deps.issuers, key);
  if (!issuer || issuer.metadata.deletionTimestamp) return;
  const namespace = resourceNamespaceOf(issuer, deps.clusterResourceNamespace);
  const readiness = issuerReadiness(issuer, (name) => deps.secrets.get(name, namespace));
  if (!readiness) return;
  const conditions = setCondition(
    issuer.status?.conditions,
    {
      ...readiness.condition,
      ...(issuer.metadata.generation !== undefined
        ? { observedGeneration: issuer.metadata.generation }
        : {}),
    },
    deps.now(),
  );
  const changed = JSON.stringify(conditions) !== JSON.stringify(issuer.status?.conditions ?? []);
  if (changed) {
    try {
      await deps.store.updateStatus(deps.kind, {
        ...issuer,
        status: { ...issuer.status, conditions },
      });
    } catch (err) {
      if (isStoreError(err, 'NotFound')) return;
      throw err;
    }
    const { event } = readiness;
    if (event) deps.events.event(issuer, event.type, event.reason, event.message);
  }
  if (readiness.retry) {
    throw new IssuerNotReadyError(`${key}: ${readiness.condition.message}`);
  }
}
