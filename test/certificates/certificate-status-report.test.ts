import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import { SecretKind } from '../../src/api/secret.js';
import {
  type CertificateStatusInput,
  certificateStatusReport,
  readCertificateStatus,
} from '../../src/certificates/certificate-status-report.js';
import { StoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  certificate,
  certificateFrom,
  secret,
  secretFrom,
  withAnnotations,
  withCreationTimestamp,
  withData,
  withGeneration,
  withNamespace,
  withSpec,
  withStatus,
  withType,
  withUid,
} from '../support/builders/index.js';
import { issuedLeaf, revisionRequest } from './fixtures.js';

const ready: Condition = {
  type: 'Ready',
  status: 'True',
  reason: 'Ready',
  message: 'Certificate is up to date and has not expired',
  lastTransitionTime: '2026-01-01T00:00:00Z',
  observedGeneration: 1,
};

const web = certificate(
  'web',
  withNamespace('apps'),
  withUid('crt-uid'),
  withGeneration(1),
  withCreationTimestamp('2025-12-31T00:00:00Z'),
  withSpec({
    secretName: 'web-tls',
    issuerRef: { name: 'ca', kind: 'ClusterIssuer' },
    dnsNames: ['web.apps.svc'],
  }),
);

const leaf = await issuedLeaf('web', ['web.apps.svc', 'web']);
const other = await issuedLeaf('other', []);

const webTls = secret('web-tls', withNamespace('apps'), withType('kubernetes.io/tls'));

const issuerAnnotations = {
  'cert-manager.io/issuer-name': 'ca',
  'cert-manager.io/issuer-kind': 'ClusterIssuer',
  'cert-manager.io/issuer-group': 'cert-manager.io',
};

const report = (input: Partial<CertificateStatusInput> = {}) =>
  certificateStatusReport({
    certificate: certificateFrom(web),
    secret: undefined,
    requests: [],
    ...input,
  });

t.test('the Certificate part: what cmctl shows, the revision and the last failure', async (t) => {
  const status = {
    conditions: [ready],
    notBefore: '2026-01-01T00:00:00Z',
    notAfter: '2026-04-01T00:00:00Z',
    renewalTime: '2026-03-02T00:00:00Z',
    revision: 2,
    lastFailureTime: '2026-01-15T00:00:00Z',
    failedIssuanceAttempts: 1,
  };
  const {
    secret: _secret,
    requests: _requests,
    ...rest
  } = report({
    certificate: certificateFrom(web, withStatus(status)),
  });
  t.same(rest, {
    name: 'web',
    namespace: 'apps',
    createdAt: '2025-12-31T00:00:00Z',
    generation: 1,
    issuerRef: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    dnsNames: ['web.apps.svc'],
    conditions: [ready],
    notBefore: status.notBefore,
    notAfter: status.notAfter,
    renewalTime: status.renewalTime,
    revision: 2,
    lastFailureTime: status.lastFailureTime,
    failedIssuanceAttempts: 1,
  });
  const bare = report();
  t.same(
    Object.keys(bare).sort(),
    [
      'conditions',
      'createdAt',
      'dnsNames',
      'generation',
      'issuerRef',
      'name',
      'namespace',
      'requests',
      'secret',
    ],
    'no status: the unset fields are absent, not null',
  );
  t.same(bare.conditions, []);
});

t.test('the Secret: table of contents → report', async (t) => {
  const full = {
    'tls.crt': leaf.certificatePem,
    'tls.key': leaf.keyPem,
    'ca.crt': leaf.caPem,
  };
  // Expected: fields that must match (strings exactly, regular expressions by pattern).
  const cases: Array<[string, CertificateStatusInput['secret'], object]> = [
    ['missing', undefined, { name: 'web-tls', found: false, issuerAnnotations: {} }],
    [
      'unreadable',
      { error: 'secrets "web-tls" is forbidden' },
      { found: false, error: 'secrets "web-tls" is forbidden' },
    ],
    [
      'issued',
      secretFrom(webTls, withData(full), withAnnotations(issuerAnnotations)),
      {
        found: true,
        issuerAnnotations: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
        privateKey: 'matches',
        hasCA: true,
      },
    ],
    [
      'another key',
      secretFrom(webTls, withData({ ...full, 'tls.key': other.keyPem })),
      { privateKey: 'mismatch', issuerAnnotations: {} },
    ],
    [
      'no key, no CA',
      secretFrom(webTls, withData({ 'tls.crt': leaf.certificatePem })),
      { privateKey: 'missing', hasCA: false },
    ],
    [
      'a key that is not one',
      secretFrom(webTls, withData({ ...full, 'tls.key': 'junk' })),
      { privateKey: 'unreadable', privateKeyError: /no private key PEM block/ },
    ],
    [
      'no certificate',
      secretFrom(webTls, withData({ 'tls.key': leaf.keyPem })),
      { certificateError: 'tls.crt is not set', privateKey: 'present' },
    ],
    [
      'a certificate that is not one',
      secretFrom(
        webTls,
        withData({ 'tls.crt': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }),
      ),
      { certificateError: /^tls\.crt cannot be read: / },
    ],
    [
      'no PEM at all',
      secretFrom(webTls, withData({ 'tls.crt': 'hello' })),
      { certificateError: 'tls.crt cannot be read: no PEM certificate in it' },
    ],
  ];
  for (const [name, input, expected] of cases) {
    t.match(report({ secret: input }).secret, expected, name);
  }
  const issued = report({ secret: secretFrom(webTls, withData(full)) }).secret;
  t.same(issued.certificate, {
    subject: 'CN=web',
    issuer: 'CN=cert-csi test CA',
    serialNumber: leaf.serialNumber,
    notBefore: issued.certificate?.notBefore,
    notAfter: issued.certificate?.notAfter,
    publicKey: 'ECDSA P-256',
    dnsNames: ['web.apps.svc', 'web'],
    ipAddresses: [],
    uris: [],
    emailAddresses: [],
  });
  t.match(issued.certificate?.notAfter, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'seconds, UTC');
  t.notOk('certificate' in report({ secret: undefined }).secret, 'none without a Secret');
});

t.test("the requests: the gatherer's current and next, or why not", async (t) => {
  const owned = (name: string, revision: string, conditions: Condition[] = []) => {
    const request = revisionRequest(name, revision, { uid: 'crt-uid' });
    return {
      ...request,
      metadata: { ...request.metadata, creationTimestamp: '2026-01-01T00:00:00Z' },
      status: { conditions, failureTime: '2026-01-02T00:00:00Z' },
    };
  };
  const issued: Condition = { type: 'Ready', status: 'True', reason: 'Issued', message: 'ok' };
  const all: CertificateRequest[] = [
    owned('web-1', '1'),
    owned('web-2', '2', [issued]),
    owned('web-3', '3'),
    revisionRequest('foreign-3', '3', { uid: 'other-uid' }),
  ];
  const cases: Array<[string, Certificate['status'], CertificateStatusInput['requests'], object]> =
    [
      [
        'revision 2: requests 2 and 3',
        { revision: 2 },
        all,
        {
          currentRevision: 2,
          nextRevision: 3,
          current: {
            name: 'web-2',
            namespace: 'apps',
            createdAt: '2026-01-01T00:00:00Z',
            failureTime: '2026-01-02T00:00:00Z',
            conditions: [issued],
          },
          next: { name: 'web-3' },
        },
      ],
      ['no revision: next is 1', undefined, all, { nextRevision: 1, next: { name: 'web-1' } }],
      ['revision 3: nothing for 4 yet', { revision: 3 }, all, { current: { name: 'web-3' } }],
      [
        'duplicates: the gatherer’s message',
        { revision: 1 },
        [...all, owned('web-1b', '1')],
        {
          error:
            "multiple CertificateRequests were found for the 'current' revision 1, issuance is skipped until there are no more duplicates",
        },
      ],
      [
        'the list failed',
        { revision: 1 },
        { error: 'certificaterequests is forbidden' },
        { currentRevision: 1, nextRevision: 2, error: 'certificaterequests is forbidden' },
      ],
    ];
  for (const [name, status, requests, expected] of cases) {
    t.match(
      report({
        certificate: certificateFrom(web, ...(status ? [withStatus(status)] : [])),
        requests,
      }).requests,
      expected,
      name,
    );
  }
  const none = report({ certificate: certificateFrom(web), requests: all.slice(1) }).requests;
  t.same(none, { nextRevision: 1 }, 'no revision and no request 1: nothing to show');
});

t.test(
  'readCertificateStatus: from a store, the Secret and the namespace’s requests',
  async (t) => {
    const store = new MemoryStore();
    const created = await store.create(CertificateKind, certificateFrom(web));
    await store.updateStatus(CertificateKind, { ...created, status: { revision: 1 } });
    const uid = created.metadata.uid ?? '';
    const request = revisionRequest('web-1', '1', { uid });
    await store.create(CertificateRequestKind, request);
    await store.create(CertificateRequestKind, {
      ...revisionRequest('elsewhere-1', '1', { uid }),
      metadata: { ...request.metadata, name: 'elsewhere-1', namespace: 'other' },
    });
    const ref = { namespace: 'apps', name: 'web' };
    let read = await readCertificateStatus(store, ref);
    t.match(read, {
      revision: 1,
      secret: { name: 'web-tls', found: false },
      requests: { current: { name: 'web-1' } },
    });
    t.notOk(read.secret.error, 'a missing Secret is no error');
    await store.create(SecretKind, {
      ...secretFrom(webTls, withData({ 'tls.crt': leaf.certificatePem, 'tls.key': leaf.keyPem })),
    });
    read = await readCertificateStatus(store, ref);
    t.match(read.secret, { found: true, privateKey: 'matches' });

    await t.rejects(readCertificateStatus(store, { namespace: 'apps', name: 'nope' }), {
      name: 'CertificateNotFoundError',
      message: 'Certificate apps/nope not found',
    });
    const forbidden = new StoreError('Forbidden', 'forbidden here');
    const picky = {
      get: async <T>(kind: { kind: string }, name: string, namespace?: string): Promise<T> => {
        if (kind.kind === 'Secret') throw forbidden;
        return store.get(CertificateKind, name, namespace) as Promise<T>;
      },
      list: async () => {
        throw forbidden;
      },
    };
    read = await readCertificateStatus(picky as never, ref);
    t.match(read, {
      secret: { found: false, error: 'forbidden here' },
      requests: { error: 'forbidden here' },
    });
    const blind = {
      get: async () => {
        throw forbidden;
      },
      list: picky.list,
    };
    await t.rejects(readCertificateStatus(blind, ref), forbidden, 'the Certificate itself: thrown');
  },
);
