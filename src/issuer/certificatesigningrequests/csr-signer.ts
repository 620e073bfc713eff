import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
  type CertificateSigningRequestStatus,
} from '../../api/certificate-signing-request.js';
import { type Issuer, type IssuerType, issuerTypeOf } from '../../api/issuer.js';
import { type Secret, SecretKind } from '../../api/secret.js';
import {
  type ControllerDefinition,
  type ControllerWatch,
  defineController,
  keyOf,
  watchInformer,
} from '../../controller/controller-definition.js';
import { RecentWrites } from '../../controller/recent-writes.js';
import { isStoreError } from '../../store/errors.js';
import type { SignerScope } from '../certificaterequests/request-plan.js';
import { csrsByIssuer, csrsByKeySecretName } from '../indexes.js';
import { issuerCaches, issuerIndexValue, resourceNamespaceOf } from '../issuer-lookup.js';
import { isOwnIssuerType } from '../issuer-signers.js';
import type { IssuerStackConfig } from '../stack-config.js';
import { csrResult } from './csr-outcome.js';
import {
  type CsrIssuerRef,
  type CsrPlan,
  csrIssuerRef,
  deniedReference,
  planCsrSync,
  WAITING_APPROVAL_MESSAGE,
} from './csr-plan.js';
import { mayReference } from './csr-reference.js';
import { csrSigningInput } from './csr-signing.js';
import { failedCsrStatus, issuedCsrStatus } from './csr-status.js';

/** One of cert-manager's CSR signer controllers: its name and the issuer type it signs for. */
interface CsrSignerKind {
  name: string;
  issuerType: IssuerType;
}

const CA: CsrSignerKind = { name: 'certificatesigningrequests-issuer-ca', issuerType: 'ca' };
const SELF_SIGNED: CsrSignerKind = {
  name: 'certificatesigningrequests-issuer-selfsigned',
  issuerType: 'selfSigned',
};
/** The CSR signers of the issuer types this stack signs for, in order. */
const CSR_SIGNERS: readonly CsrSignerKind[] = [CA, SELF_SIGNED];

/**
 * cert-manager's CertificateSigningRequest controller for one issuer type: signs approved CSRs
 * whose signer name designates an issuer of that type,
 * after the requester's `reference` review for namespaced Issuers. It watches CSRs, the issuers
 * they name (an issuer change requeues its CSRs, found through an index) and, for SelfSigned,
 * the key Secrets. A Failed condition is final: a failed CSR is never looked at again.
 */
function csrSigner({ name, issuerType }: CsrSignerKind): ControllerDefinition<IssuerStackConfig> {
  return defineController<IssuerStackConfig>({
    name,
    workers: (config) => config.signingWorkers,
    setup({ store, informers, events, logger, now, config, enabled }) {
      const csrs = informers.informer<CertificateSigningRequest>(CertificateSigningRequestKind);
      const { issuers, clusterIssuers } = issuerCaches(informers);
      const secrets = informers.informer<Secret>(SecretKind);
      csrs.addIndex(csrsByIssuer);
      const written = new RecentWrites<CertificateSigningRequest>();
      const running = CSR_SIGNERS.filter((signer) => enabled.has(signer.name));
      const scope: SignerScope = {
        handles: (type) => type === issuerType,
        // CSRs of types no running signer handles (or of no issuer) fall to the first one.
        responsibleFor: (type) =>
          type === issuerType ||
          (running[0]?.name === name && !running.some((signer) => signer.issuerType === type)),
      };
      const lookup = (ref: CsrIssuerRef): Issuer | undefined =>
        ref.kind === 'ClusterIssuer'
          ? clusterIssuers.get(ref.name)
          : issuers.get(ref.name, ref.namespace);
      const issuerOf = (csr: CertificateSigningRequest) => {
        const ref = csrIssuerRef(csr.spec.signerName);
        return ref && lookup(ref);
      };
      // Beside other issuers' controllers, only CSRs of an existing CA or SelfSigned issuer.
      const isOwn = (csr: CertificateSigningRequest) => {
        const issuer = issuerOf(csr);
        return issuer !== undefined && isOwnIssuerType(issuerTypeOf(issuer));
      };
      const csrsOf = (kind: 'Issuer' | 'ClusterIssuer') => (issuer: Issuer) =>
        csrs
          .byIndex(
            csrsByIssuer,
            issuerIndexValue(kind, issuer.metadata.name, issuer.metadata.namespace),
          )
          .map(keyOf);
      const watches: ControllerWatch[] = [
        watchInformer(csrs),
        watchInformer(issuers, csrsOf('Issuer')),
        watchInformer(clusterIssuers, csrsOf('ClusterIssuer')),
        // A CSR deleted and created again under its name must not be answered by the last write.
        { subscribe: () => csrs.on('delete', (csr) => written.deleted(keyOf(csr), csr)) },
      ];
      if (issuerType === 'selfSigned') {
        csrs.addIndex(csrsByKeySecretName);
        // A key Secret appearing or changing requeues the CSRs that name it in its namespace.
        const csrsOfSecret = (secret: Secret) =>
          csrs
            .byIndex(csrsByKeySecretName, secret.metadata.name)
            .filter((csr) => {
              const issuer = issuerOf(csr);
              return (
                issuer !== undefined &&
                resourceNamespaceOf(issuer, config.clusterResourceNamespace) ===
                  secret.metadata.namespace
              );
            })
            .map(keyOf);
        watches.push(watchInformer(secrets, csrsOfSecret));
      }
      const signer = config.signers.get(issuerType);

      // Deleted meanwhile: nothing left to answer. A Conflict is thrown on to be retried.
      const write = async (
        csr: CertificateSigningRequest,
        status: CertificateSigningRequestStatus,
      ) => {
        const key = keyOf(csr);
        try {
          const stored = await store.updateStatus(CertificateSigningRequestKind, {
            ...csr,
            status,
          });
          written.remember(key, stored);
          return true;
        } catch (err) {
          if (!isStoreError(err, 'NotFound')) throw err;
          written.forget(key);
          return false;
        }
      };
      const fail = async (csr: CertificateSigningRequest, reason: string, message: string) => {
        if (await write(csr, failedCsrStatus(csr, reason, message, now()))) {
          events.event(csr, 'Warning', reason, message);
          logger.warn({ csr: csr.metadata.name, reason }, message);
        }
      };

      return {
        watches,
        async sync(key) {
          // A write the cache has not caught up with is final (Failed or issued): the plan
          // then ignores the CSR, deleted meanwhile or not.
          const csr = written.latest(key, csrs.getByKey(key));
          if (!csr || (config.ownIssuerTypesOnly && !isOwn(csr))) return undefined;
          let plan: CsrPlan = planCsrSync(csr, lookup, scope);
          if (plan.step === 'reviewReference') {
            plan = (await mayReference(config.accessReviewer, csr, plan.issuer))
              ? plan.afterReview
              : deniedReference(plan.issuer);
          }
          switch (plan.step) {
            case 'ignore':
              return undefined;
            case 'waitForApproval':
              events.event(csr, 'Normal', 'WaitingApproval', WAITING_APPROVAL_MESSAGE);
              return undefined;
            case 'warn':
              events.event(csr, 'Warning', plan.reason, plan.message);
              return undefined;
            case 'fail':
              await fail(csr, plan.reason, plan.message);
              return undefined;
            case 'sign':
              break;
          }
          /* c8 ignore next */
          if (!signer) return undefined;
          const at = now();
          const signed = await signer(
            plan.issuer,
            csrSigningInput(csr, {
              durationMs: plan.durationMs,
              isCA: plan.isCA,
              keyNamespace: resourceNamespaceOf(plan.issuer, config.clusterResourceNamespace),
            }),
            {
              secret: (namespace, secretName) => secrets.get(secretName, namespace),
              resourceNamespace: (issuer) =>
                resourceNamespaceOf(issuer, config.clusterResourceNamespace),
              now: at,
            },
          );
          const result = csrResult(issuerType, signed);
          if (result.outcome === 'wait') {
            events.event(csr, 'Warning', result.reason, result.message);
          } else if (result.outcome === 'failed') {
            await fail(csr, result.reason, result.message);
          } else if (await write(csr, issuedCsrStatus(csr, result.chainPem))) {
            events.event(csr, 'Normal', 'CertificateIssued', result.message);
            logger.info(
              { csr: csr.metadata.name, issuer: plan.issuer.metadata.name },
              'certificate issued',
            );
          }
          return undefined;
        },
      };
    },
  });
}

/** cert-manager's `certificatesigningrequests-issuer-ca`. */
export const caCsrSigner = csrSigner(CA);

/** cert-manager's `certificatesigningrequests-issuer-selfsigned`. */
export const selfSignedCsrSigner = csrSigner(SELF_SIGNED);
