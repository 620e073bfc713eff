import type { KeyObject } from 'node:crypto';
import type { Logger } from '../api/logger.js';
import { KeyedMutex } from '../store/keyed-mutex.js';
import type { ResourceStore } from '../store/resource-store.js';
import { writeAtomically } from '../volume/atomic-writer.js';
import type { DataRoot } from '../volume/data-root.js';
import { readMetadata, type VolumeMetadata, writeMetadata } from '../volume/metadata.js';
import type { Mounter } from '../volume/mounter.js';
import { removePendingKey, writePkcs12Password } from '../volume/volume-secrets.js';
import { deleteRequestsOfVolume, IssuanceError, obtainCertificate } from './issuance.js';
import { RequestTracker } from './request-tracker.js';
import type { PublishRequest, PublishResult, VolumePublisher } from './volume-publisher.js';

export interface VolumeManagerOptions {
  store: ResourceStore;
  nodeId: string;
  dataRoot: DataRoot;
  mounter: Mounter;
  logger: Logger;
  /** How long a publish waits for its certificate (kubelet's own timeout is 2 min). */
  publishTimeoutMs?: number;
}

/** A volume this process is working on or has published. */
interface VolumeState {
  /** Aborted by unpublish: stops any wait and forbids further writes. */
  abort: AbortController;
}

/**
 * Publishes and unpublishes volumes: first issuance inside NodePublishVolume, single
 * flight per volume, resumable pending requests, and writes that never outlive an
 * unpublish. Issue 4 adds the renewal timers on top.
 */
export class VolumeManager implements VolumePublisher {
  private readonly tracker: RequestTracker;
  private readonly inflight = new Map<string, Promise<PublishResult>>();
  private readonly states = new Map<string, VolumeState>();
  private readonly locks = new KeyedMutex();
  private readonly pendingKeys = new Map<string, KeyObject>();
  private started = false;

  constructor(private readonly options: VolumeManagerOptions) {
    this.tracker = new RequestTracker(options.store, options.nodeId);
  }

  /** Prepares the data root and starts watching this node's requests. */
  async start(): Promise<void> {
    await this.options.dataRoot.ensure();
    await this.options.mounter.prepareDataRoot(this.options.dataRoot.root);
    await this.tracker.start();
    this.started = true;
  }

  /** Stops every wait and the request watch. */
  stop(): void {
    this.started = false;
    for (const state of this.states.values()) state.abort.abort(new Error('plugin stopping'));
    this.tracker.stop();
  }

  /** True once start() finished. */
  isReady(): boolean {
    return this.started;
  }

  /** The private key of a request this node is waiting for, for an in-process SelfSigned signer. */
  pendingKeyFor(namespace: string, name: string): KeyObject | undefined {
    return this.pendingKeys.get(`${namespace}/${name}`);
  }

  /** Publishes a volume; concurrent calls for one volume share one issuance. */
  publish(request: PublishRequest): Promise<PublishResult> {
    const running = this.inflight.get(request.volumeId);
    if (running) return running;
    const work = this.publishOnce(request).finally(() => {
      this.inflight.delete(request.volumeId);
    });
    this.inflight.set(request.volumeId, work);
    return work;
  }

  private async publishOnce(request: PublishRequest): Promise<PublishResult> {
    const { dataRoot, mounter } = this.options;
    const { volumeId, targetPath, spec } = request;
    const existing = await this.readExisting(volumeId);
    if (existing && isUsable(existing)) {
      // Ready already: only make sure the mount is there (kubelet republishes often).
      await mounter.publish(dataRoot.dataDir(volumeId), targetPath);
      await mounter.refresh(dataRoot.dataDir(volumeId), targetPath, spec.fsGroup);
      this.stateOf(volumeId);
      return { issued: false, ...times(existing) };
    }

    const state = this.stateOf(volumeId);
    const metadata: VolumeMetadata = {
      ...existing,
      volumeId,
      targetPath,
      volumeContext: request.volumeContext,
      ...(request.volumeMountGroup ? { volumeMountGroup: request.volumeMountGroup } : {}),
    };
    await dataRoot.ensureVolume(volumeId, spec.fsGroup);
    await writeMetadata(dataRoot, metadata);
    if (spec.files.pkcs12) {
      // Kept beside the key, not in metadata.json, for renewals after a restart.
      await writePkcs12Password(dataRoot, volumeId, spec.files.pkcs12.password);
    }

    const signal = AbortSignal.any([
      state.abort.signal,
      AbortSignal.timeout(this.options.publishTimeoutMs ?? 60_000),
    ]);
    try {
      const issued = await obtainCertificate(
        {
          store: this.options.store,
          tracker: this.tracker,
          dataRoot,
          nodeId: this.options.nodeId,
          logger: this.options.logger,
          pendingKeys: this.pendingKeys,
        },
        volumeId,
        spec,
        metadata,
        signal,
      );
      const release = await this.locks.lock(volumeId);
      try {
        // Unpublished while the request was signed: write nothing, recreate nothing.
        if (state.abort.signal.aborted) {
          throw new IssuanceError('issuance aborted: the volume was unpublished', 'aborted');
        }
        await writeAtomically(
          dataRoot.dataDir(volumeId),
          issued.files,
          spec.fsGroup !== undefined ? { gid: spec.fsGroup } : {},
        );
        metadata.nextIssuanceTime = issued.nextIssuanceTime.toISOString();
        metadata.notAfter = issued.notAfter.toISOString();
        delete metadata.pendingRequest;
        delete metadata.lastError;
        await writeMetadata(dataRoot, metadata);
        await removePendingKey(dataRoot, volumeId);
      } finally {
        release();
      }
      await deleteRequestsOfVolume(
        { store: this.options.store, tracker: this.tracker, logger: this.options.logger },
        volumeId,
        issued.request.metadata.name,
      );
      await mounter.publish(dataRoot.dataDir(volumeId), targetPath);
      await mounter.refresh(dataRoot.dataDir(volumeId), targetPath, spec.fsGroup);
      return { issued: true, notAfter: issued.notAfter, nextIssuanceTime: issued.nextIssuanceTime };
    } catch (err) {
      await this.recordFailure(volumeId, metadata, state, err);
      throw err;
    }
  }

  /** Unpublishes: stops work on the volume, unmounts, removes its directory. */
  async unpublish(volumeId: string, targetPath: string): Promise<void> {
    const { dataRoot, mounter } = this.options;
    const state = this.states.get(volumeId);
    state?.abort.abort(new Error('volume unpublished'));
    const running = this.inflight.get(volumeId);
    if (running) await running.catch(() => undefined);
    const release = await this.locks.lock(volumeId);
    try {
      await mounter.unpublish(targetPath);
      await dataRoot.removeVolume(volumeId);
      this.states.delete(volumeId);
    } finally {
      release();
    }
    // Nothing garbage-collects requests in embedded mode; the pod's certificate is gone.
    await deleteRequestsOfVolume(
      { store: this.options.store, tracker: this.tracker, logger: this.options.logger },
      volumeId,
    );
  }

  private stateOf(volumeId: string): VolumeState {
    let state = this.states.get(volumeId);
    if (!state || state.abort.signal.aborted) {
      state = { abort: new AbortController() };
      this.states.set(volumeId, state);
    }
    return state;
  }

  private async readExisting(volumeId: string): Promise<VolumeMetadata | undefined> {
    if (!(await this.options.dataRoot.hasVolume(volumeId))) return undefined;
    try {
      return await readMetadata(this.options.dataRoot, volumeId);
    } catch {
      // A volume dir without readable metadata has nothing worth keeping: start over.
      return undefined;
    }
  }

  /**
   * Keeps what a retry needs: a volume that worked keeps its files, a pending request
   * stays resumable; a first publish that got nothing leaves no directory behind.
   */
  private async recordFailure(
    volumeId: string,
    metadata: VolumeMetadata,
    state: VolumeState,
    err: unknown,
  ): Promise<void> {
    const { dataRoot } = this.options;
    const release = await this.locks.lock(volumeId);
    try {
      if (state.abort.signal.aborted) return;
      const worked = metadata.nextIssuanceTime !== undefined;
      if (!worked && !metadata.pendingRequest) {
        await dataRoot.removeVolume(volumeId);
        this.states.delete(volumeId);
        return;
      }
      metadata.lastError = {
        message: err instanceof Error ? err.message : String(err),
        time: new Date().toISOString(),
      };
      await writeMetadata(dataRoot, metadata);
    } finally {
      release();
    }
  }
}

/** A volume whose certificate is on disk and not yet expired. */
function isUsable(metadata: VolumeMetadata): boolean {
  if (!metadata.nextIssuanceTime || !metadata.notAfter) return false;
  return Date.parse(metadata.notAfter) > Date.now();
}

function times(metadata: VolumeMetadata): { notAfter?: Date; nextIssuanceTime?: Date } {
  return {
    ...(metadata.notAfter ? { notAfter: new Date(metadata.notAfter) } : {}),
    ...(metadata.nextIssuanceTime ? { nextIssuanceTime: new Date(metadata.nextIssuanceTime) } : {}),
  };
}
