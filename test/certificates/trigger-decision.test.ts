import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { Certificate } from '../../src/api/certificate.js';
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
