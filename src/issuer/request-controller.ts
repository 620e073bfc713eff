import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import type { EventRecorder } from '../api/event.js';
import type { Issuer } from '../api/issuer.js';
import { defaultIssuerRef } from '../api/issuer-ref.js';
import type { Logger } from '../api/logger.js';
import type { Secret } from '../api/secret.js';
import { isStoreError } from '../store/errors.js';
import type { Informer } from '../store/informer.js';
import type { ResourceStore } from '../store/resource-store.js';
import { getByKey } from './cache-lookup.js';
import { type IssuerLookup, issuerNotFoundError, planRequestSync } from './request-plan.js';
import {
  deniedStatus,
  failedStatus,
  ISSUED_MESSAGE,
  issuedStatus,
  pendingStatus,
  type StatusChange,
} from './request-status.js';
import type { SignContext, Signer } from './signer.js';

export interface RequestControllerDeps {
  store: ResourceStore;
  requests: Informer<CertificateRequest>;
  issuers: Informer<Issuer>;
  clusterIssuers: Informer<Issuer>;
  secrets: Informer<Secret>;
  /** Signers by issuer type key (`ca`, `selfSigned`). */
  signers: ReadonlyMap<string, Signer>;
  clusterResourceNamespace: string;
  events: EventRecorder;
  logger: Logger;
  now: () => Date;
  privateKeyFor?: SignContext['privateKeyFor'];
}

/** The issuer a request names, from the caches. */
export function lookupIssuer(
  deps: RequestControllerDeps,
  request: CertificateRequest,
): IssuerLookup {
  const ref = defaultIssuerRef(request.spec.issuerRef);
  const issuer =
    ref.kind === 'ClusterIssuer'
      ? deps.clusterIssuers.get(ref.name)
      : deps.issuers.get(ref.name, request.metadata.namespace);
  return issuer ? { issuer } : { notFound: issuerNotFoundError(ref.kind, ref.name) };
}

/** Where an issuer's Secrets live. */
export function resourceNamespaceOf(issuer: Issuer, clusterResourceNamespace: string): string {
  return issuer.kind === 'ClusterIssuer'
    ? clusterResourceNamespace
    : (issuer.metadata.namespace ?? clusterResourceNamespace);
}

/** Syncs one CertificateRequest, by cache key: cert-manager's generic CR controller. */
export async function syncRequest(deps: RequestControllerDeps, key: string): Promise<void> {
  const request = getByKey(deps.requests, key);
  if (!request || request.metadata.deletionTimestamp) return;
  const now = deps.now();
  const plan = planRequestSync(
    request,
    () => lookupIssuer(deps, request),
    (type) => deps.signers.has(type),
  );
  const log = deps.logger.child({ request: key });
  switch (plan.step) {
    case 'ignore':
      return;
    case 'deny':
      await writeStatus(deps, request, deniedStatus(request, now));
      return;
    case 'waitForApproval':
      deps.events.event(
        request,
        'Normal',
        'WaitingForApproval',
        'Not signing CertificateRequest until it is Approved',
      );
      return;
    case 'pending': {
      const change = pendingStatus(request, plan.message, now);
      if (await writeStatus(deps, request, change)) {
        deps.events.event(request, 'Normal', plan.reason, plan.message);
      }
      return;
    }
    case 'sign': {
      const signer = deps.signers.get(plan.issuerType);
      /* c8 ignore next */
      if (!signer) return;
      const context: SignContext = {
        secret: (namespace, name) => deps.secrets.get(name, namespace),
        resourceNamespace: (issuer) => resourceNamespaceOf(issuer, deps.clusterResourceNamespace),
        events: deps.events,
        now,
        ...(deps.privateKeyFor ? { privateKeyFor: deps.privateKeyFor } : {}),
      };
      const outcome = await signer(request, plan.issuer, context);
      if (outcome.outcome === 'issued') {
        const change = issuedStatus(request, outcome.certificatePem, outcome.caPem, now);
        if (await writeStatus(deps, request, change)) {
          deps.events.event(request, 'Normal', 'CertificateIssued', ISSUED_MESSAGE);
          log.info({ issuer: plan.issuer.metadata.name }, 'certificate issued');
        }
      } else if (outcome.outcome === 'pending') {
        const change = pendingStatus(request, outcome.message, now);
        if (await writeStatus(deps, request, change)) {
          deps.events.event(request, 'Normal', outcome.reason, outcome.message);
        }
      } else {
        const change = failedStatus(request, outcome.message, now);
        if (await writeStatus(deps, request, change)) {
          deps.events.event(request, 'Warning', outcome.reason, outcome.message);
          log.warn({ reason: outcome.reason }, outcome.message);
        }
      }
      return;
    }
  }
}

/**
 * Writes the new status when it differs. Returns true when the change was written and
 * deserves its event. NotFound means the request was deleted meanwhile; a Conflict is
 * thrown so the queue retries, and the informer's newer copy usually requeues it first.
 */
async function writeStatus(
  deps: RequestControllerDeps,
  request: CertificateRequest,
  change: StatusChange,
): Promise<boolean> {
  if (JSON.stringify(change.status) === JSON.stringify(request.status ?? {})) return false;
  try {
    await deps.store.updateStatus(CertificateRequestKind, { ...request, status: change.status });
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return false;
    throw err;
  }
  return change.announce;
}
