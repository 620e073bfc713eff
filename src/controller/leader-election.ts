import { type Lease, LeaseKind } from '../api/lease.js';
import type { Logger } from '../api/logger.js';
import { silentLogger } from '../api/logger.js';
import { apiVersionOf } from '../api/meta.js';
import { type Clock, systemClock, type TimerHandle } from '../base/clock.js';
import { isStoreError } from '../store/errors.js';
import type { ResourceStore } from '../store/resource-store.js';

export interface LeaderElectionOptions {
  store: ResourceStore;
  namespace: string;
  name: string;
  /** This candidate's name in the Lease; unique per process. */
  identity: string;
  /** A lease not renewed for this long may be taken by another candidate. */
  leaseDurationMs: number;
  /** The leader steps down when it could not renew for this long (< leaseDurationMs). */
  renewDeadlineMs: number;
  /** Pause between attempts to acquire or renew. */
  retryPeriodMs: number;
  clock?: Clock;
  logger?: Logger;
}

/** Lease times are RFC 3339 with microseconds (metav1.MicroTime). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * When the holder last renewed, as far as this candidate can tell: the lease's renewTime
 * when it is not in the future (a sane clock), else when this candidate saw the record
 * change. Trusting renewTime lets a candidate take over a dead holder's lease at its real
 * expiry; a holder whose clock runs behind by more than the lease duration minus the
 * retry period could lose the lease while alive (client-go uses only the observation time,
 * which can be up to a retry period late).
 */
function lastRenewal(renewTime: string | undefined, observedAt: number, now: number): number {
  const renewed = renewTime ? Date.parse(renewTime) : Number.NaN;
  return Number.isFinite(renewed) && renewed <= now ? Math.min(renewed, observedAt) : observedAt;
}

/** Checks the timing flags the way client-go does: each must leave room for the next. */
export function checkLeaderElectionTiming(
  options: Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>,
): void {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = options;
  if (!(retryPeriodMs > 0)) throw new Error('leader election: retry period must be positive');
  if (!(renewDeadlineMs > retryPeriodMs)) {
    throw new Error('leader election: renew deadline must be longer than the retry period');
  }
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new Error('leader election: lease duration must be longer than the renew deadline');
  }
}

/**
 * Leader election on a coordination.k8s.io Lease, with client-go's rules: a candidate
 * takes the lease when it is free or when its holder has not renewed it for the lease
 * duration (see lastRenewal for how clocks are trusted), trying again at the moment it
 * expires; every write carries the
 * resourceVersion it read, so two candidates never both win. The leader renews every
 * retry period and steps down when it could not renew within the renew deadline.
 */
export class LeaderElector {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private observed: { record: string; at: number } | undefined;
  private leading = false;
  private stopped = false;
  private timer: TimerHandle | undefined;
  private lastRenew = 0;
  private wake: (() => void) | undefined;
  private expiresAt: number | undefined;
  private inFlight: Promise<boolean> | undefined;
  private releasing: Promise<void> | undefined;

  constructor(private readonly options: LeaderElectionOptions) {
    checkLeaderElectionTiming(options);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** True while this candidate holds the lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Campaigns until elected, then calls lead with a signal that aborts when leadership is
   * lost or stop is called. Resolves after lead's work ended and leadership was lost.
   */
  async run(lead: (signal: AbortSignal) => Promise<void> | void): Promise<void> {
    while (!this.stopped && !(await this.tryAcquireOrRenew())) await this.sleep();
    if (this.stopped) return;
    this.leading = true;
    this.lastRenew = this.clock.now();
    this.logger.info({ lease: this.leaseName(), identity: this.options.identity }, 'became leader');
    const lost = new AbortController();
    let workFailed = false;
    const work = Promise.resolve()
      .then(() => lead(lost.signal))
      .catch((err: unknown) => {
        // A leader that cannot work must not keep the lease from one that can.
        this.logger.error({ err: String(err) }, 'leader work failed: stepping down');
        workFailed = true;
        this.wake?.();
      });
    while (!this.stopped) {
      await this.sleep();
      if (this.stopped) break;
      if (workFailed) {
        await this.release();
        break;
      }
      if (await this.tryAcquireOrRenew()) {
        this.lastRenew = this.clock.now();
      } else if (this.clock.now() - this.lastRenew >= this.options.renewDeadlineMs) {
        this.logger.warn(
          { lease: this.leaseName(), identity: this.options.identity },
          'could not renew the lease within the renew deadline: stepping down',
        );
        break;
      }
    }
    this.leading = false;
    lost.abort();
    await work;
    await this.releasing;
  }

  /** Stops campaigning; a leader gives the lease up so another can take it at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    const wasLeading = this.leading;
    this.wake?.();
    // Set before any await, so run() (which waits for it) ends only once the lease is free.
    this.releasing = (async () => {
      await this.inFlight;
      if (wasLeading) await this.release();
    })();
    await this.releasing;
  }

  private leaseName(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      // A little jitter so candidates that started together do not collide every round.
      let delay = this.options.retryPeriodMs * (1 + Math.random() * 0.2);
      if (this.expiresAt !== undefined) {
        delay = Math.min(delay, Math.max(0, this.expiresAt - this.clock.now()));
        this.expiresAt = undefined;
      }
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        resolve();
      }, delay);
    });
  }

  // One attempt at a time, remembered so stop() can let it finish before releasing
  // (otherwise the release and a renewal race on the same resourceVersion).
  private tryAcquireOrRenew(): Promise<boolean> {
    const attempt = this.attemptOnce();
    this.inFlight = attempt;
    return attempt;
  }

  private async attemptOnce(): Promise<boolean> {
    const { store, namespace, name, identity } = this.options;
    const now = this.clock.now();
    const durationSeconds = Math.ceil(this.options.leaseDurationMs / 1000);
    let current: Lease | undefined;
    try {
      current = await store.get<Lease>(LeaseKind, name, namespace);
    } catch (err) {
      if (!isStoreError(err, 'NotFound')) {
        this.logger.warn({ lease: this.leaseName(), err: String(err) }, 'cannot read the lease');
        return false;
      }
    }
    try {
      if (!current) {
        await store.create<Lease>(LeaseKind, {
          apiVersion: apiVersionOf(LeaseKind),
          kind: LeaseKind.kind,
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        });
        return true;
      }
      const spec = current.spec ?? {};
      this.observe(JSON.stringify([spec.holderIdentity, spec.renewTime]), now);
      const holder = spec.holderIdentity ?? '';
      const heldByOther = holder !== '' && holder !== identity;
      const leaseMs = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (heldByOther) {
        const expiry = lastRenewal(spec.renewTime, this.observed?.at ?? now, now) + leaseMs;
        if (expiry > now) {
          // Try again the moment it expires, not up to a retry period later.
          this.expiresAt = expiry;
          return false;
        }
      }
      const takeover = holder !== identity;
      await store.update<Lease>(LeaseKind, {
        ...current,
        spec: {
          ...spec,
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          renewTime: microTime(now),
          ...(takeover
            ? {
                acquireTime: microTime(now),
                leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === '' ? 0 : 1),
              }
            : {}),
        },
      });
      return true;
    } catch (err) {
      if (!isStoreError(err, 'Conflict') && !isStoreError(err, 'AlreadyExists')) {
        this.logger.warn({ lease: this.leaseName(), err: String(err) }, 'cannot write the lease');
      }
      return false;
    }
  }

  private observe(record: string, now: number): void {
    if (this.observed?.record !== record) this.observed = { record, at: now };
  }

  private async release(): Promise<void> {
    const { store, namespace, name, identity } = this.options;
    try {
      const current = await store.get<Lease>(LeaseKind, name, namespace);
      if (current.spec?.holderIdentity !== identity) return;
      const now = this.clock.now();
      await store.update<Lease>(LeaseKind, {
        ...current,
        spec: {
          ...current.spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          renewTime: microTime(now),
        },
      });
      this.logger.info({ lease: this.leaseName() }, 'released the lease');
    } catch (err) {
      this.logger.warn({ lease: this.leaseName(), err: String(err) }, 'cannot release the lease');
    } finally {
      this.leading = false;
    }
  }
}
