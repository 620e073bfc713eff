import type { KeyObject } from 'node:crypto';
import {
  type Certificate,
  CertificateCondition,
  CertificateKind,
  ISSUER_GROUP_ANNOTATION,
  ISSUER_KIND_ANNOTATION,
  ISSUER_NAME_ANNOTATION,
  type SecretKeySelector,
} from '../api/certificate.js';
import { decodeBytes } from '../api/certificate-request.js';
import { isConditionTrue } from '../api/conditions.js';
import type { EventRecorder } from '../api/event.js';
import type { IssuerReference } from '../api/issuer-ref.js';
import {
  CA_CERT_KEY,
  type Secret,
  SecretKind,
  secretValue,
  TLS_CERT_KEY,
  TLS_PRIVATE_KEY_KEY,
} from '../api/secret.js';
import { goQuote } from '../base/go-text.js';
import { defineController } from '../controller/controller-definition.js';
import { writeStatusIfChanged } from '../controller/status-writer.js';
import { encodeCertificatePrivateKey } from '../pki/keys.js';
import { KeystoreKey, type KeystorePasswords, keystoreData } from '../pki/keystore-data.js';
import type { ResourceStore } from '../store/resource-store.js';
import { type CertificateCaches, certificateCaches } from './certificate-caches.js';
import {
  CERTIFICATE_RETRY,
  type CertificateControllersConfig,
} from './certificate-controllers-config.js';
import { issuedSecretContent } from './issued-secret.js';
import {
  failedIssuanceStatus,
  ISSUED_MESSAGE,
  issuedStatus,
  issuingDecision,
} from './issuing-decision.js';
import { rememberKeyPem } from './pem-decodings.js';
import { mergeIssuedSecret, secretNeedsContent } from './secret-merge.js';
import { secretOwner } from './trigger-decision.js';

/**
 * The keystore passwords of a Certificate, from the literal fields or their Secrets;
 * undefined, after a Warning event, while a password Secret is missing.
 */
function keystorePasswords(
  caches: CertificateCaches,
  certificate: Certificate,
  events: EventRecorder,
): KeystorePasswords | undefined {
  let missing = false;
  const read = (label: string, ref: SecretKeySelector) => {
    const secret = caches.secrets.get(ref.name, certificate.metadata.namespace);
    if (!secret) {
      const message = `${label} keystore password Secret ${goQuote(ref.name)} not found`;
      events.event(certificate, 'Warning', 'KeystorePasswordSecretNotFound', message);
      missing = true;
      return '';
    }
    // A key that is not in the Secret reads as an empty password, as in cert-manager.
    return secretValue(secret, ref.key ?? '') ?? '';
  };
  const passwords: KeystorePasswords = {};
  const { pkcs12, jks } = certificate.spec.keystores ?? {};
  if (pkcs12?.create)
    passwords.pkcs12 = pkcs12.passwordSecretRef
      ? read('PKCS12', pkcs12.passwordSecretRef)
      : (pkcs12.password ?? '');
  if (jks?.create)
    passwords.jks = jks.passwordSecretRef
      ? read('JKS', jks.passwordSecretRef)
      : (jks.password ?? '');
  return missing ? undefined : passwords;
}

/**
 * Writes a Certificate's Secret: key, certificate, CA, the extra formats and keystores.
 * Resolves false, writing nothing, while a keystore's password Secret is missing: its
 * Warning event is out, and the Secret's creation requeues the Certificate (no retry loop).
 */
async function writeSecret(input: {
  store: ResourceStore;
  caches: CertificateCaches;
  events: EventRecorder;
  certificate: Certificate;
  existing: Secret | undefined;
  key: KeyObject;
  keyPem: string;
  certificatePem: string;
  caPem: string;
  requestIssuer: IssuerReference;
  now: Date;
}): Promise<boolean> {
  const { store, certificate, existing, key, certificatePem, caPem, now } = input;
  const passwords = keystorePasswords(input.caches, certificate, input.events);
  if (!passwords) return false;
  const content = issuedSecretContent({
    certificate,
    requestIssuer: input.requestIssuer,
    keyPem: input.keyPem,
    certificatePem,
    caPem,
  });
  const { pkcs12, jks } = certificate.spec.keystores ?? {};
  // keystoreData parses the chain and the CAs: only for a Certificate that asks for a keystore.
  if (pkcs12?.create || jks?.create)
    Object.assign(
      content.data,
      await keystoreData({
        spec: certificate.spec,
        key,
        certificatePem,
        caPem,
        passwords,
        now,
      }),
    );
  const target = {
    name: certificate.spec.secretName,
    namespace: certificate.metadata.namespace ?? '',
  };
  const secret = mergeIssuedSecret(existing, target, content);
  if (existing) await store.update(SecretKind, secret);
  else await store.create(SecretKind, secret);
  return true;
}

/** The issuer annotations a Secret carries, as the request that issued it named the issuer. */
function issuerOfSecret(secret: Secret): IssuerReference {
  const annotations = secret.metadata.annotations ?? {};
  return {
    name: annotations[ISSUER_NAME_ANNOTATION] ?? '',
    kind: annotations[ISSUER_KIND_ANNOTATION] ?? '',
    group: annotations[ISSUER_GROUP_ANNOTATION] ?? '',
  };
}

/**
 * cert-manager's issuing controller: once the next revision's request ends,
 * writes the Secret and raises status.revision, or records the failure for the trigger's
 * backoff; between issuances, puts back what the Secret lost (labels, annotations, formats).
 */
export const issuingController = defineController<CertificateControllersConfig>({
  name: 'certificates-issuing',
  retry: CERTIFICATE_RETRY,
  setup({ store, informers, events, logger, now }) {
    const caches = certificateCaches(informers);
    const { watches } = caches;

    // The Secret object last found to hold what a Certificate object asks: both are replaced,
    // never mutated, and every Certificate or Secret event syncs the Certificate again.
    const upToDate = new WeakMap<Secret, Certificate>();

    // Not issuing: the Secret of a key pair it owns gets back what the spec asks of it.
    const ensureSecretData = async (certificate: Certificate) => {
      const secret = caches.secretOf(certificate);
      if (!secret) return;
      if (secretOwner(caches.sharingSecret(certificate), secret) !== certificate.metadata.name)
        return;
      if (upToDate.get(secret) === certificate) return;
      const keyPem = secretValue(secret, TLS_PRIVATE_KEY_KEY);
      const certificatePem = secretValue(secret, TLS_CERT_KEY);
      const stored = caches.storedKey(secret);
      if (!keyPem || !certificatePem || stored.state !== 'key') return;
      const caPem = secretValue(secret, CA_CERT_KEY) ?? '';
      const requestIssuer = issuerOfSecret(secret);
      let content: ReturnType<typeof issuedSecretContent>;
      try {
        content = issuedSecretContent({
          certificate,
          requestIssuer,
          keyPem,
          certificatePem,
          caPem,
        });
      } catch {
        // A certificate that does not decode is the trigger's to replace.
        return;
      }
      const { pkcs12, jks } = certificate.spec.keystores ?? {};
      // Keystores are compared by presence: placeholders stand for the files a write would add.
      const expected = [
        [pkcs12?.create, KeystoreKey.pkcs12],
        [jks?.create, KeystoreKey.jks],
        [pkcs12?.create && caPem, KeystoreKey.pkcs12TrustStore],
        [jks?.create && caPem, KeystoreKey.jksTrustStore],
      ] as const;
      for (const [wanted, file] of expected) if (wanted) content.data[file] = new Uint8Array();
      if (!secretNeedsContent(secret, content)) {
        upToDate.set(secret, certificate);
        return;
      }
      const written = await writeSecret({
        store,
        caches,
        events,
        certificate,
        existing: secret,
        key: stored.key,
        keyPem,
        certificatePem,
        caPem,
        requestIssuer,
        now: now(),
      });
      if (written)
        logger.info({ certificate: certificate.metadata.name }, 'restored the Secret data');
    };

    return {
      watches: [
        watches.certificates,
        watches.ownedRequests,
        watches.ownedSecrets,
        watches.namedSecrets,
      ],
      async sync(key) {
        const certificate = caches.live(key);
        if (!certificate || caches.specErrors(certificate).length > 0) return undefined;
        const status = certificate.status;
        if (!isConditionTrue(status?.conditions, CertificateCondition.Issuing)) {
          await ensureSecretData(certificate);
          return undefined;
        }
        const keyName = status?.nextPrivateKeySecretName;
        const stored = keyName
          ? caches.storedKey(caches.secrets.get(keyName, certificate.metadata.namespace))
          : undefined;
        const nextKey = stored?.state === 'key' ? stored.key : undefined;
        const at = now();
        const decision = issuingDecision({
          certificate,
          nextKey,
          owned: await caches.decodedRequests(certificate),
          now: at,
        });
        if (decision.action === 'wait') return undefined;
        if (decision.action === 'fail') {
          const written = await writeStatusIfChanged(
            store,
            CertificateKind,
            certificate,
            failedIssuanceStatus(certificate, decision, at),
          );
          if (written) events.event(certificate, 'Warning', decision.reason, decision.message);
          return undefined;
        }
        const { request } = decision;
        if (!nextKey) return undefined;
        const keyPem = encodeCertificatePrivateKey(
          nextKey,
          certificate.spec.privateKey?.encoding ?? 'PKCS1',
        );
        // The Secret written is read back by every controller: its key need not be decoded.
        rememberKeyPem(keyPem, nextKey);
        const secretWritten = await writeSecret({
          store,
          caches,
          events,
          certificate,
          existing: caches.secretOf(certificate),
          key: nextKey,
          keyPem,
          certificatePem: decodeBytes(request.status?.certificate) ?? '',
          caPem: decodeBytes(request.status?.ca) ?? '',
          requestIssuer: request.spec.issuerRef,
          now: at,
        });
        if (!secretWritten) return undefined;
        const written = await writeStatusIfChanged(
          store,
          CertificateKind,
          certificate,
          issuedStatus(certificate),
        );
        if (written) events.event(certificate, 'Normal', 'Issuing', ISSUED_MESSAGE);
        return undefined;
      },
    };
  },
});
