import { createHash, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { Certificate } from '../../src/api/certificate.js';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import {
  buildNextRequest,
  certificateRequestName,
  nextRequestPlan,
  type OwnedRequest,
} from '../../src/certificates/next-request-plan.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { revisionRequest } from './fixtures.js';

const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const otherKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;

const certificate: Certificate = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: {
    name: 'web',
    namespace: 'apps',
    uid: 'crt-uid',
    labels: { app: 'web' },
    annotations: { team: 'ops', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  },
  spec: {
    secretName: 'web-tls',
    issuerRef: { name: 'ca' },
    dnsNames: ['web.example.com'],
    usages: ['server auth'],
  },
  status: {
    revision: 1,
    conditions: [{ type: 'Issuing', status: 'True', lastTransitionTime: '2026-01-01T10:00:00Z' }],
  },
};

t.test('keep exactly one valid request for the next revision (as in cert-manager)', async (t) => {
  const csrPem = await createCsr({ key, dnsNames: ['web.example.com'] });
  const csr = await parseCsr(csrPem);
  const otherCsr = await parseCsr(
    await createCsr({ key: otherKey, dnsNames: ['web.example.com'] }),
  );
  const staleCsr = await parseCsr(await createCsr({ key, dnsNames: ['old.example.com'] }));
  const request = (
    name: string,
    revision: string | undefined,
    status?: CertificateRequest['status'],
  ): CertificateRequest => ({
    ...buildNextRequest({ certificate, revision: 2, keySecretName: 'web-key', csrPem }),
    metadata: revisionRequest(name, revision).metadata,
    ...(status ? { status } : {}),
  });
  const failed = (at: string): CertificateRequest['status'] => ({
    failureTime: at,
    conditions: [{ type: 'Ready', status: 'False', reason: 'Failed' }],
  });
  const plan = (owned: OwnedRequest[]) => {
    const result = nextRequestPlan({ certificate, owned, nextKey: key });
    return { ...result, remove: result.remove.map((r) => r.metadata.name) };
  };
  t.same(plan([]), { remove: [], create: true, duplicates: false }, 'none: create');
  t.same(
    plan([{ request: request('web-2', '2'), csr }]),
    { remove: [], create: false, duplicates: false },
    'a good one: nothing',
  );
  t.same(
    plan([
      { request: request('no-revision', undefined), csr },
      { request: request('bad-revision', 'two'), csr },
      { request: request('huge-revision', '99999999999999999999'), csr },
      { request: request('web-1', '1'), csr },
      { request: request('web-2', '2'), csr },
    ]),
    { remove: ['no-revision', 'bad-revision', 'huge-revision'], create: false, duplicates: false },
    'unreadable revisions (Atoi: none, words, beyond int64) go; other revisions are the revisionmanager’s',
  );
  t.same(
    plan([
      { request: request('stale', '2'), csr: staleCsr },
      { request: request('other-key', '2'), csr: otherCsr },
      { request: request('undecodable', '2'), csr: new Error('bad') },
    ]),
    { remove: ['stale', 'other-key', 'undecodable'], create: true, duplicates: false },
    'stale, other key, undecodable: replaced',
  );
  t.same(
    plan([
      { request: request('failed-before', '2', failed('2026-01-01T09:59:59Z')), csr },
      { request: request('failed-since', '2', failed('2026-01-01T10:00:01Z')), csr },
    ]),
    { remove: ['failed-before'], create: false, duplicates: false },
    'a failure of a previous attempt goes; this attempt’s failure stays (the issuing controller reports it)',
  );
  t.same(
    plan([
      { request: request('a', '2'), csr },
      { request: request('b', '2'), csr },
    ]),
    { remove: [], create: false, duplicates: true },
    'two good ones: wait for someone to delete one',
  );
});

t.test('the request: stable name, annotations, owner, spec as written', async (t) => {
  const built = buildNextRequest({
    certificate,
    revision: 2,
    keySecretName: 'web-x7k2p',
    csrPem: 'PEM',
  });
  t.same(built.metadata, {
    name: 'web-2',
    namespace: 'apps',
    labels: { app: 'web' },
    annotations: {
      team: 'ops',
      'cert-manager.io/certificate-revision': '2',
      'cert-manager.io/private-key-secret-name': 'web-x7k2p',
      'cert-manager.io/certificate-name': 'web',
    },
    ownerReferences: [
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        name: 'web',
        uid: 'crt-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  });
  t.same(built.spec, {
    request: Buffer.from('PEM').toString('base64'),
    issuerRef: { name: 'ca' },
    usages: ['server auth'],
  });
});

t.test('long Certificate names are shortened and hashed', async (t) => {
  t.equal(
    certificateRequestName('a'.repeat(233), 7),
    `${'a'.repeat(233)}-7`,
    '233 characters: as is',
  );
  const long = `${'a'.repeat(167)}.${'b'.repeat(100)}`;
  const hash = createHash('sha256').update(long).digest('hex');
  t.equal(
    certificateRequestName(long, 3),
    `${'a'.repeat(167)}-${hash}-3`,
    'cut on a letter, not after the dot',
  );
  t.ok(certificateRequestName('x'.repeat(300), 1).length <= 253, 'always a valid name length');
});

t.test('edges: no Issuing time, a name of dots, a bare Certificate', async (t) => {
  const csrPem = await createCsr({ key, dnsNames: ['web.example.com'] });
  const csr = await parseCsr(csrPem);
  const request: CertificateRequest = {
    ...buildNextRequest({ certificate, revision: 2, keySecretName: 'k', csrPem }),
    status: {
      failureTime: '2026-01-01T09:00:00Z',
      conditions: [{ type: 'Ready', status: 'False', reason: 'Failed' }],
    },
  };
  const noTime: Certificate = {
    ...certificate,
    status: { revision: 1, conditions: [{ type: 'Issuing', status: 'True' }] },
  };
  t.same(
    nextRequestPlan({ certificate: noTime, owned: [{ request, csr }], nextKey: key }).remove,
    [],
    'without the Issuing time a failed request is not known to be stale',
  );
  const dots = '.'.repeat(300);
  const hash = createHash('sha256').update(dots).digest('hex');
  t.equal(
    certificateRequestName(dots, 1),
    `${hash}-1`,
    'nothing alphanumeric to keep: the hash alone',
  );
  const bare: Certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'cluster-ca' },
    spec: { secretName: 's', issuerRef: { name: 'ca' }, isCA: true, duration: '8760h' },
  };
  const built = buildNextRequest({
    certificate: bare,
    revision: 1,
    keySecretName: 'k',
    csrPem: 'P',
  });
  t.same(
    [built.metadata.namespace, built.metadata.labels, built.metadata.ownerReferences?.[0]?.uid],
    [undefined, undefined, ''],
  );
  t.same(built.spec, {
    request: Buffer.from('P').toString('base64'),
    issuerRef: { name: 'ca' },
    duration: '8760h',
    isCA: true,
  });
});
