import type { Issuer } from '../../api/issuer.js';
import type { Logger } from '../../api/logger.js';
import type { Secret } from '../../api/secret.js';
import { type Clock, systemClock, type TimerHandle } from '../../base/clock.js';
import { Deadline, untilAborted } from '../../base/deadline.js';
import { errorMessage, withCause } from '../../base/error-message.js';
import { signWithCA } from '../../issuer/ca-issuer.js';
import { certificateTimes, splitPemCertificates } from '../../pki/chain.js';
import { createCsr, parseCsr } from '../../pki/csr.js';
import { encodePrivateKey, generatePrivateKey } from '../../pki/keys.js';
import { renewalTime } from '../../pki/renewal-time.js';
import type { ServingKeyPair } from './admission-server.js';
import { stillTrusted, WEBHOOK_LEAF_LIFETIME_MS } from './webhook-ca-policy.js';

/** The DNS names the API server may use for the webhook's Service (it verifies `<svc>.<ns>.svc`). */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
  ];
}

/** A serving key pair and what it is: its validity and the CA that signed it. */
export interface IssuedServingCertificate extends ServingKeyPair {
  notBefore: Date;
  notAfter: Date;
  /** PEM of the CA certificate that signed it. */
  caPem: string;
}

export interface ServingCertificateOptions {
  /** The CA that signs (ensure() may create or rotate it first). */
  authority: {
    ensure(): Promise<Secret>;
    readonly bundlePem: string | undefined;
    onChange(listener: () => void): () => void;
  };
  dnsNames: readonly string[];
  /** Puts a new key pair in service (the server's setCertificate). */
  install(pair: ServingKeyPair): void;
  logger: Logger;
  clock?: Clock;
  /** Lifetime of a serving certificate (default WEBHOOK_LEAF_LIFETIME_MS), renewed at 2/3. */
  lifetimeMs?: number;
  /**
   * Resolves once the API server trusts caPem (the webhook configurations' caBundle holds
   * it): a certificate from a CA new to the bundle is put in service only then.
   */
  trusted?: (caPem: string, signal: AbortSignal) => Promise<void>;
  /** First retry delay after a failed renewal (default 1 s), doubling up to maxRetryMs (default 60 s). */
  retryMs?: number;
  maxRetryMs?: number;
}

// The CA's own name for the issuance: nothing reads it, signWithCA only needs its secret.
const ISSUER: Issuer = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Issuer',
  metadata: { name: 'cert-csi-webhook' },
  spec: { ca: { secretName: 'cert-csi-webhook-ca' } },
};

/**
 * The webhook's serving certificate: an ECDSA P-256 key and a certificate for the Service's
 * DNS names, signed by the webhook CA through the CA issuer's signing core, renewed by a timer
 * at two thirds of its life (and at once when the CA that signed it leaves the trust bundle),
 * retried with backoff while the old one still serves. A certificate from a CA the API server
 * does not trust yet waits for the caBundle before it replaces the one in service.
 */
export class ServingCertificate {
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private issued: IssuedServingCertificate | undefined;
  private renewing: Promise<void> | undefined;
  private failures = 0;
  private readonly stopping = new AbortController();
  private readonly removeListener: () => void;

  constructor(private readonly options: ServingCertificateOptions) {
    this.clock = options.clock ?? systemClock;
    this.removeListener = options.authority.onChange(() => this.onBundleChange());
  }

  /** The certificate in service; undefined before start resolved. */
  get current(): IssuedServingCertificate | undefined {
    return this.issued;
  }

  /** Issues the first certificate, puts it in service and arms its renewal; rejects when it cannot. */
  async start(): Promise<IssuedServingCertificate> {
    const first = await this.issue();
    this.issued = first;
    this.options.install(first);
    this.armRenewal();
    return first;
  }

  /** Renews now (a test, or a CA change); resolves once the attempt has ended. */
  renewNow(): Promise<void> {
    this.renewing ??= this.renew().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  /** Stops the timer; a renewal in flight is not put in service. */
  stop(): void {
    this.stopping.abort();
    this.removeListener();
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async renew(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    let next: IssuedServingCertificate;
    try {
      next = await this.issue();
      const previous = this.issued;
      if (this.options.trusted && previous && previous.caPem !== next.caPem) {
        await this.untilTrusted(this.options.trusted, next.caPem, previous);
      }
    } catch (err) {
      if (this.stopping.signal.aborted) return;
      this.failures++;
      const retryMs = Math.min(
        (this.options.retryMs ?? 1_000) * 2 ** (this.failures - 1),
        this.options.maxRetryMs ?? 60_000,
      );
      this.options.logger.warn(
        { error: errorMessage(err), retryMs, failures: this.failures },
        'cannot renew the serving certificate: the current one keeps serving',
      );
      this.arm(retryMs);
      return;
    }
    if (this.stopping.signal.aborted) return;
    this.failures = 0;
    this.issued = next;
    this.options.install(next);
    this.options.logger.info(
      { notAfter: next.notAfter.toISOString() },
      'renewed the serving certificate',
    );
    this.armRenewal();
  }

  /**
   * Waits until the API server trusts caPem, at most until previous expires: past that, the new
   * certificate is the only one that can still work.
   */
  private async untilTrusted(
    trusted: NonNullable<ServingCertificateOptions['trusted']>,
    caPem: string,
    previous: IssuedServingCertificate,
  ): Promise<void> {
    const untilExpiry = Math.max(0, previous.notAfter.getTime() - this.clock.now());
    const deadline = new Deadline(this.clock, untilExpiry, this.stopping.signal);
    try {
      await untilAborted(trusted(caPem, deadline.signal), deadline.signal);
    } catch (err) {
      if (!deadline.exceeded) throw err;
      this.options.logger.warn(
        {},
        'the caBundle does not hold the new CA yet, but the serving certificate expires: switching anyway',
      );
    } finally {
      deadline.clear();
    }
  }

  /** A new key and a certificate for it from the current CA (created or rotated if due). */
  private async issue(): Promise<IssuedServingCertificate> {
    const secret = await this.options.authority.ensure();
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    // No subject: the names are the SANs (marked critical, RFC 5280), which TLS clients check.
    const csr = await parseCsr(await createCsr({ key, dnsNames: [...this.options.dnsNames] }));
    const now = new Date(this.clock.now());
    const result = await signWithCA(
      ISSUER,
      {
        read: async () => ({
          subject: csr,
          durationMs: this.options.lifetimeMs ?? WEBHOOK_LEAF_LIFETIME_MS,
          isCA: false,
          usages: ['digital signature', 'server auth'],
          certSignForCA: false,
          // cert-manager's webhook authority never signs past its CA's own end.
          boundedByIssuer: true,
        }),
      },
      { secret: () => secret, resourceNamespace: () => '', now },
    );
    if (result.kind !== 'issued') {
      const { cause } = result as { cause?: unknown };
      throw new Error(withCause(`the webhook CA cannot sign (${result.kind})`, cause));
    }
    const { notBefore, notAfter } = certificateTimes(result.chainPem);
    return {
      keyPem: encodePrivateKey(key, 'PKCS8'),
      certificatePem: result.chainPem,
      caPem: result.caPem,
      notBefore,
      notAfter,
    };
  }

  private armRenewal(): void {
    const issued = this.issued as IssuedServingCertificate;
    const at = renewalTime(issued.notBefore, issued.notAfter).getTime();
    this.arm(Math.max(0, at - this.clock.now()));
  }

  private arm(ms: number): void {
    if (this.stopping.signal.aborted) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    // The clock re-arms waits longer than setTimeout's 2^31-1 ms limit in steps.
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.renewNow();
    }, ms);
  }

  /** A CA change: renew at once when the CA that signed the current certificate is no longer trusted. */
  private onBundleChange(): void {
    const issued = this.issued;
    if (!issued) return;
    const signer = splitPemCertificates(issued.caPem)[0];
    const trusted = stillTrusted(this.options.authority.bundlePem, this.clock.now());
    if (signer && trusted.some((c) => c.raw.equals(signer.raw))) return;
    this.options.logger.info(
      {},
      'the CA of the serving certificate left the trust bundle: renewing',
    );
    void this.renewNow();
  }
}
