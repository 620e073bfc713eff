import { X509Certificate } from 'node:crypto';
import { encodeBytes } from '../../api/certificate-request.js';
import type { Logger } from '../../api/logger.js';
import { CA_CERT_KEY, type Secret, SecretKind, secretValue } from '../../api/secret.js';
import { type Clock, systemClock } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import { createSelfSignedCa } from '../../pki/certificate.js';
import { encodePrivateKey, generatePrivateKey } from '../../pki/keys.js';
import { isStoreError } from '../../store/errors.js';
import { escapeFieldValue } from '../../store/field-selector.js';
import { Informer } from '../../store/informer.js';
import type { ResourceStore } from '../../store/resource-store.js';
import {
  type CaPlan,
  caSecretPlan,
  caSecretProblem,
  stillTrusted,
  trustBundle,
  WEBHOOK_CA_LIFETIME_MS,
} from './webhook-ca-policy.js';

export interface WebhookCaOptions {
  store: ResourceStore;
  namespace: string;
  secretName: string;
  logger: Logger;
  clock?: Clock;
  /** Lifetime of a new CA (default WEBHOOK_CA_LIFETIME_MS). */
  lifetimeMs?: number;
}

const CA_COMMON_NAME = 'cert-csi-webhook-ca';
// Another replica may write between our read and our write: read again, a few times.
const MAX_ATTEMPTS = 5;

/**
 * The webhook's own CA, kept in a `kubernetes.io/tls` Secret of its namespace: `tls.crt` and
 * `tls.key` are the CA that signs serving certificates, `ca.crt` the CAs to trust (the
 * signing one, then retired ones until they expire), which becomes the webhook
 * configurations' caBundle. Every replica runs one: the first creates the Secret, a replica
 * losing that race reads the winner's back, and a CA near its end is rotated by whoever sees
 * it first (an update at the read resourceVersion: one replica wins, the others read its CA).
 * A watch on the Secret tells every replica about the others' writes; a deleted or broken
 * Secret is made again, trusting the CAs this replica knew.
 */
export class WebhookCa {
  private readonly clock: Clock;
  private readonly informer: Informer<Secret>;
  private readonly listeners = new Set<(secret: Secret) => void>();
  private latest: Secret | undefined;
  private ensuring: Promise<Secret> | undefined;

  constructor(private readonly options: WebhookCaOptions) {
    this.clock = options.clock ?? systemClock;
    this.informer = new Informer<Secret>(options.store, SecretKind, {
      namespace: options.namespace,
      fieldSelector: `metadata.name=${escapeFieldValue(options.secretName)}`,
      clock: this.clock,
      onError: (err) =>
        options.logger.warn({ secret: this.where, error: err.message }, 'watching the CA Secret'),
    });
    const seen = (secret: Secret) => this.seen(secret);
    this.informer.on('add', seen);
    this.informer.on('update', (_old, secret) => seen(secret));
    this.informer.on('delete', () => this.repair('deleted'));
  }

  /** `namespace/name` of the Secret. */
  get where(): string {
    return `${this.options.namespace}/${this.options.secretName}`;
  }

  /** The last usable CA Secret seen or written; undefined before the first ensure. */
  get current(): Secret | undefined {
    return this.latest;
  }

  /** The PEM CAs to trust (ca.crt of the current Secret). */
  get bundlePem(): string | undefined {
    return this.latest ? secretValue(this.latest, CA_CERT_KEY) : undefined;
  }

  /** Calls listener with every new usable CA Secret; returns its removal. */
  onChange(listener: (secret: Secret) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts watching the Secret for the other replicas' writes. */
  start(): void {
    this.informer.start();
  }

  /** Stops watching. */
  stop(): void {
    this.informer.stop();
  }

  /**
   * A CA Secret that can sign now: read, and created or rotated first when caSecretPlan says
   * so. Concurrent callers share one attempt.
   */
  ensure(): Promise<Secret> {
    this.ensuring ??= this.ensureOnce().finally(() => {
      this.ensuring = undefined;
    });
    return this.ensuring;
  }

  private async ensureOnce(): Promise<Secret> {
    const { store, namespace, secretName } = this.options;
    let lastLoss: unknown;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const secret = await this.read();
      const now = this.clock.now();
      const plan = caSecretPlan(secret, now, this.lifetimeMs);
      if (plan.action === 'use' && secret) {
        this.accept(secret);
        return secret;
      }
      const next = await this.newCaSecret(secret, plan, now);
      try {
        const written = secret
          ? await store.update(SecretKind, next)
          : await store.create(SecretKind, next);
        this.report(plan);
        this.accept(written);
        return written;
      } catch (err) {
        // Another replica wrote first: its CA is the one to use (read it back).
        if (!isStoreError(err, 'AlreadyExists') && !isStoreError(err, 'Conflict')) {
          throw new Error(
            `cannot write the webhook CA Secret ${namespace}/${secretName}: ${errorMessage(err)}`,
          );
        }
        lastLoss = err;
      }
    }
    throw new Error(
      `cannot write the webhook CA Secret ${namespace}/${secretName}: lost to other writers ${MAX_ATTEMPTS} times (${errorMessage(lastLoss)})`,
    );
  }

  private get lifetimeMs(): number {
    return this.options.lifetimeMs ?? WEBHOOK_CA_LIFETIME_MS;
  }

  private async read(): Promise<Secret | undefined> {
    try {
      return await this.options.store.get<Secret>(
        SecretKind,
        this.options.secretName,
        this.options.namespace,
      );
    } catch (err) {
      if (isStoreError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  /** The Secret with a new CA in tls.crt/tls.key and it, then the CAs still trusted, in ca.crt. */
  private async newCaSecret(existing: Secret | undefined, plan: CaPlan, now: number) {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const certificatePem = await createSelfSignedCa({
      key,
      commonName: CA_COMMON_NAME,
      durationMs: this.lifetimeMs,
      now: new Date(now),
    });
    // What this replica trusted before (a deleted Secret's CAs): its serving certificate may
    // still be signed by one of them.
    const known = stillTrusted(this.bundlePem, now);
    const trusted = plan.action === 'rotate' ? [...plan.trusted, ...known] : known;
    const secret: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        ...(existing?.metadata ?? {}),
        name: this.options.secretName,
        namespace: this.options.namespace,
        labels: {
          ...existing?.metadata.labels,
          'app.kubernetes.io/managed-by': 'cert-csi-webhook',
        },
      },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': encodeBytes(certificatePem),
        'tls.key': encodeBytes(encodePrivateKey(key, 'PKCS8')),
        'ca.crt': encodeBytes(trustBundle(new X509Certificate(certificatePem), trusted)),
      },
    };
    return secret;
  }

  private report(plan: CaPlan): void {
    const { logger } = this.options;
    if (plan.action === 'rotate') {
      logger.warn({ secret: this.where, why: plan.why }, 'rotated the webhook CA');
    } else {
      logger.info({ secret: this.where }, 'created the webhook CA');
    }
  }

  /** Records a usable Secret and tells the listeners when its content changed. */
  private accept(secret: Secret): void {
    const changed = JSON.stringify(this.latest?.data) !== JSON.stringify(secret.data);
    this.latest = secret;
    if (!changed) return;
    for (const listener of [...this.listeners]) listener(secret);
  }

  /** A Secret from the watch: used when it can sign, made again when it cannot. */
  private seen(secret: Secret): void {
    const why = caSecretProblem(secret, this.clock.now(), this.lifetimeMs);
    if (why === undefined) this.accept(secret);
    else this.repair(why);
  }

  private repair(why: string): void {
    this.options.logger.info(
      { secret: this.where, why },
      'the webhook CA Secret changed: checking it',
    );
    this.ensure().catch((err: unknown) =>
      this.options.logger.error(
        { secret: this.where, error: errorMessage(err) },
        'cannot repair the webhook CA Secret',
      ),
    );
  }
}
