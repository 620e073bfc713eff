import type { Logger } from '../../api/logger.js';
import type { ResourceKind } from '../../api/meta.js';
import { type Clock, systemClock, type TimerHandle } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import { splitPemCertificates } from '../../pki/chain.js';
import { isStoreError } from '../../store/errors.js';
import { escapeFieldValue } from '../../store/field-selector.js';
import { Informer } from '../../store/informer.js';
import { resourceNameOf } from '../../store/object-rules.js';
import type { ResourceStore } from '../../store/resource-store.js';
import {
  caBundleOf,
  configurationTrusts,
  type WebhookConfigurationObject,
  withCaBundle,
} from './ca-bundle-policy.js';

/** A webhook configuration to keep, by kind and name. */
export interface KeptConfiguration {
  kind: ResourceKind;
  name: string;
}

export interface CaBundleKeeperOptions {
  store: ResourceStore;
  configurations: readonly KeptConfiguration[];
  /** The PEM CAs every webhook must trust (undefined while there is none yet). */
  bundlePem: () => string | undefined;
  logger: Logger;
  clock?: Clock;
  /** First retry delay after a failed write (default 1 s), doubling up to maxRetryMs (default 30 s). */
  retryMs?: number;
  maxRetryMs?: number;
}

// Conflicts mean another writer (the other replica, kubectl apply) got in between: read again.
const MAX_CONFLICTS = 5;

interface Entry extends KeptConfiguration {
  informer: Informer<WebhookConfigurationObject>;
  running: boolean;
  again: boolean;
  failures: number;
  retry: TimerHandle | undefined;
  missingLogged: boolean;
}

/**
 * Keeps `clientConfig.caBundle` of every webhook in the named Validating- and
 * MutatingWebhookConfigurations equal to the webhook CA's bundle (cert-csi's answer to
 * cainjector): it watches each configuration (by name) and, when a webhook's caBundle
 * differs (created by kubectl apply with none, overwritten, or the CA rotated), reads the
 * configuration and updates it at that resourceVersion, reading again on conflict. Several
 * replicas may run it: they write the same value, so one write wins and the others find
 * nothing to do.
 */
export class CaBundleKeeper {
  private readonly clock: Clock;
  private readonly entries: Entry[];
  private readonly waiters = new Set<() => void>();
  private stopped = false;

  constructor(private readonly options: CaBundleKeeperOptions) {
    this.clock = options.clock ?? systemClock;
    this.entries = options.configurations.map((configuration) => {
      const informer = new Informer<WebhookConfigurationObject>(options.store, configuration.kind, {
        fieldSelector: `metadata.name=${escapeFieldValue(configuration.name)}`,
        clock: this.clock,
        onError: (err) =>
          options.logger.warn(
            { configuration: describe(configuration), error: err.message },
            'watching a webhook configuration',
          ),
      });
      const entry: Entry = {
        ...configuration,
        informer,
        running: false,
        again: false,
        failures: 0,
        retry: undefined,
        missingLogged: false,
      };
      informer.on('add', () => this.changed(entry));
      informer.on('update', () => this.changed(entry));
      informer.on('delete', () => this.changed(entry));
      return entry;
    });
  }

  /** Starts watching the configurations; each gets the bundle as soon as it is seen. */
  start(): void {
    for (const entry of this.entries) entry.informer.start();
  }

  /** Stops watching and retrying; waiters of waitUntilTrusted are left to their signals. */
  stop(): void {
    this.stopped = true;
    for (const entry of this.entries) {
      entry.informer.stop();
      if (entry.retry !== undefined) this.clock.clearTimeout(entry.retry);
      entry.retry = undefined;
    }
  }

  /** The bundle changed (a new or rotated CA): bring every configuration up to date. */
  bundleChanged(): void {
    for (const entry of this.entries) this.keep(entry);
  }

  /**
   * True when every kept configuration exists (as last seen) and each of its webhooks' caBundle
   * holds caPem's certificate: the API server will accept a serving certificate it signed.
   */
  trusts(caPem: string): boolean {
    const ca = splitPemCertificates(caPem)[0];
    if (!ca) return false;
    return this.entries.every((entry) => {
      const configuration = entry.informer.get(entry.name);
      return configuration !== undefined && configurationTrusts(configuration, ca);
    });
  }

  /** Resolves once trusts(caPem); rejects when signal aborts first. */
  waitUntilTrusted(caPem: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!this.trusts(caPem)) return;
        end();
        resolve();
      };
      const onAbort = () => {
        end();
        reject(signal.reason);
      };
      const end = () => {
        this.waiters.delete(check);
        signal.removeEventListener('abort', onAbort);
      };
      if (signal.aborted) return onAbort();
      this.waiters.add(check);
      signal.addEventListener('abort', onAbort, { once: true });
      check();
    });
  }

  private changed(entry: Entry): void {
    for (const waiter of [...this.waiters]) waiter();
    this.keep(entry);
  }

  /** Runs one write pass for entry, or one more after the pass in flight. */
  private keep(entry: Entry): void {
    if (this.stopped) return;
    if (entry.running) {
      entry.again = true;
      return;
    }
    entry.running = true;
    void (async () => {
      try {
        do {
          entry.again = false;
          await this.write(entry);
        } while (entry.again && !this.stopped);
      } finally {
        entry.running = false;
      }
    })();
  }

  private async write(entry: Entry): Promise<void> {
    const pem = this.options.bundlePem();
    if (pem === undefined) return;
    const caBundle = caBundleOf(pem);
    const cached = entry.informer.get(entry.name);
    if (cached && !withCaBundle(cached, caBundle)) return;
    const { store, logger } = this.options;
    const where = describe(entry);
    try {
      for (let conflicts = 0; ; conflicts++) {
        let latest: WebhookConfigurationObject;
        try {
          latest = await store.get<WebhookConfigurationObject>(entry.kind, entry.name);
        } catch (err) {
          if (!isStoreError(err, 'NotFound')) throw err;
          // Applied later, it shows up in the watch and is kept then.
          if (!entry.missingLogged)
            logger.warn({ configuration: where }, 'webhook configuration not found');
          entry.missingLogged = true;
          return;
        }
        entry.missingLogged = false;
        const next = withCaBundle(latest, caBundle);
        if (!next) break;
        try {
          await store.update(entry.kind, next);
          logger.info({ configuration: where }, 'set the caBundle of a webhook configuration');
          break;
        } catch (err) {
          if (!isStoreError(err, 'Conflict') || conflicts + 1 >= MAX_CONFLICTS) throw err;
        }
      }
      entry.failures = 0;
    } catch (err) {
      entry.failures++;
      const retryMs = Math.min(
        (this.options.retryMs ?? 1_000) * 2 ** (entry.failures - 1),
        this.options.maxRetryMs ?? 30_000,
      );
      logger.warn(
        { configuration: where, error: errorMessage(err), retryMs },
        'cannot set the caBundle of a webhook configuration',
      );
      if (entry.retry !== undefined) this.clock.clearTimeout(entry.retry);
      entry.retry = this.clock.setTimeout(() => {
        entry.retry = undefined;
        this.keep(entry);
      }, retryMs);
    }
  }
}

function describe(configuration: KeptConfiguration): string {
  return `${resourceNameOf(configuration.kind)} ${configuration.name}`;
}
