import {
  type CertificateRequest,
  CertificateRequestKind,
  CRCondition,
} from '../../api/certificate-request.js';
import { setCondition } from '../../api/conditions.js';
import type { EventRecorder } from '../../api/event.js';
import type { IssuerType } from '../../api/issuer.js';
import type { Logger } from '../../api/logger.js';
import { type Secret, SecretKind } from '../../api/secret.js';
import type { SharedInformers } from '../../controller/shared-informers.js';
import type { MemoryStore } from '../../store/memory-store.js';
import { type IssuerLookup, resourceNamespaceOf } from '../issuer-lookup.js';
import type { IssuerStackConfig } from '../stack-config.js';
import {
  type ApprovalDecision,
  type ApprovalPolicy,
  approveEveryRequest,
  volumeCaDecision,
} from './approval-policy.js';
import { requestIssuers } from './request-issuers.js';
import { EMPTY_ISSUER_DN_WARNING, requestResult } from './request-outcome.js';
import { planRequestSync, type RequestPlan } from './request-plan.js';
import { signingInputOf } from './request-signing.js';
import { ISSUED_MESSAGE, issuedStatus } from './request-status.js';

/**
 * Signs a volume's CertificateRequest before it exists and creates it already Approved and
 * Issued, in one store write; undefined when the request must take the controllers' path (it
 * is then created as usual and nothing was written).
 */
export type LocalIssuer = (request: CertificateRequest) => Promise<CertificateRequest | undefined>;

/** The controllers the local issuance stands in for: the approver and each signer by type. */
export const APPROVER_CONTROLLER = 'certificaterequests-approver';
const SIGNER_CONTROLLERS: Readonly<Record<string, string>> = {
  ca: 'certificaterequests-issuer-ca',
  selfSigned: 'certificaterequests-issuer-selfsigned',
};

/** What the local path decided for one request. */
export type LocalIssuancePlan =
  | {
      step: 'sign';
      approval: ApprovalDecision & { decision: 'approve' };
      plan: RequestPlan & { step: 'sign' };
    }
  | { step: 'controllers'; why: string };

/**
 * Whether a request may skip the controllers' queues: only when the approver and the signer
 * for its issuer run in this process, the approval policy is cert-manager's (approve every
 * request) and no rule of cert-csi's own denies it, and its issuer is a ready CA or SelfSigned
 * issuer, so the approver and the signer would record exactly what this path records. Pure:
 * the answer to "why did this request (not) take the fast path".
 */
export function planLocalIssuance(
  request: CertificateRequest,
  lookup: () => IssuerLookup,
  context: { approval: ApprovalPolicy; enabled: ReadonlySet<string> },
): LocalIssuancePlan {
  if (!context.enabled.has(APPROVER_CONTROLLER)) {
    return { step: 'controllers', why: 'the approver does not run here' };
  }
  if (context.approval !== approveEveryRequest) {
    return { step: 'controllers', why: 'approval is not automatic' };
  }
  if (volumeCaDecision(request, lookup) !== undefined) {
    return {
      step: 'controllers',
      why: 'a CA certificate for a volume is for the approver to deny',
    };
  }
  const approval = approveEveryRequest(request) as ApprovalDecision & { decision: 'approve' };
  const approved: CertificateRequest = {
    ...request,
    status: { conditions: [{ type: CRCondition.Approved, status: 'True' }] },
  };
  const plan = planRequestSync(approved, lookup, {
    handles: (type) => context.enabled.has(SIGNER_CONTROLLERS[type] ?? ''),
    responsibleFor: () => false,
  });
  if (plan.step !== 'sign') {
    return { step: 'controllers', why: 'no ready CA or SelfSigned issuer of a running signer' };
  }
  return { step: 'sign', approval, plan };
}

/** What the local issuance works with. */
export interface LocalIssuanceDeps {
  store: Pick<MemoryStore, 'createWithStatus'>;
  informers: SharedInformers;
  config: Pick<
    IssuerStackConfig,
    'approval' | 'signers' | 'privateKeyFor' | 'clusterResourceNamespace'
  >;
  /** The controllers running in this process (their `--controllers` names). */
  enabled: ReadonlySet<string>;
  events: EventRecorder;
  logger: Logger;
  now: () => Date;
}

/**
 * The embedded mode's fast path for its own issuers: what the approver and the signer controller
 * would write after two queue hops and two status writes, decided and signed at once. The
 * request is still a valid cert-manager CertificateRequest for anyone watching, with the same
 * conditions and Events; only the intermediate states (created, Approved) are never stored.
 */
export function localIssuer(deps: LocalIssuanceDeps): LocalIssuer {
  const { issuerOf } = requestIssuers(deps.informers);
  const secrets = deps.informers.informer<Secret>(SecretKind);
  return async (request) => {
    const decided = planLocalIssuance(request, () => issuerOf(request), {
      approval: deps.config.approval,
      enabled: deps.enabled,
    });
    if (decided.step !== 'sign') return undefined;
    const { approval, plan } = decided;
    const signer = deps.config.signers.get(plan.issuerType as IssuerType);
    // Every stack has a signer for each type it plans to sign (createIssuerSigners).
    /* c8 ignore next */
    if (!signer) return undefined;
    const at = deps.now();
    const approved: CertificateRequest = {
      ...request,
      status: {
        conditions: setCondition(
          undefined,
          {
            type: CRCondition.Approved,
            status: 'True',
            reason: approval.reason,
            message: approval.message,
          },
          at,
        ),
      },
    };
    const signed = await signer(plan.issuer, signingInputOf(approved, deps.config.privateKeyFor), {
      secret: (namespace, name) => secrets.get(name, namespace),
      resourceNamespace: (issuer) =>
        resourceNamespaceOf(issuer, deps.config.clusterResourceNamespace),
      now: at,
    });
    const result = requestResult(plan.issuerType as IssuerType, signed);
    // Pending or Failed: the controllers record it, with their retries and Events.
    if (result.outcome !== 'issued') return undefined;
    const { status } = issuedStatus(approved, result.certificatePem, result.caPem, at);
    const created = await deps.store.createWithStatus(CertificateRequestKind, {
      ...request,
      status,
    });
    deps.events.event(created, 'Normal', approval.reason, approval.message);
    if (signed.warnings?.includes('emptyIssuerDn')) {
      deps.events.event(created, 'Warning', 'BadConfig', EMPTY_ISSUER_DN_WARNING);
    }
    deps.events.event(created, 'Normal', 'CertificateIssued', ISSUED_MESSAGE);
    deps.logger.info(
      {
        request: `${created.metadata.namespace}/${created.metadata.name}`,
        issuer: plan.issuer.metadata.name,
      },
      'certificate issued',
    );
    return created;
  };
}
