import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { KeyedMutex } from '../../base/keyed-mutex.js';
import type { IssuedCertificate } from '../issuance/certificate-files.js';
import type { PublishRequest, PublishResult } from '../volume-publisher.js';

/** A volume this process manages. */
export interface VolumeState {
  /** Aborted by unpublish (or stop): stops any wait and forbids further writes. */
  readonly abort: AbortController;
}

/** A volume managed with its attributes: what its renewals and pod changes work from. */
export interface ManagedVolume {
  state: VolumeState;
  /** The volume's attributes, parsed once: at its publish, or from metadata.json at start. */
  spec: VolumeCertificateSpec;
}

/** A publish under way; concurrent publishes of its volume join it. */
export interface RunningPublish {
  request: PublishRequest;
  work: Promise<PublishResult>;
  /** Set once the publish passed its checks and registered the volume (registerPublish). */
  registered: boolean;
  /** The newest service-account tokens of the publish and those that joined it. */
  tokens: string | undefined;
}

/**
 * What this process holds in memory about each volume: its state (abort controller), its
 * attributes as parsed once (the typed spec), the publish, renewal and unpublishes running on it, the pod's latest service-account tokens and
 * the volume's lock. Publish and unpublish of a volume never overlap: a publish refuses while
 * an unpublish is registered here, and an unpublish aborts the state and waits for the publish
 * and renewal registered here. Every write to a volume's files happens under its lock. A
 * publish gives the volume a state and tokens only once its checks passed (registerPublish),
 * so a refused publish leaves nothing here.
 */
export class VolumeRegistry {
  private readonly states = new Map<string, VolumeState>();
  private readonly specs = new Map<string, VolumeCertificateSpec>();
  private readonly publishes = new Map<string, RunningPublish>();
  private readonly renewals = new Map<string, Promise<IssuedCertificate | undefined>>();
  /** A count per volume: two unpublishes may overlap. */
  private readonly unpublishes = new Map<string, number>();
  private readonly tokens = new Map<string, string>();
  /** Volumes a publish registered since this process started (a rediscovered one is not). */
  private readonly publishedHere = new Set<string>();
  private readonly locks = new KeyedMutex();

  /** The volume's state; a fresh one when it has none or its last one was aborted. */
  stateOf(volumeId: string): VolumeState {
    let state = this.states.get(volumeId);
    if (!state || state.abort.signal.aborted) {
      state = { abort: new AbortController() };
      this.states.set(volumeId, state);
    }
    return state;
  }

  /** The volume's state unless it has none or it was aborted. */
  liveState(volumeId: string): VolumeState | undefined {
    const state = this.states.get(volumeId);
    return state && !state.abort.signal.aborted ? state : undefined;
  }

  /**
   * Manages the volume with spec (its attributes parsed from metadata.json at start): its
   * state, fresh unless live already.
   */
  manage(volumeId: string, spec: VolumeCertificateSpec): VolumeState {
    this.specs.set(volumeId, spec);
    return this.stateOf(volumeId);
  }

  /** The volume's live state and its spec; undefined unless it is managed with a spec. */
  managed(volumeId: string): ManagedVolume | undefined {
    const state = this.liveState(volumeId);
    const spec = this.specs.get(volumeId);
    return state && spec ? { state, spec } : undefined;
  }

  /** True when the volume has a state, aborted or not. */
  has(volumeId: string): boolean {
    return this.states.has(volumeId);
  }

  /** Ids of the volumes with a state, sorted. */
  volumeIds(): string[] {
    return [...this.states.keys()].sort();
  }

  /** Aborts the volume's state, if any: its waits end and it writes nothing more. */
  abort(volumeId: string, reason: Error): void {
    this.states.get(volumeId)?.abort.abort(reason);
  }

  /** Aborts every volume's state. */
  abortAll(reason: Error): void {
    for (const state of this.states.values()) state.abort.abort(reason);
  }

  /**
   * Forgets a volume: its state, its spec and its tokens (unpublished, or a first publish that
   * left nothing on disk; kubelet's retry brings them again).
   */
  forget(volumeId: string): void {
    this.states.delete(volumeId);
    this.specs.delete(volumeId);
    this.tokens.delete(volumeId);
    this.publishedHere.delete(volumeId);
  }

  /** Resolves with a release function once the volume's earlier lock holders are done. */
  lock(volumeId: string): Promise<() => void> {
    return this.locks.lock(volumeId);
  }

  /**
   * Keeps the publish's service-account tokens, if it has any, as the volume's latest: kubelet
   * refreshes them by republishing (requiresRepublish).
   */
  keepTokens(request: PublishRequest): void {
    if (request.serviceAccountTokens !== undefined) {
      this.tokens.set(request.volumeId, request.serviceAccountTokens);
    }
  }

  /** The volume's latest service-account tokens. */
  tokensOf(volumeId: string): string | undefined {
    return this.tokens.get(volumeId);
  }

  /** The publish running for the volume, if any. */
  runningPublish(volumeId: string): RunningPublish | undefined {
    return this.publishes.get(volumeId);
  }

  /**
   * Runs the volume's publish, known as running until it settles. It registers the volume
   * (registerPublish) once its checks passed; until then nothing else of it is held here.
   */
  startPublish(request: PublishRequest, run: () => Promise<PublishResult>): Promise<PublishResult> {
    const { volumeId } = request;
    const work = run().finally(() => {
      this.publishes.delete(volumeId);
    });
    const tokens = request.serviceAccountTokens;
    this.publishes.set(volumeId, { request, work, registered: false, tokens });
    return work;
  }

  /**
   * Joins the publish running for the request's volume: its tokens become the volume's latest,
   * at once when that publish registered the volume, else when (and if) it does.
   */
  joinPublish(running: RunningPublish, request: PublishRequest): Promise<PublishResult> {
    if (request.serviceAccountTokens !== undefined) {
      running.tokens = request.serviceAccountTokens;
      if (running.registered) this.keepTokens(request);
    }
    return running.work;
  }

  /**
   * Registers the volume of the publish running for it, once that publish passed its checks:
   * the volume's state, the spec the publish parsed, and the newest tokens of the publish and
   * those that joined it (all of one volume's publishes have the same attributes).
   */
  registerPublish(volumeId: string): VolumeState {
    this.publishedHere.add(volumeId);
    const running = this.publishes.get(volumeId);
    if (running) {
      running.registered = true;
      this.specs.set(volumeId, running.request.spec);
      if (running.tokens !== undefined) this.tokens.set(volumeId, running.tokens);
    }
    return this.stateOf(volumeId);
  }

  /** True once a publish of the volume registered it in this process (registerPublish). */
  wasPublishedHere(volumeId: string): boolean {
    return this.publishedHere.has(volumeId);
  }

  /** The renewal running for the volume, if any. */
  runningRenewal(volumeId: string): Promise<IssuedCertificate | undefined> | undefined {
    return this.renewals.get(volumeId);
  }

  /** Runs the volume's renewal, known as running until it settles. */
  startRenewal(
    volumeId: string,
    run: () => Promise<IssuedCertificate | undefined>,
  ): Promise<IssuedCertificate | undefined> {
    const work = run().finally(() => {
      this.renewals.delete(volumeId);
    });
    this.renewals.set(volumeId, work);
    return work;
  }

  /** True while an unpublish of the volume runs. */
  isUnpublishing(volumeId: string): boolean {
    return this.unpublishes.has(volumeId);
  }

  /** Runs an unpublish of the volume, known as running until it settles. */
  async whileUnpublishing<T>(volumeId: string, run: () => Promise<T>): Promise<T> {
    this.unpublishes.set(volumeId, (this.unpublishes.get(volumeId) ?? 0) + 1);
    try {
      return await run();
    } finally {
      const left = (this.unpublishes.get(volumeId) as number) - 1;
      if (left > 0) this.unpublishes.set(volumeId, left);
      else this.unpublishes.delete(volumeId);
    }
  }
}
