import { type Certificate, CertificateKind, NEXT_PRIVATE_KEY_LABEL } from '../api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
  decodeBytes,
} from '../api/certificate-request.js';
import { isControlledBy, type KubeObject, objectKey } from '../api/meta.js';
import { type Secret, SecretKind } from '../api/secret.js';
import { type ControllerWatch, keyOf, watchInformer } from '../controller/controller-definition.js';
import { byOwnerUid } from '../controller/indexes.js';
import type { SharedInformers } from '../controller/shared-informers.js';
import { type ParsedCsr, parseCsr } from '../pki/csr.js';
import type { IndexDefinition, Informer } from '../store/informer.js';
import { validateCertificateSpec } from './certificate-validation.js';
import type { StoredKey } from './next-key-plan.js';
import type { OwnedRequest } from './next-request-plan.js';
import { secretKey } from './secret-contents.js';

/** Certificates by every Secret they name (`namespace/name`): spec.secretName and keystore passwords. */
const certificatesByNamedSecret: IndexDefinition<Certificate> = {
  name: 'named-secrets',
  values(certificate) {
    const { secretName, keystores } = certificate.spec;
    const names = [
      secretName,
      keystores?.pkcs12?.passwordSecretRef?.name,
      keystores?.jks?.passwordSecretRef?.name,
    ].filter((name): name is string => !!name);
    return [...new Set(names)].map((name) => secretKeyOf(certificate.metadata.namespace, name));
  },
};

function secretKeyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** The key of the Certificate that controls obj (same namespace), if any. */
function controllingCertificate(obj: KubeObject): string[] {
  const owner = obj.metadata.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === CertificateKind.kind,
  );
  return owner ? [objectKey(obj.metadata.namespace, owner.name)] : [];
}

/** What the Certificate controllers read: the caches, their lookups and decodings. */
export interface CertificateCaches {
  certificates: Informer<Certificate>;
  requests: Informer<CertificateRequest>;
  secrets: Informer<Secret>;
  /** The Certificate of a key, unless it is gone or being deleted. */
  live(key: string): Certificate | undefined;
  /** The spec's validation errors (memoized per object version); empty when valid. */
  specErrors(certificate: Certificate): readonly string[];
  /** The requests the Certificate controls. */
  ownedRequests(certificate: Certificate): CertificateRequest[];
  /** The owned requests with their CSRs decoded (memoized per object version). */
  decodedRequests(certificate: Certificate): Promise<OwnedRequest[]>;
  /** The CSR of a request, decoded once per request and CSR; the Error when it does not decode. */
  decodedCsr(request: CertificateRequest): Promise<ParsedCsr | Error>;
  /** A Secret's tls.key, decoded once per Secret version. */
  storedKey(secret: Secret | undefined): StoredKey;
  /** The next-private-key Secrets the Certificate controls. */
  ownedNextKeySecrets(certificate: Certificate): Secret[];
  /** The Secret named spec.secretName, if it exists. */
  secretOf(certificate: Certificate): Secret | undefined;
  /** The Certificates with the same spec.secretName in the namespace (it included). */
  sharingSecret(certificate: Certificate): Certificate[];
  /** Certificates (enqueued), requests and Secrets they control, Secrets they name. */
  watches: {
    certificates: ControllerWatch;
    ownedRequests: ControllerWatch;
    ownedSecrets: ControllerWatch;
    namedSecrets: ControllerWatch;
  };
}

/** The tls.key of a Secret as read: missing, undecodable or the key. */
function storedKeyOf(secret: Secret): StoredKey {
  const key = secretKey(secret);
  if (!key) return { state: 'missing' };
  return key.ok ? { state: 'key', key: key.value } : { state: 'undecodable' };
}

// One set of caches and memos per process's informers, whichever controller asks first.
const cachesOfInformers = new WeakMap<SharedInformers, CertificateCaches>();

/**
 * The process's Certificate, CertificateRequest and Secret caches with the indexes and the
 * decodings the Certificate controllers share: a CSR is parsed and verified once per request
 * (not once per controller and status write), a key once per Secret version.
 */
export function certificateCaches(informers: SharedInformers): CertificateCaches {
  let caches = cachesOfInformers.get(informers);
  if (!caches) {
    caches = createCaches(informers);
    cachesOfInformers.set(informers, caches);
  }
  return caches;
}

function createCaches(informers: SharedInformers): CertificateCaches {
  const certificates = informers.informer<Certificate>(CertificateKind);
  const requests = informers.informer<CertificateRequest>(CertificateRequestKind);
  const secrets = informers.informer<Secret>(SecretKind);
  certificates.addIndex(certificatesByNamedSecret);
  requests.addIndex(byOwnerUid);
  secrets.addIndex(byOwnerUid);
  // A request's CSR never changes (cert-manager's webhook makes the spec immutable; a
  // changed one is decoded again): keyed by uid, forgotten when the request is deleted.
  const csrs = new Map<string, { request: string; decoded: Promise<ParsedCsr | Error> }>();
  requests.on('delete', (request) => csrs.delete(request.metadata.uid ?? ''));
  // Informer objects are replaced, never mutated: one decoding per object version.
  const keys = new WeakMap<Secret, StoredKey>();
  const errors = new WeakMap<Certificate, readonly string[]>();
  const decodedCsr = (request: CertificateRequest) => {
    const uid = request.metadata.uid ?? '';
    const pem = request.spec.request ?? '';
    const known = csrs.get(uid);
    if (known?.request === pem) return known.decoded;
    const decoded = parseCsr(decodeBytes(pem) ?? '').catch((err: unknown) =>
      err instanceof Error ? err : new Error(String(err)),
    );
    // A request not stored (no uid) is not remembered.
    if (uid) csrs.set(uid, { request: pem, decoded });
    return decoded;
  };
  const ownedRequests = (certificate: Certificate) =>
    requests
      .byIndex(byOwnerUid, certificate.metadata.uid ?? '')
      .filter((request) => isControlledBy(request, certificate));
  return {
    certificates,
    requests,
    secrets,
    live(key) {
      const certificate = certificates.getByKey(key);
      return certificate && !certificate.metadata.deletionTimestamp ? certificate : undefined;
    },
    specErrors(certificate) {
      let found = errors.get(certificate);
      if (!found) {
        found = validateCertificateSpec(certificate.spec);
        errors.set(certificate, found);
      }
      return found;
    },
    ownedRequests,
    async decodedRequests(certificate) {
      const owned = ownedRequests(certificate);
      const decoded = await Promise.all(owned.map(decodedCsr));
      return owned.map((request, i) => ({ request, csr: decoded[i] as ParsedCsr | Error }));
    },
    decodedCsr,
    storedKey(secret) {
      if (!secret) return { state: 'missing' };
      let key = keys.get(secret);
      if (!key) {
        key = storedKeyOf(secret);
        keys.set(secret, key);
      }
      return key;
    },
    ownedNextKeySecrets(certificate) {
      return secrets
        .byIndex(byOwnerUid, certificate.metadata.uid ?? '')
        .filter(
          (secret) =>
            isControlledBy(secret, certificate) &&
            secret.metadata.labels?.[NEXT_PRIVATE_KEY_LABEL] === 'true',
        );
    },
    secretOf(certificate) {
      return secrets.get(certificate.spec.secretName, certificate.metadata.namespace);
    },
    sharingSecret(certificate) {
      const value = secretKeyOf(certificate.metadata.namespace, certificate.spec.secretName);
      return certificates
        .byIndex(certificatesByNamedSecret, value)
        .filter((other) => other.spec.secretName === certificate.spec.secretName);
    },
    watches: {
      certificates: watchInformer(certificates),
      ownedRequests: watchInformer(requests, controllingCertificate, { deletes: true }),
      ownedSecrets: watchInformer(secrets, controllingCertificate, { deletes: true }),
      namedSecrets: watchInformer(
        secrets,
        (secret) =>
          certificates
            .byIndex(
              certificatesByNamedSecret,
              secretKeyOf(secret.metadata.namespace, secret.metadata.name),
            )
            .map(keyOf),
        { deletes: true },
      ),
    },
  };
}
