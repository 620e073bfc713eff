import type { Logger } from '../../api/logger.js';
import type { ResourceKind } from '../../api/meta.js';
import type { Clock } from '../../base/clock.js';
import { StoreError } from '../errors.js';
import { resourceNameOf } from '../object-rules.js';
import {
  chooseServedVersion,
  rediscoveryDelayMs,
  wantedVersions,
} from './served-version-policy.js';

/** What ServedVersions asks of API discovery (KubernetesDiscovery has it). */
export interface VersionDiscovery {
  /** The versions served of group, or undefined when it is not served at all. */
  groupVersions(group: string): Promise<readonly string[] | undefined>;
  /** The resources served in group/version (none when it is not served). */
  resources(group: string, version: string): Promise<ReadonlyArray<{ name: string }>>;
}

export interface ServedVersionsOptions {
  discovery: VersionDiscovery;
  clock: Clock;
  logger: Logger;
  /** The least time between two discovery checks of one kind (default 1 s). */
  baseDelayMs?: number;
  /** The most (default 60 s). */
  maxDelayMs?: number;
}

interface Entry {
  /** The version in use; undefined while the server serves none of the wanted ones. */
  version: string | undefined;
  /** A request at version answered "not served" since the last check. */
  stale: boolean;
  /** No discovery check of the kind before this time. */
  nextCheckAt: number;
  /** When discovery was last checked. */
  checkedAt: number;
  unchangedChecks: number;
}

const DEFAULT_BASE_DELAY_MS = 1_000;
const DEFAULT_MAX_DELAY_MS = 60_000;

/**
 * The version in which the cluster serves each kind that declares several (ResourceKind
 * versions), found through discovery and cached. A request answered "not served" marks the
 * kind's version stale: the next use checks discovery again and switches (one log line,
 * `served version changed`). Checks of one kind are single-flight and spaced by a growing
 * delay (rediscoveryDelayMs); until the next check, a version known not to be served fails
 * at once with NotFound instead of asking the server again, so no client loops on 404s.
 */
export class ServedVersions {
  private readonly entries = new Map<string, Entry>();
  private readonly checks = new Map<string, Promise<void>>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: ServedVersionsOptions) {
    this.baseDelayMs = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  }

  /**
   * The version of kind the server serves, preferred first (kind.version for a kind with one);
   * undefined when it serves none. Checks discovery when it is due.
   */
  async servedVersion(kind: ResourceKind): Promise<string | undefined> {
    if (!kind.versions) return kind.version;
    const key = cacheKey(kind);
    const entry = this.entries.get(key);
    if (!entry || ((entry.stale || entry.version === undefined) && this.due(entry))) {
      await this.check(kind, key);
    }
    return (this.entries.get(key) as Entry).version;
  }

  /** The version to send a request of kind in; throws NotFound when none is served. */
  async versionOf(kind: ResourceKind): Promise<string> {
    const version = await this.servedVersion(kind);
    const entry = this.entries.get(cacheKey(kind));
    if (version === undefined || entry?.stale) {
      const wait = Math.max(0, (entry as Entry).nextCheckAt - this.options.clock.now());
      const what =
        version === undefined
          ? `serves ${resourceNameOf(kind)} in none of ${wantedVersions(kind).join(', ')}`
          : `answered that it does not serve ${resourceNameOf(kind)} at ${version}`;
      throw new StoreError(
        'NotFound',
        `the API server ${what} (discovery is checked again in ${Math.ceil(wait / 1000)} s)`,
      );
    }
    return version;
  }

  /** A request of kind at version answered that the resource is not served there. */
  notServed(kind: ResourceKind, version: string): void {
    const entry = this.entries.get(cacheKey(kind));
    if (entry && entry.version === version) entry.stale = true;
  }

  /** A request of kind succeeded: the next "not served" is checked after the shortest delay. */
  confirmed(kind: ResourceKind): void {
    const entry = this.entries.get(cacheKey(kind));
    if (!entry || entry.stale || entry.unchangedChecks === 0) return;
    entry.unchangedChecks = 0;
    entry.nextCheckAt = Math.min(entry.nextCheckAt, entry.checkedAt + this.baseDelayMs);
  }

  private due(entry: Entry): boolean {
    return this.options.clock.now() >= entry.nextCheckAt;
  }

  private check(kind: ResourceKind, key: string): Promise<void> {
    let running = this.checks.get(key);
    if (!running) {
      running = this.discover(kind, key).finally(() => this.checks.delete(key));
      this.checks.set(key, running);
    }
    return running;
  }

  private async discover(kind: ResourceKind, key: string): Promise<void> {
    const { discovery, clock, logger } = this.options;
    const before = this.entries.get(key);
    let found: string | undefined;
    try {
      found = await this.find(kind, discovery);
    } catch (err) {
      // Discovery itself failed: keep what is known, and ask again only after the delay.
      if (before) before.nextCheckAt = clock.now() + this.delay(before.unchangedChecks);
      throw err;
    }
    const changed = before !== undefined && before.version !== found;
    const unchangedChecks = before === undefined || changed ? 0 : before.unchangedChecks + 1;
    this.entries.set(key, {
      version: found,
      stale: false,
      unchangedChecks,
      checkedAt: clock.now(),
      nextCheckAt: clock.now() + this.delay(unchangedChecks),
    });
    const resource = resourceNameOf(kind);
    if (changed) {
      logger.info(
        { resource, from: before.version ?? 'none', to: found ?? 'none' },
        'served version changed',
      );
    } else if (before === undefined) {
      logger.debug({ resource, version: found ?? 'none' }, 'served version');
    }
  }

  private async find(kind: ResourceKind, discovery: VersionDiscovery): Promise<string | undefined> {
    const groupVersions = (await discovery.groupVersions(kind.group)) ?? [];
    let wanted = wantedVersions(kind);
    // A group version can be served without this resource (1.35 serves PodCertificateRequests
    // in certificates.k8s.io/v1beta1 while ClusterTrustBundles stay off): look inside each.
    for (;;) {
      const candidate = chooseServedVersion(wanted, groupVersions);
      if (candidate === undefined) return undefined;
      const resources = await discovery.resources(kind.group, candidate);
      if (resources.some((r) => r.name === kind.plural)) return candidate;
      wanted = wanted.filter((v) => v !== candidate);
    }
  }

  private delay(unchangedChecks: number): number {
    return rediscoveryDelayMs(unchangedChecks, this.baseDelayMs, this.maxDelayMs);
  }
}

/** One cache entry per resource and the versions asked for (a caller may speak fewer). */
function cacheKey(kind: ResourceKind): string {
  return `${resourceNameOf(kind)} ${wantedVersions(kind).join(',')}`;
}
