import type { KeyObject } from 'node:crypto';
import { type CertificateRequest, finalState } from '../../api/certificate-request.js';
import type { Logger } from '../../api/logger.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { untilAborted } from '../../base/deadline.js';
import { errorMessage } from '../../base/error-message.js';
import { RefusedFileError } from '../../fs/regular-file.js';
import { decodePrivateKey } from '../../pki/keys.js';
import type { DataRoot } from '../../volume/data-root.js';
import type { VolumeMetadata } from '../../volume/metadata.js';
import { readPendingKey, removePendingKey } from '../../volume/volume-secrets.js';
import { certificateFiles, type IssuedCertificate } from './certificate-files.js';
import { asIssuanceError, IssuanceError } from './issuance-error.js';
import { requestProgress } from './request-progress.js';
import { type RequestTracker, RequestWaitError } from './request-tracker.js';
import { createRequest, type VolumeRequestsDeps } from './volume-requests.js';

/** What one attempt to obtain a volume's certificate works with. */
export interface IssuanceDeps extends VolumeRequestsDeps {
  /**
   * Runs the costly work (key, CSR, creating the request) in one of the node's issuance
   * slots; the wait for the signature runs outside it, so requests nobody signs cannot
   * starve the others.
   */
  slot: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * Gets a signed certificate for a volume: resumes the request persisted in the volume
 * dir when there is one, else generates a key and creates a new CertificateRequest,
 * then waits for the request through the watch (unless this process signed it as it was
 * created). The key and the name of a request that is waited for are on disk before the
 * request exists, so a crash or a timed-out publish resumes the same request instead of
 * asking again. Writes no certificate file: the caller does, under the volume's lock.
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

  let signed: CertificateRequest | undefined;
  const askedAt = deps.clock.now();
  if (!key || !name || !request) {
    // Only this part takes a slot; a signal aborted while queued for one ends the wait.
    const resumable = key && name ? { key, name } : undefined;
    ({ key, name, signed } = await untilAborted(
      deps.slot(() => createRequest(deps, volumeId, spec, metadata, signal, resumable, reuseKey)),
      signal,
    ).catch((err: unknown) => {
      throw asIssuanceError(err, signal);
    }));
  } else {
    deps.pendingKeys.set(`${namespace}/${name}`, key);
  }

  const requestKey = `${namespace}/${name}`;
  try {
    const outcome = signed
      ? { request: signed, progress: requestProgress(signed) }
      : await waitForRequest(tracker, namespace, name, signal, log);
    const { progress } = outcome;
    if (progress.state === 'denied' || progress.state === 'failed') {
      delete metadata.pendingRequest;
      await removePendingKey(dataRoot, volumeId);
      throw new IssuanceError(progress.message, progress.state);
    }
    const now = new Date(deps.clock.now());
    const issued = await certificateFiles(outcome.request, key, spec, now, signed !== undefined);
    return signed ? { ...issued, askedAt } : issued;
  } finally {
    deps.pendingKeys.delete(requestKey);
  }
}

async function waitForRequest(
  tracker: RequestTracker,
  namespace: string,
  name: string,
  signal: AbortSignal,
  log: Logger,
): ReturnType<RequestTracker['waitForFinal']> {
  try {
    // In the same tick as the wait registers: whoever reads this line finds the publish waiting.
    log.debug({ request: name, namespace }, 'waiting for CertificateRequest');
    return await tracker.waitForFinal(namespace, name, signal);
  } catch (err) {
    if (err instanceof RequestWaitError) {
      throw new IssuanceError(err.message, err.kind === 'timeout' ? 'timeout' : 'aborted');
    }
    throw err;
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
