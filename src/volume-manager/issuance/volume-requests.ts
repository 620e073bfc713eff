import { type KeyObject, randomUUID } from 'node:crypto';
import { type CertificateRequest, CertificateRequestKind } from '../../api/certificate-request.js';
import type { Logger } from '../../api/logger.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import type { Clock } from '../../base/clock.js';
import type { LocalIssuer } from '../../issuer/certificaterequests/local-issuance.js';
import { createCsr } from '../../pki/csr.js';
import { encodePrivateKey, generatePrivateKey } from '../../pki/keys.js';
import { isStoreError } from '../../store/errors.js';
import type { ResourceStore } from '../../store/resource-store.js';
import type { DataRoot } from '../../volume/data-root.js';
import { type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import { removePendingKey, writePendingKey } from '../../volume/volume-secrets.js';
import type { VolumeManagerSettings } from '../settings.js';
import { throwIfAborted } from './issuance-error.js';
import { buildCertificateRequest } from './request-builder.js';
import type { RequestTracker } from './request-tracker.js';

// A volume's CertificateRequests in the store: the one an issuance creates (with its key and
// pending record persisted first), and the older ones it deletes.

/** What creating and deleting a volume's requests works with. */
export interface VolumeRequestsDeps {
  store: ResourceStore;
  tracker: RequestTracker;
  dataRoot: DataRoot;
  logger: Logger;
  clock: Clock;
  settings: Pick<VolumeManagerSettings, 'nodeId'>;
  /** Keys of requests in flight, readable by an in-process SelfSigned signer. */
  pendingKeys: Map<string, KeyObject>;
  /** Creates the CertificateRequest: the pod's own identity, or the plugin's store. */
  creator: ResourceStore;
  /** Signs a new request as it is created when its issuer is this process's own (embedded mode). */
  localIssuer?: LocalIssuer | undefined;
}

/** What createRequest made: the key and request name, and the request when it was signed at once. */
export interface CreatedRequest {
  key: KeyObject;
  name: string;
  /** Set when this process's own issuer signed it as it was created (LocalIssuer): final already. */
  signed?: CertificateRequest;
}

/**
 * The costly part of an issuance, run in one of the node's issuance slots: a key (unless
 * one is resumed or reused), a CSR, the CertificateRequest. A request this process signs as it
 * creates it (localIssuer) is done then; any other is asynchronous, so its key and pending
 * record are persisted in the volume dir first: a crash or a timed-out publish resumes the same
 * request instead of asking again. The signal is checked between steps, so work cut short by
 * its deadline stops at the next step instead of creating a request nobody waits for.
 */
export async function createRequest(
  deps: VolumeRequestsDeps,
  volumeId: string,
  spec: VolumeCertificateSpec,
  metadata: VolumeMetadata,
  signal: AbortSignal,
  resumable: { key: KeyObject; name: string } | undefined,
  reuseKey: KeyObject | undefined,
): Promise<CreatedRequest> {
  const { dataRoot } = deps;
  const namespace = spec.pod.namespace;
  throwIfAborted(signal);
  const fresh = !resumable;
  const key =
    resumable?.key ??
    reuseKey ??
    (await generatePrivateKey(
      spec.key.size !== undefined
        ? { algorithm: spec.key.algorithm, size: spec.key.size }
        : { algorithm: spec.key.algorithm },
    ));
  const name = resumable?.name ?? randomUUID();
  throwIfAborted(signal);
  // The key of a request given up on (final, gone, unreadable) would outlive a request signed
  // at once, which persists none; what cannot be removed there fails the attempt before any
  // request is deleted or made.
  if (fresh && deps.localIssuer && metadata.pendingRequest) {
    await removePendingKey(dataRoot, volumeId);
    // Written with the next metadata.json write; the issuance then dates from now, not from it.
    delete metadata.pendingRequest;
  }
  const requestKey = `${namespace}/${name}`;
  // Before the request exists: an in-process SelfSigned signer may sign it at once.
  deps.pendingKeys.set(requestKey, key);
  try {
    // Older requests of this volume are final or orphaned: keep at most one per volume.
    await deleteRequestsOfVolume(deps, volumeId, name);
    const csrPem = await createCsr({
      key,
      ...(spec.literalSubject ? { literalSubject: spec.literalSubject } : {}),
      subject: spec.subject,
      dnsNames: spec.dnsNames,
      ipAddresses: spec.ipAddresses,
      uris: spec.uris,
    });
    throwIfAborted(signal);
    const built = buildCertificateRequest(spec, {
      name,
      nodeId: deps.settings.nodeId,
      volumeId,
      csrPem,
    });
    if (fresh && deps.localIssuer) {
      const signed = await deps.localIssuer(built);
      if (signed) {
        deps.logger
          .child({ volumeId })
          .info({ request: name, namespace }, 'created CertificateRequest, signed locally');
        return { key, name, signed };
      }
    }
    if (fresh) {
      await writePendingKey(dataRoot, volumeId, encodePrivateKey(key, 'PKCS8'));
      metadata.pendingRequest = {
        name,
        namespace,
        createdAt: new Date(deps.clock.now()).toISOString(),
      };
      await writeMetadata(dataRoot, metadata);
      throwIfAborted(signal);
    }
    try {
      await deps.creator.create(CertificateRequestKind, built);
      deps.logger
        .child({ volumeId })
        .info({ request: name, namespace }, 'created CertificateRequest');
    } catch (err) {
      // A retry after a crash between create and the metadata write finds its own request.
      if (!isStoreError(err, 'AlreadyExists')) throw err;
    }
    // Resumed by the next attempt through metadata.pendingRequest if this one ran out of time.
    throwIfAborted(signal);
    return { key, name };
  } catch (err) {
    deps.pendingKeys.delete(requestKey);
    throw err;
  }
}

/** Deletes this volume's requests except `keep`; already-gone ones are fine. */
export async function deleteRequestsOfVolume(
  deps: Pick<VolumeRequestsDeps, 'store' | 'tracker' | 'logger'>,
  volumeId: string,
  keep?: string,
): Promise<void> {
  for (const old of deps.tracker.requestsOfVolume(volumeId)) {
    if (old.metadata.name === keep) continue;
    try {
      await deps.store.delete(CertificateRequestKind, old.metadata.name, old.metadata.namespace);
      deps.logger.debug({ volumeId, request: old.metadata.name }, 'deleted old CertificateRequest');
    } catch (err) {
      if (!isStoreError(err, 'NotFound')) throw err;
    }
  }
}
