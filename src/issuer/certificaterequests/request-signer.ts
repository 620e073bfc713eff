import { type CertificateRequest, CertificateRequestKind } from '../../api/certificate-request.js';
import type { IssuerType } from '../../api/issuer.js';
import { type Secret, SecretKind } from '../../api/secret.js';
import {
  type ControllerDefinition,
  defineController,
  keyOf,
  watchInformer,
} from '../../controller/controller-definition.js';
import { writeStatusIfChanged } from '../../controller/status-writer.js';
import { requestsByKeySecret } from '../indexes.js';
import { resourceNamespaceOf } from '../issuer-lookup.js';
import type { IssuerStackConfig } from '../stack-config.js';
import { requestIssuers } from './request-issuers.js';
import { EMPTY_ISSUER_DN_WARNING, requestResult } from './request-outcome.js';
import { planRequestSync, type SignerScope } from './request-plan.js';
import { signingInputOf } from './request-signing.js';
import {
  deniedStatus,
  failedStatus,
  ISSUED_MESSAGE,
  issuedStatus,
  pendingStatus,
  type StatusChange,
} from './request-status.js';

/** cert-manager's CertificateRequest controllers of the issuer types this stack signs for, in order. */
const REQUEST_SIGNERS: ReadonlyArray<{ name: string; issuerType: IssuerType }> = [
  { name: 'certificaterequests-issuer-ca', issuerType: 'ca' },
  { name: 'certificaterequests-issuer-selfsigned', issuerType: 'selfSigned' },
];

/**
 * cert-manager's generic CertificateRequest controller for one issuer type:
 * watches requests, the issuers they name (an issuer change requeues its requests, found
 * through an index) and, for SelfSigned, the key Secrets they name.
 */
function requestSigner(issuerType: IssuerType): ControllerDefinition<IssuerStackConfig> {
  const name = REQUEST_SIGNERS.find((signer) => signer.issuerType === issuerType)?.name ?? '';
  return defineController<IssuerStackConfig>({
    name,
    workers: (config) => config.signingWorkers,
    setup({ store, informers, events, logger, now, config, enabled }) {
      const { requests, issuerOf, isOwnRequest, issuerWatches } = requestIssuers(informers);
      const secrets = informers.informer<Secret>(SecretKind);
      const running = REQUEST_SIGNERS.filter((signer) => enabled.has(signer.name));
      const scope: SignerScope = {
        handles: (type) => type === issuerType,
        // Requests of types no running signer handles (or of no issuer) fall to the first one.
        responsibleFor: (type) =>
          type === issuerType ||
          (running[0]?.name === name && !running.some((signer) => signer.issuerType === type)),
      };
      const watches = [watchInformer(requests), ...issuerWatches];
      if (issuerType === 'selfSigned') {
        requests.addIndex(requestsByKeySecret);
        watches.push(
          watchInformer(
            secrets,
            (secret) => requests.byIndex(requestsByKeySecret, keyOf(secret)).map(keyOf),
            { deletes: true },
          ),
        );
      }
      const signer = config.signers.get(issuerType);

      const write = async (request: CertificateRequest, change: StatusChange) =>
        (await writeStatusIfChanged(store, CertificateRequestKind, request, change.status)) &&
        change.announce;

      return {
        watches,
        async sync(key) {
          const request = requests.getByKey(key);
          if (
            !request ||
            request.metadata.deletionTimestamp ||
            (config.ownIssuerTypesOnly && !isOwnRequest(request))
          ) {
            return undefined;
          }
          const plan = planRequestSync(request, () => issuerOf(request), scope);
          const at = now();
          switch (plan.step) {
            case 'ignore':
              return undefined;
            case 'deny':
              await write(request, deniedStatus(request, at));
              return undefined;
            case 'waitForApproval':
              events.event(
                request,
                'Normal',
                'WaitingForApproval',
                'Not signing CertificateRequest until it is Approved',
              );
              return undefined;
            case 'pending':
              if (await write(request, pendingStatus(request, plan.message, at))) {
                events.event(request, 'Normal', plan.reason, plan.message);
              }
              return undefined;
            case 'sign':
              break;
          }
          /* c8 ignore next */
          if (!signer) return undefined;
          const signed = await signer(plan.issuer, signingInputOf(request, config.privateKeyFor), {
            secret: (namespace, secretName) => secrets.get(secretName, namespace),
            resourceNamespace: (issuer) =>
              resourceNamespaceOf(issuer, config.clusterResourceNamespace),
            now: at,
          });
          if (signed.warnings?.includes('emptyIssuerDn')) {
            events.event(request, 'Warning', 'BadConfig', EMPTY_ISSUER_DN_WARNING);
          }
          const result = requestResult(issuerType, signed);
          if (result.outcome === 'issued') {
            const change = issuedStatus(request, result.certificatePem, result.caPem, at);
            if (await write(request, change)) {
              events.event(request, 'Normal', 'CertificateIssued', ISSUED_MESSAGE);
              logger.info(
                { request: key, issuer: plan.issuer.metadata.name },
                'certificate issued',
              );
            }
          } else if (result.outcome === 'pending') {
            if (await write(request, pendingStatus(request, result.message, at))) {
              events.event(request, 'Normal', result.reason, result.message);
            }
          } else if (await write(request, failedStatus(request, result.message, at))) {
            events.event(request, 'Warning', result.reason, result.message);
            logger.warn({ request: key, reason: result.reason }, result.message);
          }
          return undefined;
        },
      };
    },
  });
}

/** cert-manager's `certificaterequests-issuer-ca`. */
export const caRequestSigner = requestSigner('ca');

/** cert-manager's `certificaterequests-issuer-selfsigned`. */
export const selfSignedRequestSigner = requestSigner('selfSigned');
