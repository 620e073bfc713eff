import { X509Certificate } from 'node:crypto';
import t, { type Test } from 'tap';
import {
  AdmissionWebhookServer,
  type ServingKeyPair,
} from '../../../src/admission/webhook/admission-server.js';
import {
  type IssuedServingCertificate,
  ServingCertificate,
  serviceDnsNames,
} from '../../../src/admission/webhook/serving-certificate.js';
import { WebhookCa } from '../../../src/admission/webhook/webhook-ca.js';
import {
  WEBHOOK_CA_LIFETIME_MS,
  WEBHOOK_LEAF_LIFETIME_MS,
} from '../../../src/admission/webhook/webhook-ca-policy.js';
import { silentLogger } from '../../../src/api/logger.js';
import { type Secret, SecretKind } from '../../../src/api/secret.js';
import { ManualClock } from '../../../src/base/clock.js';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { tlsSecret } from '../../support/builders/index.js';
import { until } from '../../support/eventually.js';
import { opensslText, opensslVerify } from '../../support/issuer-fixtures.js';
import { recordingLogger } from '../../support/recording-logger.js';
import { httpsRequest, servedCertificate, WEBHOOK_HOST } from '../../support/webhook-tls.js';

const NAMESPACE = 'cert-csi';
const SECRET = 'cert-csi-webhook-ca';

/** A CA, a serving certificate on a manual clock, and an HTTPS server serving what it installs. */
async function setup(
  t: Test,
  options: { trusted?: (caPem: string, signal: AbortSignal) => Promise<void> } = {},
) {
  const store = new MemoryStore();
  const clock = new ManualClock(Date.now());
  const logger = recordingLogger();
  const ca = new WebhookCa({ store, namespace: NAMESPACE, secretName: SECRET, logger, clock });
  const installed: IssuedServingCertificate[] = [];
  let server: AdmissionWebhookServer | undefined;
  const serving = new ServingCertificate({
    authority: ca,
    dnsNames: serviceDnsNames('cert-csi-webhook', NAMESPACE),
    install: (pair: ServingKeyPair) => {
      installed.push(pair as IssuedServingCertificate);
      server?.setCertificate(pair);
    },
    logger,
    clock,
    ...(options.trusted ? { trusted: options.trusted } : {}),
  });
  const first = await serving.start();
  server = await AdmissionWebhookServer.start({
    handlers: {
      validate: async () => ({ allowed: true }),
      mutate: async () => ({ allowed: true }),
    },
    certificate: first,
    logger: silentLogger,
    port: 0,
    host: '127.0.0.1',
  });
  t.teardown(async () => {
    serving.stop();
    ca.stop();
    await server?.close();
    await store.close();
  });
  return { store, clock, logger, ca, serving, installed, server, first };
}

t.test('the first certificate: the Service names, 7 days, signed by the webhook CA', async (t) => {
  const { first, clock, server } = await setup(t);
  const certificate = new X509Certificate(first.certificatePem);
  t.equal(
    certificate.subjectAltName,
    'DNS:cert-csi-webhook, DNS:cert-csi-webhook.cert-csi, DNS:cert-csi-webhook.cert-csi.svc, DNS:cert-csi-webhook.cert-csi.svc.cluster.local',
  );
  t.equal(first.notAfter.getTime() - first.notBefore.getTime(), WEBHOOK_LEAF_LIFETIME_MS);
  t.equal(first.notBefore.getTime(), Math.floor(clock.now() / 1000) * 1000, 'valid from now');
  t.notOk(certificate.ca, 'not a CA');
  t.match(await opensslVerify(first.caPem, first.certificatePem), /: OK/);
  const text = await opensslText(first.certificatePem);
  t.match(text, /TLS Web Server Authentication/);
  t.match(text, /ASN1 OID: prime256v1/);
  const res = await httpsRequest(server.port, first.caPem, { method: 'GET', path: '/readyz' });
  t.equal(res.status, 200, `a client verifying ${WEBHOOK_HOST} against the CA connects`);
  t.equal(res.text, 'ok\n', 'a server without a readiness check is ready');
  t.notOk(certificate.subject, 'no subject: the names are SANs');
});

t.test('renewed at two thirds of its life; new connections get the new one', async (t) => {
  const { clock, installed, server, first } = await setup(t);
  const renewAt = first.notBefore.getTime() + (WEBHOOK_LEAF_LIFETIME_MS * 2) / 3;
  t.equal(
    clock.nextTimerAt(),
    renewAt,
    'one timer, at the renewal time (the clock steps long waits)',
  );
  clock.advance(renewAt - clock.now() - 1);
  t.equal(installed.length, 1, 'not a millisecond early');
  clock.advance(1);
  await until(() => installed.length === 2, { what: 'the renewed certificate' });
  const renewed = installed[1] as IssuedServingCertificate;
  t.equal(renewed.notBefore.getTime(), Math.floor(renewAt / 1000) * 1000);
  t.equal(renewed.caPem, first.caPem, 'the same CA');
  const served = await servedCertificate(server.port);
  t.ok(served.equals(new X509Certificate(renewed.certificatePem).raw), 'served to new connections');
  t.equal(clock.nextTimerAt(), renewed.notBefore.getTime() + (WEBHOOK_LEAF_LIFETIME_MS * 2) / 3);
});

t.test('a failed renewal keeps the old certificate and retries with backoff', async (t) => {
  const { clock, installed, ca, logger } = await setup(t);
  const ensure = ca.ensure.bind(ca);
  let failures = 2;
  ca.ensure = () =>
    failures-- > 0 ? Promise.reject(new Error('API server unreachable')) : ensure();
  clock.advance((WEBHOOK_LEAF_LIFETIME_MS * 2) / 3);
  await until(() => logger.records.some(([, , m]) => m?.startsWith('cannot renew')), {
    what: 'a failure',
  });
  t.equal(clock.nextTimerAt(), clock.now() + 1_000, 'retried after 1 s');
  clock.advance(1_000);
  await until(
    () => logger.records.filter(([, , m]) => m?.startsWith('cannot renew')).length === 2,
    {
      what: 'a second failure',
    },
  );
  t.equal(clock.nextTimerAt(), clock.now() + 2_000, 'then after 2 s');
  t.equal(installed.length, 1, 'the first certificate still serves');
  clock.advance(2_000);
  await until(() => installed.length === 2, { what: 'the renewal' });
  t.match(logger.records.find(([, , m]) => m?.startsWith('cannot renew'))?.[1], {
    error: 'API server unreachable',
    retryMs: 1_000,
  });
});

t.test('a rotated CA signs the next certificate once the API server trusts it', async (t) => {
  let trust: (() => void) | undefined;
  const asked: string[] = [];
  const { clock, installed, first, store } = await setup(t, {
    trusted: (caPem) => {
      asked.push(caPem);
      return new Promise((resolve) => {
        trust = resolve;
      });
    },
  });
  // Past two thirds of the CA's life, the renewal rotates it.
  const caRenewal = first.notBefore.getTime() + (WEBHOOK_CA_LIFETIME_MS * 2) / 3 + 60_000;
  clock.advance(caRenewal - clock.now());
  await until(() => asked.length === 1, { what: 'the wait for trust' });
  t.not(asked[0], first.caPem, 'a new CA');
  t.equal(installed.length, 1, 'the old certificate serves while the caBundle lacks the new CA');
  const secret = await store.get<Secret>(SecretKind, SECRET, NAMESPACE);
  t.match(
    Buffer.from(secret.data?.['ca.crt'] ?? '', 'base64').toString(),
    /END CERTIFICATE[\s\S]*END CERTIFICATE/,
    'both CAs in ca.crt',
  );
  trust?.();
  await until(() => installed.length === 2, { what: 'the new certificate' });
  t.equal(installed[1]?.caPem, asked[0], 'signed by the new CA');
  // Signed at a time openssl's clock has not reached: check the signature itself.
  const leaf = new X509Certificate(installed[1]?.certificatePem as string);
  const newCa = new X509Certificate(asked[0] as string);
  t.ok(leaf.checkIssued(newCa) && leaf.verify(newCa.publicKey), 'issued and signed by it');
});

t.test('a new CA that is never trusted replaces the old certificate when it expires', async (t) => {
  const { clock, installed, first } = await setup(t, { trusted: () => new Promise(() => {}) });
  clock.advance(
    first.notBefore.getTime() + (WEBHOOK_CA_LIFETIME_MS * 2) / 3 + 60_000 - clock.now(),
  );
  // The renewal due at that time waits; the leaf it would replace expires 7 days after it began.
  await until(() => clock.pendingTimers() > 0, { what: 'the trust deadline' });
  clock.advance(WEBHOOK_LEAF_LIFETIME_MS);
  await until(() => installed.length === 2, { what: 'the switch at expiry' });
  t.not(installed[1]?.caPem, first.caPem);
});

t.test('a CA that leaves the trust bundle makes the certificate renew at once', async (t) => {
  const { installed, ca, store, first } = await setup(t);
  ca.start();
  // Another writer replaces the Secret with a CA this one never knew (a restore from backup).
  const other = new WebhookCa({
    store: new MemoryStore(),
    namespace: NAMESPACE,
    secretName: SECRET,
    logger: silentLogger,
  });
  const foreign = await other.ensure();
  const stored = await store.get<Secret>(SecretKind, SECRET, NAMESPACE);
  await store.update(SecretKind, { ...stored, data: foreign.data });
  await until(() => installed.length === 2, { what: 'a renewal from the new CA' });
  t.not(installed[1]?.caPem, first.caPem);
  t.equal(installed[1]?.caPem, Buffer.from(foreign.data?.['tls.crt'] ?? '', 'base64').toString());
});

t.test('a renewal that ends after stop changes nothing', async (t) => {
  const { clock, installed, serving } = await setup(t);
  const renewing = serving.renewNow();
  serving.stop();
  await renewing;
  t.equal(installed.length, 1, 'a certificate issued after stop is not put in service');
  await serving.renewNow();
  t.equal(installed.length, 1, 'nor is one asked for after stop');
  t.equal(clock.pendingTimers(), 0, 'no timer armed after stop');
  const failing = await setup(t);
  failing.ca.ensure = () => Promise.reject(new Error('gone'));
  const renewal = failing.serving.renewNow();
  failing.serving.stop();
  await renewal;
  t.equal(failing.clock.pendingTimers(), 0, 'a failure after stop arms no retry');
  t.notOk(
    failing.logger.records.some(([, , m]) => m?.startsWith('cannot renew')),
    'nor is reported',
  );
});

t.test('stopped while waiting for trust: nothing is put in service', async (t) => {
  const asked: string[] = [];
  const { clock, installed, serving, first } = await setup(t, {
    trusted: (caPem) => {
      asked.push(caPem);
      return new Promise(() => {});
    },
  });
  clock.advance(
    first.notBefore.getTime() + (WEBHOOK_CA_LIFETIME_MS * 2) / 3 + 60_000 - clock.now(),
  );
  await until(() => asked.length === 1, { what: 'the wait for trust' });
  serving.stop();
  clock.advance(WEBHOOK_LEAF_LIFETIME_MS);
  t.equal(installed.length, 1);
  t.equal(clock.pendingTimers(), 0);
});

t.test('a CA that cannot sign fails the first certificate, saying why', async (t) => {
  const broken = tlsSecret(NAMESPACE, SECRET, { 'tls.crt': 'not a certificate', 'tls.key': 'x' });
  const serving = new ServingCertificate({
    authority: { ensure: async () => broken, bundlePem: undefined, onChange: () => () => {} },
    dnsNames: ['a'],
    install: () => t.fail('nothing to install'),
    logger: silentLogger,
  });
  await t.rejects(
    serving.start(),
    /^the webhook CA cannot sign \(caSecretInvalid\): "tls.crt" holds no certificate$/,
  );
  serving.stop();
});

t.test('stopped before the first certificate is ready: no timer is left', async (t) => {
  const clock = new ManualClock(Date.now());
  const ca = new WebhookCa({
    store: new MemoryStore(),
    namespace: NAMESPACE,
    secretName: SECRET,
    logger: silentLogger,
    clock,
  });
  const serving = new ServingCertificate({
    authority: ca,
    dnsNames: ['a'],
    install: () => {},
    logger: silentLogger,
    clock,
  });
  const starting = serving.start();
  serving.stop();
  await starting;
  t.equal(clock.pendingTimers(), 0);
});
