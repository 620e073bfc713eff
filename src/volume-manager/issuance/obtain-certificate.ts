import { type KeyObject, randomUUID, X509Certificate } from 'node:crypto';
import {
  type CertificateRequest,
  CertificateRequestKind,
  decodeBytes,
  finalState,
} from '../../api/certificate-request.js';
import type { Logger } from '../../api/logger.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { untilAborted } from '../../base/deadline.js';
import { errorMessage } from '../../base/error-message.js';
import type { IssuanceErrorReason } from '../../base/telemetry.js';
import { RefusedFileError } from '../../fs/regular-file.js';
import { readCertificateFields } from '../../pki/certificate-fields.js';
import { createCsr } from '../../pki/csr.js';
import { decodePrivateKey, encodePrivateKey, generatePrivateKey } from '../../pki/keys.js';
import { encodePkcs12 } from '../../pki/pkcs12.js';
import { renewalTime } from '../../pki/renewal-time.js';
import { nameProblem } from '../../pki/subject.js';
import { isStoreError } from '../../store/errors.js';
import type { ResourceStore } from '../../store/resource-store.js';
import type { DataRoot } from '../../volume/data-root.js';
import { type VolumeMetadata, writeMetadata } from '../../volume/metadata.js';
import { readPendingKey, removePendingKey, writePendingKey } from '../../volume/volume-secrets.js';
import { extraOutputFiles } from './extra-outputs.js';
import { buildCertificateRequest } from './request-builder.js';
import { type RequestTracker, RequestWaitError } from './request-tracker.js';

/** Why an issuance ended without a certificate; the driver maps it to a gRPC code. */
export class IssuanceError extends Error {
  constructor(
    message: string,
    readonly reason: IssuanceErrorReason,
  ) {
    super(message);
    this.name = 'IssuanceError';
  }
}

/** What one successful issuance produced. */
export interface IssuedCertificate {
  request: CertificateRequest;
  key: KeyObject;
  files: Map<string, Uint8Array>;
  notBefore: Date;
  notAfter: Date;
  nextIssuanceTime: Date;
}

export interface IssuanceDeps {
  store: ResourceStore;
  tracker: RequestTracker;
  dataRoot: DataRoot;
  nodeId: string;
  logger: Logger;
  /** Keys of requests in flight, readable by an in-process SelfSigned signer. */
  pendingKeys: Map<string, KeyObject>;
  /** Creates the CertificateRequest instead of store (the pod's own identity). */
  creator?: ResourceStore;
  /**
   * Runs the costly work (key, CSR, creating the request) in one of the node's issuance
   * slots; the wait for the signature runs outside it, so requests nobody signs cannot
   * starve the others. Without it the work runs at once.
   */
  slot?: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * Gets a signed certificate for a volume: resumes the request persisted in the volume
 * dir when there is one, else generates a key and creates a new CertificateRequest,
 * then waits for the request through the watch. The key and the request name are on
 * disk before the request exists, so a crash or a timed-out publish resumes the same
 * request instead of asking again. Writes no certificate file: the caller does, under
 * the volume's lock.
 */
export async function obtainCertificate(
  deps: IssuanceDeps,
  volumeId: string,
  spec: VolumeCertificateSpec,
  metadata: VolumeMetadata,
  signal: AbortSignal,
  /** The key to reuse (reuse-private-key); a new one is generated when absent. */
  reuseKey?: KeyObject,
): Promise<IssuedCertificate> {
  const { tracker, dataRoot } = deps;
  const log = deps.logger.child({ volumeId });
  const namespace = spec.pod.namespace;
  let key: KeyObject | undefined;
  let name: string | undefined;
  let request: CertificateRequest | undefined;

  const pending = metadata.pendingRequest;
  if (pending && pending.namespace === namespace) {
    key = await readResumableKey(dataRoot, volumeId, log);
    if (key) {
      name = pending.name;
      // From the node's informer, synced before any issuance: no read per resume, and the
      // plugin needs no get permission. A request created but not yet seen is created
      // again under the same name below, which the AlreadyExists check makes harmless.
      request = tracker.get(namespace, pending.name);
      if (request) {
        const state = finalState(request);
        if (state === 'Denied' || state === 'Failed' || state === 'InvalidRequest') {
          // A final failure is not resumed: the next attempt asks again with a new request.
          request = undefined;
          key = undefined;
          name = undefined;
        } else {
          log.info({ request: pending.name }, 'resuming pending CertificateRequest');
        }
      }
    }
  }

  if (!key || !name || !request) {
    // Only this part takes a slot; a signal aborted while queued for one ends the wait.
    const slot = deps.slot ?? ((work) => work());
    const resumable = key && name ? { key, name } : undefined;
    ({ key, name } = await untilAborted(
      slot(() => createRequest(deps, volumeId, spec, metadata, signal, resumable, reuseKey)),
      signal,
    ).catch((err: unknown) => {
      throw asIssuanceError(err, signal);
    }));
  } else {
    deps.pendingKeys.set(`${namespace}/${name}`, key);
  }

  const requestKey = `${namespace}/${name}`;
  try {
    let outcome: Awaited<ReturnType<RequestTracker['waitForFinal']>>;
    try {
      // In the same tick as the wait registers: whoever reads this line finds the publish waiting.
      log.debug({ request: name, namespace }, 'waiting for CertificateRequest');
      outcome = await tracker.waitForFinal(namespace, name, signal);
    } catch (err) {
      if (err instanceof RequestWaitError) {
        throw new IssuanceError(err.message, err.kind === 'timeout' ? 'timeout' : 'aborted');
      }
      throw err;
    }
    const { progress } = outcome;
    if (progress.state === 'denied' || progress.state === 'failed') {
      delete metadata.pendingRequest;
      await removePendingKey(dataRoot, volumeId);
      throw new IssuanceError(progress.message, progress.state);
    }
    return await certificateFiles(outcome.request, key, spec);
  } finally {
    deps.pendingKeys.delete(requestKey);
  }
}

/**
 * The costly part of an issuance, run in one of the node's issuance slots: a key (unless
 * one is resumed or reused), the pending request persisted in the volume dir, a CSR, the
 * CertificateRequest. The signal is checked between steps, so work cut short by its deadline
 * stops at the next step instead of creating a request nobody waits for.
 */
async function createRequest(
  deps: IssuanceDeps,
  volumeId: string,
  spec: VolumeCertificateSpec,
  metadata: VolumeMetadata,
  signal: AbortSignal,
  resumable: { key: KeyObject; name: string } | undefined,
  reuseKey: KeyObject | undefined,
): Promise<{ key: KeyObject; name: string }> {
  const { dataRoot } = deps;
  const namespace = spec.pod.namespace;
  throwIfAborted(signal);
  let key = resumable?.key;
  let name = resumable?.name;
  if (!key || !name) {
    key =
      reuseKey ??
      (await generatePrivateKey(
        spec.key.size !== undefined
          ? { algorithm: spec.key.algorithm, size: spec.key.size }
          : { algorithm: spec.key.algorithm },
      ));
    throwIfAborted(signal);
    name = randomUUID();
    await writePendingKey(dataRoot, volumeId, encodePrivateKey(key, 'PKCS8'));
    metadata.pendingRequest = { name, namespace, createdAt: new Date().toISOString() };
    await writeMetadata(dataRoot, metadata);
  }
  throwIfAborted(signal);
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
    const built = buildCertificateRequest(spec, { name, nodeId: deps.nodeId, volumeId, csrPem });
    try {
      await (deps.creator ?? deps.store).create(CertificateRequestKind, built);
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

/** An abort of the issuance's signal as the IssuanceError the driver maps; others unchanged. */
function asIssuanceError(err: unknown, signal: AbortSignal): unknown {
  if (!signal.aborted || err instanceof IssuanceError || err !== signal.reason) return err;
  return timedOut(signal)
    ? new IssuanceError('timed out before the CertificateRequest was created', 'timeout')
    : new IssuanceError('issuance aborted: the volume was unpublished', 'aborted');
}

/** Builds the volume's files from an issued request, after checking the pair matches. */
export async function certificateFiles(
  request: CertificateRequest,
  key: KeyObject,
  spec: VolumeCertificateSpec,
): Promise<IssuedCertificate> {
  const certificatePem = decodeBytes(request.status?.certificate) ?? '';
  const caPem = decodeBytes(request.status?.ca) ?? '';
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certificatePem);
    // The rule a literal subject met at publish: a subject other readers (Go's) refuse is as
    // unusable as one OpenSSL refuses.
    const subjectProblem = nameProblem(readCertificateFields(leaf.raw).subjectDer);
    if (subjectProblem !== undefined) throw new Error(subjectProblem);
  } catch (err) {
    throw new IssuanceError(
      `request "${request.metadata.name}" returned an unreadable certificate: ${errorMessage(err)}`,
      'invalid-certificate',
    );
  }
  // An issuer that returns someone else's certificate must not break a working volume.
  if (!leaf.checkPrivateKey(key)) {
    throw new IssuanceError(
      `request "${request.metadata.name}" returned a certificate that does not match the private key`,
      'invalid-certificate',
    );
  }
  const keyPem = encodePrivateKey(key, spec.key.encoding);
  const files = new Map<string, Uint8Array>([
    [spec.files.privateKey, Buffer.from(keyPem)],
    [spec.files.certificate, Buffer.from(certificatePem)],
    [spec.files.ca, Buffer.from(caPem)],
  ]);
  if (spec.files.pkcs12) {
    files.set(
      spec.files.pkcs12.filename,
      await encodePkcs12(key, certificatePem, spec.files.pkcs12.password),
    );
  }
  try {
    // A volume's trust bundle is read under its lock when the files are written: its JKS
    // stores are built there (TrustBundleVolumes.withBundle), not from the request's CA.
    const { jks: _fromTheBundle, ...withoutJks } = spec.files;
    const outputs = spec.trustBundle ? withoutJks : spec.files;
    const extra = { files: outputs, key, keyPem, certificatePem, caPem, now: new Date() };
    for (const [name, data] of extraOutputFiles(extra)) files.set(name, data);
  } catch (err) {
    throw new IssuanceError(
      `request "${request.metadata.name}" returned a certificate or CA that cannot go into the volume's keystore: ${errorMessage(err)}`,
      'invalid-certificate',
    );
  }
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  return {
    request,
    key,
    files,
    notBefore,
    notAfter,
    nextIssuanceTime: renewalTime(notBefore, notAfter, spec.renewBeforeMs),
  };
}

/** Deletes this volume's requests except `keep`; already-gone ones are fine. */
export async function deleteRequestsOfVolume(
  deps: Pick<IssuanceDeps, 'store' | 'tracker' | 'logger'>,
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

async function readResumableKey(
  dataRoot: DataRoot,
  volumeId: string,
  log: Logger,
): Promise<KeyObject | undefined> {
  let pem: string | undefined;
  try {
    pem = await readPendingKey(dataRoot, volumeId);
  } catch (err) {
    // Something other than a regular file at pending.key (a FIFO is refused, never waited on)
    // is as unusable as an undecodable key; writing the new one replaces it.
    if (!((err as Error).cause instanceof RefusedFileError)) throw err;
    log.warn({ err: errorMessage(err) }, 'pending key refused: asking again with a new key');
    return undefined;
  }
  if (pem === undefined) return undefined;
  try {
    return decodePrivateKey(pem);
  } catch {
    // An undecodable key cannot finish its request: a new key and request are the safe answer.
    return undefined;
  }
}

/** True when the signal aborted because its deadline passed (not an unpublish). */
function timedOut(signal: AbortSignal): boolean {
  return signal.reason instanceof Error && signal.reason.name === 'TimeoutError';
}

function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw timedOut(signal)
    ? new IssuanceError('timed out before the CertificateRequest was created', 'timeout')
    : new IssuanceError('issuance aborted: the volume was unpublished', 'aborted');
}
