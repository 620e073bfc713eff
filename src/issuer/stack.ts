import type { KeyObject } from 'node:crypto';
import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import { discardEvents, type EventRecorder } from '../api/event.js';
import { ClusterIssuerKind, type Issuer, IssuerKind, issuerTypeOf } from '../api/issuer.js';
import { defaultIssuerRef, isCertManagerGroup } from '../api/issuer-ref.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../api/labels.js';
import { type Logger, silentLogger } from '../api/logger.js';
import { type KubeObject, objectKey } from '../api/meta.js';
import { type Secret, SecretKind } from '../api/secret.js';
import { type Clock, systemClock } from '../base/clock.js';
import { isStoreError } from '../store/errors.js';
import { Informer } from '../store/informer.js';
import type { ResourceStore } from '../store/resource-store.js';
import { WorkQueue } from '../store/work-queue.js';
import { type ApprovalPolicy, approveEveryRequest } from './approval-policy.js';
import { syncApproval } from './approver-controller.js';
import { createCASigner } from './ca-signer.js';
import { getByKey } from './cache-lookup.js';
import { syncIssuer } from './issuer-controller.js';
import {
  lookupIssuer,
  type RequestControllerDeps,
  resourceNamespaceOf,
  syncRequest,
} from './request-controller.js';
import { signSelfSigned } from './self-signed-signer.js';
import type { Signer } from './signer.js';

export interface IssuerStackOptions {
  store: ResourceStore;
  /** Namespace of ClusterIssuer Secrets; cert-manager's default is kube-system. */
  clusterResourceNamespace?: string;
  /** The approval policy, or false to leave approval to another approver. */
  approval?: ApprovalPolicy | false;
  events?: EventRecorder;
  logger?: Logger;
  clock?: Clock;
  /** Concurrent signings; each is mostly asynchronous WebCrypto work. */
  signingWorkers?: number;
  /** Per-item retry backoff of every controller (cert-manager: 5 s doubling up to 5 min). */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** Keys held in this process for in-flight requests (embedded SelfSigned). */
  privateKeyFor?: (namespace: string, name: string) => KeyObject | undefined;
  /**
   * Touch (approve, sign, mark pending or denied) only requests whose issuer exists and is
   * a CA or SelfSigned issuer, so cert-manager can run beside us for other issuer types.
   */
  ownIssuerTypesOnly?: boolean;
  /** Aborting it before the caches are synced makes the start give up (reject). */
  signal?: AbortSignal;
}

/** A running controller stack. */
export interface IssuerStack {
  /** Stops every controller and informer; resolves when in-flight syncs ended. */
  stop(): Promise<void>;
}

export const DEFAULT_CLUSTER_RESOURCE_NAMESPACE = 'kube-system';

/**
 * Starts the approver, the CertificateRequest controller for CA and SelfSigned issuers,
 * and the Issuer and ClusterIssuer readiness controllers over any ResourceStore.
 * Resolves once every cache is synced and the controllers are running.
 */
export async function startIssuerStack(options: IssuerStackOptions): Promise<IssuerStack> {
  const store = options.store;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const events = options.events ?? discardEvents;
  const clusterResourceNamespace =
    options.clusterResourceNamespace ?? DEFAULT_CLUSTER_RESOURCE_NAMESPACE;
  const now = () => new Date(clock.now());
  const queueOptions = {
    baseDelayMs: options.retryBaseDelayMs ?? 5_000,
    maxDelayMs: options.retryMaxDelayMs ?? 300_000,
    clock,
  };

  const requests = new Informer<CertificateRequest>(store, CertificateRequestKind, { clock });
  const issuers = new Informer<Issuer>(store, IssuerKind, { clock });
  const clusterIssuers = new Informer<Issuer>(store, ClusterIssuerKind, { clock });
  const secrets = new Informer<Secret>(store, SecretKind, { clock });
  const informers = [requests, issuers, clusterIssuers, secrets];

  const approverQueue = new WorkQueue<string>(queueOptions);
  const requestQueue = new WorkQueue<string>(queueOptions);
  const issuerQueue = new WorkQueue<string>(queueOptions);
  const clusterIssuerQueue = new WorkQueue<string>(queueOptions);
  const queues = [approverQueue, requestQueue, issuerQueue, clusterIssuerQueue];

  const keyOf = (obj: KubeObject) => objectKey(obj.metadata.namespace, obj.metadata.name);
  const baseApproval = options.approval ?? approveEveryRequest;
  // Filled in once the informers exist: whether a request's issuer is ours to handle.
  let isOwnRequest: (request: CertificateRequest) => boolean = () => true;
  const approval: ApprovalPolicy | false =
    baseApproval && options.ownIssuerTypesOnly
      ? (request) => (isOwnRequest(request) ? baseApproval(request) : { decision: 'abstain' })
      : baseApproval;

  const onRequest = (request: CertificateRequest) => {
    if (approval) approverQueue.add(keyOf(request));
    requestQueue.add(keyOf(request));
  };
  requests.on('add', onRequest);
  requests.on('update', (_old, request) => onRequest(request));

  // An issuer change requeues every request that names it (reference §2.2).
  const requeueRequestsOf = (issuer: Issuer) => {
    for (const request of requests.list()) {
      const ref = defaultIssuerRef(request.spec.issuerRef);
      const matches =
        issuer.kind === 'ClusterIssuer'
          ? ref.kind === 'ClusterIssuer' && ref.name === issuer.metadata.name
          : ref.kind === 'Issuer' &&
            ref.name === issuer.metadata.name &&
            request.metadata.namespace === issuer.metadata.namespace;
      if (matches) {
        requestQueue.add(keyOf(request));
        // A request that waited for its issuer to appear may now be ours to approve.
        if (approval) approverQueue.add(keyOf(request));
      }
    }
  };
  for (const [informer, queue] of [
    [issuers, issuerQueue],
    [clusterIssuers, clusterIssuerQueue],
  ] as const) {
    informer.on('add', (issuer) => {
      queue.add(keyOf(issuer));
      requeueRequestsOf(issuer);
    });
    informer.on('update', (_old, issuer) => {
      queue.add(keyOf(issuer));
      requeueRequestsOf(issuer);
    });
  }

  // A Secret change requeues the issuers whose CA it holds and the SelfSigned
  // requests whose key it holds.
  const onSecret = (secret: Secret) => {
    const namespace = secret.metadata.namespace;
    for (const [informer, queue] of [
      [issuers, issuerQueue],
      [clusterIssuers, clusterIssuerQueue],
    ] as const) {
      for (const issuer of informer.list()) {
        if (
          issuer.spec.ca?.secretName === secret.metadata.name &&
          resourceNamespaceOf(issuer, clusterResourceNamespace) === namespace
        ) {
          queue.add(keyOf(issuer));
        }
      }
    }
    for (const request of requests.list(namespace)) {
      if (
        request.metadata.annotations?.[PRIVATE_KEY_SECRET_NAME_ANNOTATION] === secret.metadata.name
      ) {
        requestQueue.add(keyOf(request));
      }
    }
  };
  secrets.on('add', onSecret);
  secrets.on('update', (_old, secret) => onSecret(secret));
  secrets.on('delete', onSecret);

  for (const informer of informers) informer.start();
  // A cache that cannot sync (API down, RBAC missing) retries forever; let the caller stop.
  const giveUp = () => {
    for (const informer of informers) informer.stop();
  };
  options.signal?.addEventListener('abort', giveUp, { once: true });
  try {
    if (options.signal?.aborted) giveUp();
    await Promise.all(informers.map((informer) => informer.waitForSync()));
  } finally {
    options.signal?.removeEventListener('abort', giveUp);
  }

  const signers = new Map<string, Signer>([
    ['ca', createCASigner()],
    ['selfSigned', signSelfSigned],
  ]);
  if (options.ownIssuerTypesOnly) {
    isOwnRequest = (request) => {
      if (!isCertManagerGroup(request.spec.issuerRef)) return false;
      const found = lookupIssuer(requestDeps, request);
      const type = 'issuer' in found ? issuerTypeOf(found.issuer) : undefined;
      return type !== undefined && signers.has(type);
    };
  }
  const requestDeps: RequestControllerDeps = {
    store,
    requests,
    issuers,
    clusterIssuers,
    secrets,
    signers,
    clusterResourceNamespace,
    events,
    logger: logger.child({ controller: 'certificaterequests-issuer' }),
    now,
    ...(options.privateKeyFor ? { privateKeyFor: options.privateKeyFor } : {}),
  };
  const issuerDeps = (kind: typeof IssuerKind, informer: Informer<Issuer>, name: string) => ({
    store,
    kind,
    issuers: informer,
    secrets,
    clusterResourceNamespace,
    events,
    logger: logger.child({ controller: name }),
    now,
  });
  const issuerSync = issuerDeps(IssuerKind, issuers, 'issuers');
  const clusterIssuerSync = issuerDeps(ClusterIssuerKind, clusterIssuers, 'clusterissuers');
  // A failed sync is retried with backoff by the queue; log it so the cause is visible.
  const logged =
    (controller: string, sync: (key: string) => Promise<void>) => async (key: string) => {
      try {
        await sync(key);
      } catch (err) {
        // A conflict only means the cache was behind; it is routine, not a warning.
        const level = isStoreError(err, 'Conflict') ? 'debug' : 'warn';
        logger[level]({ controller, key, err: String(err) }, 'sync failed, will retry');
        throw err;
      }
    };
  const runs = [
    requestQueue.run(
      logged('certificaterequests-issuer', async (key) => {
        const request = getByKey(requests, key);
        if (request && !isOwnRequest(request)) return;
        await syncRequest(requestDeps, key);
      }),
      options.signingWorkers ?? 4,
    ),
    issuerQueue.run(logged('issuers', (key) => syncIssuer(issuerSync, key))),
    clusterIssuerQueue.run(logged('clusterissuers', (key) => syncIssuer(clusterIssuerSync, key))),
  ];
  if (approval) {
    const approverDeps = {
      store,
      requests,
      policy: approval,
      events,
      logger: logger.child({ controller: 'certificaterequests-approver' }),
      now,
    };
    runs.push(
      approverQueue.run(
        logged('certificaterequests-approver', (key) => syncApproval(approverDeps, key)),
      ),
    );
  }
  logger.info({ clusterResourceNamespace, approval: Boolean(approval) }, 'issuer stack started');

  return {
    async stop() {
      for (const queue of queues) queue.shutDown();
      for (const informer of informers) informer.stop();
      await Promise.all(runs);
    },
  };
}
