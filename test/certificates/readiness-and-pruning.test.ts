import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { Certificate } from '../../src/api/certificate.js';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Secret } from '../../src/api/secret.js';
import { readinessStatus } from '../../src/certificates/readiness-status.js';
import { requestsToPrune } from '../../src/certificates/revision-pruning.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { encodePrivateKey } from '../../src/pki/keys.js';
import {
  certificate,
  certificateFrom,
  withGeneration,
  withNamespace,
  withSpec,
  withStatus,
} from '../support/builders/index.js';
import { revisionRequest } from './fixtures.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const issuedAt = new Date('2026-01-01T00:00:00Z');

const web = certificate(
  'web',
  withNamespace('apps'),
  withGeneration(3),
  withSpec({
    secretName: 'web-tls',
    issuerRef: { name: 'ca' },
    dnsNames: ['web.example.com'],
    privateKey: { algorithm: 'ECDSA' },
  }),
);

t.test('readiness: Ready with the times of the Secret’s certificate, or why not', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const csr = await parseCsr(await createCsr({ key, dnsNames: ['web.example.com'] }));
  const pem = await signCertificate(
    csr,
    { durationMs: 24 * 3_600_000, isCA: false, usages: [] },
    { selfSigned: key },
    issuedAt,
  );
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'web-tls', namespace: 'apps' },
    data: { 'tls.key': b64(encodePrivateKey(key, 'PKCS8')), 'tls.crt': b64(pem) },
  };
  const now = new Date('2026-01-01T01:00:00Z');
  const input = {
    certificate: certificateFrom(web),
    secret,
    currentRequest: undefined,
    currentCsr: undefined,
    now,
  };
  t.same(readinessStatus(input), {
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Ready',
        message: 'Certificate is up to date and has not expired',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T01:00:00Z',
      },
    ],
    notBefore: '2026-01-01T00:00:00Z',
    notAfter: '2026-01-02T00:00:00Z',
    renewalTime: '2026-01-01T16:00:00Z',
  });

  const stale = certificateFrom(
    web,
    withStatus({ revision: 1, notBefore: 'x', notAfter: 'y', renewalTime: 'z' }),
    withSpec({ renewal: { policy: 'Disabled' } }),
  );
  const missing = readinessStatus({ ...input, certificate: stale, secret: undefined });
  t.match(missing.conditions?.[0], { status: 'False', reason: 'DoesNotExist' });
  t.same(
    [missing.revision, missing.notBefore, missing.notAfter, missing.renewalTime],
    [1, undefined, undefined, undefined],
    'no Secret: the times are cleared, the rest of the status kept',
  );
  const unreadable = readinessStatus({
    ...input,
    certificate: stale,
    secret: { ...secret, data: { ...secret.data, 'tls.crt': b64('garbage') } },
  });
  t.match(unreadable.conditions?.[0], { status: 'False', reason: 'InvalidCertificate' });
  t.equal(unreadable.notAfter, undefined, 'an unreadable certificate: no times');
  const disabled = readinessStatus({ ...input, certificate: stale });
  t.equal(disabled.renewalTime, undefined, 'renewal disabled: no renewal time');
  t.equal(disabled.notAfter, '2026-01-02T00:00:00Z');

  const windowed = (cron: string, status: Certificate['status'] = {}) =>
    certificateFrom(
      web,
      withSpec({ renewal: { policy: 'RenewBefore', windows: [{ cron, windowDuration: '1h' }] } }),
      withStatus(status),
    );
  const moved = readinessStatus({ ...input, certificate: windowed('30 18 * * *') });
  t.equal(
    moved.renewalTime,
    '2026-01-01T18:30:00Z',
    'a window: the renewal time moves to its start',
  );
  t.match(moved.conditions?.[0], { status: 'True', reason: 'Ready' }, 'and it is Ready');
  const noFit = readinessStatus({ ...input, certificate: windowed('0 0 30 2 *') });
  t.same(
    noFit.conditions,
    [
      {
        type: 'Ready',
        status: 'False',
        reason: 'WindowError',
        message:
          'Could not calculate renewal time: cannot find a time with the given windows between 2026-01-01 00:00:00 +0000 UTC and 2026-01-02 00:00:00 +0000 UTC for: 2026-01-01 16:00:00 +0000 UTC',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T01:00:00Z',
      },
    ],
    'no window fits: Ready=False, WindowError, with cert-manager’s message',
  );
  t.equal(noFit.renewalTime, '2026-01-01T16:00:00Z', 'and the renewal time is the desired one');
  const since = '2025-12-31T00:00:00Z';
  const stillFalse = readinessStatus({
    ...input,
    certificate: windowed('0 0 30 2 *', {
      conditions: [
        { type: 'Ready', status: 'False', reason: 'WindowError', lastTransitionTime: since },
      ],
    }),
  });
  t.equal(
    stillFalse.conditions?.[0]?.lastTransitionTime,
    since,
    'still WindowError: the transition time is kept, so the status does not change at each sync',
  );
  const unread = readinessStatus({
    ...input,
    certificate: certificateFrom(
      web,
      withSpec({
        renewal: { policy: 'RenewBefore', windows: [{ cron: '0 2 * *', windowDuration: '1h' }] },
      }),
    ),
  });
  t.equal(unread.renewalTime, undefined, 'a window that cannot be read: no renewal time');
  t.match(unread.conditions?.[0], {
    reason: 'WindowError',
    message:
      "Could not calculate renewal time: error parsing cron in window failed to parse cron spec '0 2 * *': expected exactly 5 fields, found 4: [0 2 * *]",
  });
});

const request = (name: string, revision: string | undefined) => revisionRequest(name, revision);

t.test('revisionmanager: keep the newest revisionHistoryLimit revisions once Ready', async (t) => {
  const ready = { conditions: [{ type: 'Ready', status: 'True' as const }] };
  const owned = [
    request('web-3', '3'),
    request('web-1', '1'),
    request('web-10', '10'),
    request('web-x', 'x'),
    request('web-2', '2'),
  ];
  const names = (list: CertificateRequest[]) => list.map((r) => r.metadata.name);
  t.same(
    names(requestsToPrune(certificateFrom(web, withStatus(ready)), owned)),
    ['web-1', 'web-2', 'web-3'],
    'default 1: all but the newest; numeric order',
  );
  t.same(
    names(
      requestsToPrune(
        certificateFrom(web, withStatus(ready), withSpec({ revisionHistoryLimit: 3 })),
        owned,
      ),
    ),
    ['web-1'],
    'limit 3: the unparsable one counts against the limit, not for deletion',
  );
  t.same(
    names(requestsToPrune(certificateFrom(web, withStatus({})), owned)),
    [],
    'not Ready: nothing',
  );
  t.same(
    names(
      requestsToPrune(
        certificateFrom(web, withStatus(ready), withSpec({ revisionHistoryLimit: 5 })),
        owned,
      ),
    ),
    [],
    'limit ≥ owned: nothing',
  );
});
