import type { KeyObject } from 'node:crypto';
import { shortened } from '../../api/echoed-value.js';
import { type Issuer, isIssuerReady, issuerTypeOf } from '../../api/issuer.js';
import { signerNameOfIssuer } from '../../api/issuer-signer-name.js';
import { type Namespace, NamespaceKind } from '../../api/namespace.js';
import { type Pod, PodKind } from '../../api/pod.js';
import {
  PCR_CONDITION_DENIED,
  PCR_CONDITION_FAILED,
  PCR_REASON_INVALID_USER_ANNOTATIONS,
  PCR_REASON_UNSUPPORTED_KEY_TYPE,
  type PodCertificateRequest,
  PodCertificateRequestKind,
  type PodCertificateRequestStatus,
  terminalConditionOf,
} from '../../api/pod-certificate-request.js';
import { type Secret, SecretKind } from '../../api/secret.js';
import { errorMessage } from '../../base/error-message.js';
import {
  type ControllerWatch,
  defineController,
  keyOf,
  watchInformer,
} from '../../controller/controller-definition.js';
import { byNamespace } from '../../controller/indexes.js';
import { RecentWrites } from '../../controller/recent-writes.js';
import { certificateTimes } from '../../pki/chain.js';
import { PodKeyError, verifiedPodCertificateKey } from '../../pki/pod-certificate-key.js';
import { isStoreError } from '../../store/errors.js';
import { podRequestsBySignerName } from '../indexes.js';
import { resourceNamespaceOf } from '../issuer-lookup.js';
import { isOwnIssuerType } from '../issuer-signers.js';
import type { IssuerStackConfig } from '../stack-config.js';
import {
  issuerVerdict,
  podMismatch,
  REASON_CA_EXPIRES,
  REASON_CERTIFICATE_REJECTED,
  REASON_INVALID_REQUEST,
} from './pod-certificate-policy.js';
import { podSigningRequest, spiffeIdOf } from './pod-certificate-profile.js';
import { issuedPodStatus, refusedPodStatus } from './pod-certificate-status.js';
import { beginRefreshAt, podCertificateWindow } from './pod-certificate-times.js';
import { signerIssuers } from './signer-issuers.js';

/** The controller's name, as `--controllers` selects it. */
export const POD_CERTIFICATE_SIGNER = 'podcertificaterequests-issuer';

/**
 * The PodCertificateRequest signer (KEP-4317): it answers each request
 * whose signer name designates one of this stack's CA or SelfSigned Issuers and ClusterIssuers
 * once: Issued, Denied or Failed; other signers' requests are never written. Every request
 * comes from one cluster-wide list and watch, indexed by signer name: a field selector takes
 * one value, so selecting by signer would cost a watch (and a connection) per issuer. Problems
 * that can pass (issuer not ready, CA Secret missing) leave the request pending; the issuer,
 * Secret and Namespace watches look at it again when they change.
 */
export const podCertificateSigner = defineController<IssuerStackConfig>({
  name: POD_CERTIFICATE_SIGNER,
  workers: (config) => config.signingWorkers,
  setup({ store, informers, logger, now, config }) {
    const { issuers, clusterIssuers, issuerOf, signersOfSecret } = signerIssuers(
      informers,
      config.clusterResourceNamespace,
    );
    const secrets = informers.informer<Secret>(SecretKind);
    const namespaces = informers.informer<Namespace>(NamespaceKind);
    const requests = informers.informer<PodCertificateRequest>(PodCertificateRequestKind);
    requests.addIndex(podRequestsBySignerName);
    requests.addIndex(byNamespace);
    const written = new RecentWrites<PodCertificateRequest>();

    // The issuer behind a signer name when this stack signs for it: one of a type it runs
    // (not another issuer controller's), and not being deleted.
    const servedIssuerOf = (signerName: string): Issuer | undefined => {
      const issuer = issuerOf(signerName);
      if (!issuer || !isOwnIssuerType(issuerTypeOf(issuer)) || issuer.metadata.deletionTimestamp) {
        return undefined;
      }
      return issuer;
    };
    const isServed = (request: PodCertificateRequest) =>
      servedIssuerOf(request.spec.signerName) !== undefined;
    const pendingKeys = (list: PodCertificateRequest[]) =>
      list.filter((request) => !terminalConditionOf(request)).map(keyOf);
    const pendingOf = (signerName: string): string[] =>
      servedIssuerOf(signerName)
        ? pendingKeys(requests.byIndex(podRequestsBySignerName, signerName))
        : [];
    const pendingOfIssuer = (issuer: Issuer) => pendingOf(signerNameOfIssuer(issuer));

    const watches: ControllerWatch[] = [
      // Only requests of a signer served here are queued; the issuer watch queues the rest
      // once their issuer appears (or turns into one of ours).
      watchInformer(requests, (request) => (isServed(request) ? [keyOf(request)] : [])),
      // A request deleted and created again under its name must not be answered by the last write.
      { subscribe: () => requests.on('delete', (gone) => written.deleted(keyOf(gone), gone)) },
      // Any change to an issuer (readiness, the namespace annotation) looks at its requests again.
      watchInformer(issuers, pendingOfIssuer),
      watchInformer(clusterIssuers, pendingOfIssuer),
      // A namespace's labels decide ClusterIssuer policy; a CA Secret's return unblocks signing.
      watchInformer(
        namespaces,
        (namespace) =>
          pendingKeys(requests.byIndex(byNamespace, namespace.metadata.name).filter(isServed)),
        { deletes: true },
      ),
      watchInformer(secrets, (secret) => signersOfSecret(secret).flatMap(pendingOf), {
        deletes: true,
      }),
    ];

    // One status write answers a request; what it returned stands in for the cache until
    // the cache has it, so a second sync never answers (or signs) it again.
    const write = async (request: PodCertificateRequest, status: PodCertificateRequestStatus) => {
      try {
        const answered = await store.updateStatus(PodCertificateRequestKind, {
          ...request,
          status,
        });
        written.remember(keyOf(request), answered);
        return true;
      } catch (err) {
        if (!isStoreError(err, 'NotFound')) throw err;
        written.forget(keyOf(request));
        return false;
      }
    };
    // The API server checks an issued status against the request. A notBefore refused
    // as outside its window means the clocks disagree: a retry signs again with fresh times. A
    // refused permission is the installation's to fix. Any other refusal will not heal by
    // itself, and a pending request would leave the pod waiting without a word: Failed.
    const writeIssued = async (
      request: PodCertificateRequest,
      status: PodCertificateRequestStatus,
    ): Promise<'issued' | 'rejected' | 'gone'> => {
      try {
        return (await write(request, status)) ? 'issued' : 'gone';
      } catch (err) {
        if (
          !isStoreError(err, 'Invalid') ||
          err.message.includes('status.notBefore') ||
          err.message.includes('not permitted')
        ) {
          throw err;
        }
        const message = `the API server refused the issued certificate: ${shortened(err.message)}`;
        await refuse(request, PCR_CONDITION_FAILED, REASON_CERTIFICATE_REJECTED, message);
        return 'rejected';
      }
    };
    const refuse = async (
      request: PodCertificateRequest,
      type: typeof PCR_CONDITION_DENIED | typeof PCR_CONDITION_FAILED,
      reason: string,
      message: string,
    ) => {
      if (await write(request, refusedPodStatus(type, reason, message, now()))) {
        logger.warn({ request: keyOf(request), signer: request.spec.signerName, reason }, message);
      }
    };

    return {
      watches,
      async sync(key) {
        const request = written.latest(key, requests.getByKey(key));
        if (!request || request.metadata.deletionTimestamp || terminalConditionOf(request)) {
          return undefined;
        }
        const { signerName } = request.spec;
        const issuer = servedIssuerOf(signerName);
        if (!issuer) return undefined;
        const { spec } = request;
        const namespace = request.metadata.namespace ?? '';

        let publicKey: KeyObject;
        let spkiDer: Uint8Array;
        try {
          ({ publicKey, spkiDer } = verifiedPodCertificateKey(spec, spec.podUID));
        } catch (err) {
          if (!(err instanceof PodKeyError)) throw err;
          if (err.problem === 'badProof') {
            await refuse(request, PCR_CONDITION_FAILED, REASON_INVALID_REQUEST, err.message);
          } else {
            await refuse(
              request,
              PCR_CONDITION_DENIED,
              PCR_REASON_UNSUPPORTED_KEY_TYPE,
              err.message,
            );
          }
          return undefined;
        }
        const userKeys = Object.keys(spec.unverifiedUserAnnotations ?? {});
        if (userKeys.length > 0) {
          await refuse(
            request,
            PCR_CONDITION_DENIED,
            PCR_REASON_INVALID_USER_ANNOTATIONS,
            `cert-csi reads no user annotations: remove ${namedKeys(userKeys)} from the podCertificate source's userAnnotations`,
          );
          return undefined;
        }
        const namespaceObject = namespaces.get(namespace);
        const verdict = issuerVerdict(
          request,
          issuer,
          namespaceObject ? (namespaceObject.metadata.labels ?? {}) : undefined,
        );
        if (verdict.step === 'deny') {
          await refuse(request, PCR_CONDITION_DENIED, verdict.reason, verdict.message);
          return undefined;
        }
        if (verdict.step === 'wait') {
          logger.debug({ request: keyOf(request) }, verdict.message);
          return undefined;
        }
        let pod: Pod | undefined;
        try {
          pod = await store.get<Pod>(PodKind, spec.podName, namespace);
        } catch (err) {
          if (!isStoreError(err, 'NotFound')) throw err;
        }
        const mismatch = podMismatch(spec, namespace, pod);
        if (mismatch) {
          await refuse(request, PCR_CONDITION_FAILED, REASON_INVALID_REQUEST, mismatch);
          return undefined;
        }
        if (!isIssuerReady(issuer)) {
          logger.debug({ request: keyOf(request), signer: signerName }, 'issuer not ready');
          return undefined;
        }
        const signer = config.signers.get('ca');
        /* c8 ignore next */
        if (!signer) return undefined;
        const window = podCertificateWindow(
          now(),
          spec.maxExpirationSeconds,
          config.podCertificateMaxDurationMs,
        );
        const spiffeId = spiffeIdOf(config.trustDomain, namespace, spec.serviceAccountName);
        const signed = await signer(
          issuer,
          {
            read: async () =>
              podSigningRequest({ publicKey, spkiDer, spiffeId, durationMs: window.durationMs }),
          },
          {
            secret: (secretNamespace, name) => secrets.get(name, secretNamespace),
            resourceNamespace: (own) => resourceNamespaceOf(own, config.clusterResourceNamespace),
            now: window.notBefore,
          },
        );
        if (signed.kind === 'caSecretMissing' || signed.kind === 'caSecretInvalid') {
          // The Secret watch brings the request back when the Secret changes.
          logger.warn(
            { request: keyOf(request), signer: signerName, secret: signed.secret.name },
            signed.kind === 'caSecretMissing'
              ? 'CA Secret not found: waiting for it'
              : 'CA Secret unusable: waiting for it to change',
          );
          return undefined;
        }
        if (signed.kind !== 'issued') {
          const cause = 'cause' in signed ? `: ${errorMessage(signed.cause)}` : '';
          throw new Error(
            `signing pod certificate request ${keyOf(request)} for signer "${signerName}" failed (${signed.kind})${cause}`,
          );
        }
        const { notBefore, notAfter } = certificateTimes(signed.chainPem);
        const refreshAt = beginRefreshAt(notBefore, notAfter);
        if (!refreshAt) {
          await refuse(
            request,
            PCR_CONDITION_FAILED,
            REASON_CA_EXPIRES,
            `the CA of signer "${signerName}" expires at ${notAfter.toISOString()}: a certificate would last less than the 1h minimum`,
          );
          return undefined;
        }
        const status = issuedPodStatus(
          signed.chainPem,
          { notBefore, beginRefreshAt: refreshAt, notAfter },
          `issued ${spiffeId}`,
          now(),
        );
        if ((await writeIssued(request, status)) === 'issued') {
          logger.info(
            { request: keyOf(request), signer: signerName, spiffeId },
            'pod certificate issued',
          );
        }
        return undefined;
      },
    };
  },
});

// A request may carry hundreds of user annotations: the condition names a few.
const NAMED_KEYS = 3;

/** The first few keys (sorted, each shortened) and how many more there are. */
export function namedKeys(keys: readonly string[]): string {
  const sorted = [...keys].sort();
  const named = sorted.slice(0, NAMED_KEYS).map((key) => shortened(key));
  const more = sorted.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}
