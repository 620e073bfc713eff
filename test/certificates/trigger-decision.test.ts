import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { Certificate, RenewalWindow } from '../../src/api/certificate.js';
import type { Secret } from '../../src/api/secret.js';
import {
  DEFAULT_MAXIMUM_BACKOFF_MS,
  DEFAULT_MINIMUM_BACKOFF_MS,
} from '../../src/certificates/issuance-backoff.js';
import { secretOwner, triggerDecision } from '../../src/certificates/trigger-decision.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { encodePrivateKey } from '../../src/pki/keys.js';
import {
  certificate,
  type Modifier,
  withCreationTimestamp,
  withNamespace,
  withSpec,
  withStatus,
} from '../support/builders/index.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const H = 3_600_000;

/** Certificates in apps that share the Secret shared-tls. */
const sharedTls: Modifier<Certificate>[] = [
  withNamespace('apps'),
  withSpec({
    secretName: 'shared-tls',
    issuerRef: { name: 'ca' },
    dnsNames: ['web.example.com'],
    privateKey: { algorithm: 'ECDSA' },
  }),
];

function secretFor(owner?: string, data?: Record<string, string>): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'shared-tls',
      namespace: 'apps',
      annotations: {
        'cert-manager.io/issuer-name': 'ca',
        ...(owner ? { 'cert-manager.io/certificate-name': owner } : {}),
      },
    },
    ...(data ? { data } : {}),
  };
}

t.test('the owner of a shared secretName', async (t) => {
  const a = certificate(
    'a',
    ...sharedTls,
    withCreationTimestamp('2026-01-02T00:00:00Z'),
    withStatus({}),
  );
  const b = certificate(
    'b',
    ...sharedTls,
    withCreationTimestamp('2026-01-01T00:00:00Z'),
    withStatus({}),
  );
  const c = certificate(
    'B',
    ...sharedTls,
    withCreationTimestamp('2026-01-01T00:00:00Z'),
    withStatus({}),
  );
  t.equal(secretOwner([a, b], secretFor('a')), 'a', 'the annotation names it');
  t.equal(secretOwner([a, b], secretFor('gone')), 'b', 'a name not among them: the oldest');
  t.equal(secretOwner([a, b, c], undefined), 'B', 'a tie on time: byte order of names');
});

t.test('the trigger’s decision', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const csr = await parseCsr(await createCsr({ key, dnsNames: ['web.example.com'] }));
  const issuedAt = new Date('2026-01-01T00:00:00Z');
  const pem = await signCertificate(
    csr,
    { durationMs: 24 * H, isCA: false, usages: [] },
    { selfSigned: key },
    issuedAt,
  );
  const good = secretFor('web', {
    'tls.key': b64(encodePrivateKey(key, 'PKCS8')),
    'tls.crt': b64(pem),
  });
  const base: {
    secret: Secret | undefined;
    currentRequest: undefined;
    currentCsr: undefined;
    now: Date;
    nextRequestChanged: boolean;
    minimumBackoffMs: number;
    maximumBackoffMs: number;
  } = {
    secret: good,
    currentRequest: undefined,
    currentCsr: undefined,
    now: new Date('2026-01-01T01:00:00Z'),
    nextRequestChanged: false,
    minimumBackoffMs: DEFAULT_MINIMUM_BACKOFF_MS,
    maximumBackoffMs: DEFAULT_MAXIMUM_BACKOFF_MS,
  };
  const web = (status: Certificate['status'] = {}) =>
    certificate(
      'web',
      ...sharedTls,
      withCreationTimestamp('2026-01-01T00:00:00Z'),
      withStatus(status),
    );
  const decide = (crt: Certificate, extra: Partial<typeof base> = {}) =>
    triggerDecision({ ...base, certificate: crt, sharingSecret: [crt], ...extra });

  t.same(
    decide(web({ conditions: [{ type: 'Issuing', status: 'True' }] })),
    { action: 'none' },
    'already issuing (cmctl renew, say)',
  );
  const older = certificate(
    'older',
    ...sharedTls,
    withCreationTimestamp('2025-12-01T00:00:00Z'),
    withStatus({}),
  );
  t.same(
    triggerDecision({
      ...base,
      secret: secretFor(),
      certificate: web(),
      sharingSecret: [web(), older],
    }),
    { action: 'not-owner', recheckAfterMs: 180_000 },
    'another Certificate owns the Secret: back in 3 minutes',
  );
  t.same(
    decide(web({ renewalTime: '2026-01-01T16:00:00Z' })),
    { action: 'up-to-date', recheckAt: new Date('2026-01-01T16:00:00Z') },
    'up to date: look again at the renewal time',
  );
  t.same(
    decide(web(), { secret: undefined }),
    {
      action: 'issue',
      reason: 'DoesNotExist',
      message: 'Issuing certificate as Secret does not exist',
      recheckAt: undefined,
    },
    'no Secret: issue',
  );
  const failed = web({ lastFailureTime: '2026-01-01T00:30:00Z', failedIssuanceAttempts: 2 });
  t.same(
    decide(failed, { secret: undefined }),
    { action: 'back-off', until: new Date('2026-01-01T02:30:00Z') },
    'two failures: 2h after the last one',
  );
  t.match(
    decide(failed, { secret: undefined, nextRequestChanged: true }),
    { action: 'issue', reason: 'DoesNotExist' },
    'the spec changed since: no backoff',
  );
  t.match(
    decide(web({ renewalTime: '2026-01-01T16:00:00Z' }), { now: new Date('2026-01-01T16:00:00Z') }),
    { action: 'issue', reason: 'Renewing', recheckAt: new Date('2026-01-01T16:00:00Z') },
    'at the renewal time: renew',
  );
});

t.test('no Certificate shares the Secret: nobody owns it', async (t) => {
  t.equal(secretOwner([], undefined), undefined);
});

t.test('renewal windows: due outside a window, renewed when it opens', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const csr = await parseCsr(await createCsr({ key, dnsNames: ['web.example.com'] }));
  // 24h from 00:00 UTC: due two thirds in, at 16:00.
  const pem = await signCertificate(
    csr,
    { durationMs: 24 * H, isCA: false, usages: [] },
    { selfSigned: key },
    new Date('2026-01-01T00:00:00Z'),
  );
  const secret = secretFor('web', {
    'tls.key': b64(encodePrivateKey(key, 'PKCS8')),
    'tls.crt': b64(pem),
  });
  const windowed = (windows: RenewalWindow[], renewalTime: string) =>
    certificate(
      'web',
      ...sharedTls,
      withCreationTimestamp('2026-01-01T00:00:00Z'),
      withSpec({ renewal: { policy: 'RenewBefore', windows } }),
      withStatus({ renewalTime }),
    );
  const decideAt = (crt: Certificate, now: string) =>
    triggerDecision({
      certificate: crt,
      secret,
      currentRequest: undefined,
      currentCsr: undefined,
      now: new Date(now),
      sharingSecret: [crt],
      nextRequestChanged: false,
      minimumBackoffMs: DEFAULT_MINIMUM_BACKOFF_MS,
      maximumBackoffMs: DEFAULT_MAXIMUM_BACKOFF_MS,
    });
  // 21:00 in Paris is 20:00 UTC: the window opens four hours after the certificate is due.
  const evening = windowed(
    [{ cron: '0 21 * * *', timezone: 'Europe/Paris', windowDuration: '2h' }],
    '2026-01-01T20:00:00Z',
  );
  const rows: [string, string, object][] = [
    ['before the desired time', '2026-01-01T15:59:59Z', { action: 'up-to-date' }],
    ['due, but the window is shut', '2026-01-01T16:00:00Z', { action: 'up-to-date' }],
    ['a second before the window opens', '2026-01-01T19:59:59Z', { action: 'up-to-date' }],
    [
      'the window opens: renew',
      '2026-01-01T20:00:00Z',
      {
        action: 'issue',
        reason: 'Renewing',
        message: 'Renewing certificate as renewal was scheduled at 2026-01-01 20:00:00 +0000 UTC',
      },
    ],
  ];
  for (const [name, now, expected] of rows) {
    const decision = decideAt(evening, now);
    t.match(decision, expected, name);
    t.same(
      'recheckAt' in decision ? decision.recheckAt : undefined,
      now <= '2026-01-01T20:00:00Z' ? new Date('2026-01-01T20:00:00Z') : undefined,
      `${name}: looks again when the window opens`,
    );
  }

  const never = windowed([{ cron: '0 0 30 2 *', windowDuration: '1h' }], '2026-01-01T16:00:00Z');
  t.match(
    decideAt(never, '2026-01-01T15:59:59Z'),
    { action: 'up-to-date' },
    'no window fits: not before the desired time',
  );
  t.same(
    decideAt(never, '2026-01-01T16:00:00Z'),
    {
      action: 'issue',
      reason: 'Renewing',
      message:
        'Renewing certificate without satisfying renewal windows at: 2026-01-01 16:00:00 +0000 UTC',
      recheckAt: new Date('2026-01-01T16:00:00Z'),
      warning: {
        reason: 'WindowError',
        message:
          'Renewing certificate without satisfying renewal windows due to cannot find a time with the given windows between 2026-01-01 00:00:00 +0000 UTC and 2026-01-02 00:00:00 +0000 UTC for: 2026-01-01 16:00:00 +0000 UTC',
      },
    },
    'no window fits: renew at the desired time, with a WindowError warning (cert-manager’s strings)',
  );
  const unread = windowed([{ cron: '0 2 * * *', windowDuration: '0s' }], '2026-01-01T16:00:00Z');
  t.match(
    decideAt(unread, '2026-01-02T01:00:00Z'),
    { action: 'up-to-date' },
    'a window that cannot be read (validation refuses it first): no renewal time, no renewal',
  );
  const disabled = certificate(
    'web',
    ...sharedTls,
    withCreationTimestamp('2026-01-01T00:00:00Z'),
    withSpec({ renewal: { policy: 'Disabled' } }),
    withStatus({}),
  );
  t.same(
    decideAt(disabled, '2026-01-01T23:00:00Z'),
    { action: 'up-to-date', recheckAt: undefined },
    'policy Disabled: never renewed',
  );
});
