import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  type AdmissionDecision,
  AdmissionWebhookServer,
  MAX_REVIEW_BYTES,
} from '../../../src/admission/webhook/admission-server.js';
import type { AdmissionRequest } from '../../../src/api/admission-review.js';
import { recordingLogger } from '../../support/recording-logger.js';
import { httpsRequest, servedCertificate, servingCertificate } from '../../support/webhook-tls.js';

const PRIVATE_KEY =
  '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg-secret-key-material\n-----END PRIVATE KEY-----\n';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.a-service-account-token.signature';

const { issued, serving } = await servingCertificate();
const caPem = issued.caPem;

/** The decision of the next reviews, by endpoint; throwing handlers when a function throws. */
let answer: (endpoint: 'validate' | 'mutate', request: AdmissionRequest) => AdmissionDecision =
  () => ({
    allowed: true,
  });
const seen: AdmissionRequest[] = [];
let ready: { ready: true } | { ready: false; why: string } = { ready: true };
const logger = recordingLogger();
const server = await AdmissionWebhookServer.start({
  handlers: {
    validate: async (request) => {
      seen.push(request);
      return answer('validate', request);
    },
    mutate: async (request) => {
      seen.push(request);
      return answer('mutate', request);
    },
  },
  certificate: issued,
  logger,
  port: 0,
  host: '127.0.0.1',
  readiness: () => ready,
});
t.teardown(async () => {
  serving.stop();
  await server.close();
});

function review(request: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
}

const certificateRequestReview = {
  uid: '3f1c6e0a-7b4e-4c5a-9d1e-0a1b2c3d4e5f',
  kind: { group: 'cert-manager.io', version: 'v1', kind: 'CertificateRequest' },
  resource: { group: 'cert-manager.io', version: 'v1', resource: 'certificaterequests' },
  requestResource: { group: 'cert-manager.io', version: 'v1', resource: 'certificaterequests' },
  subResource: 'status',
  requestSubResource: 'status',
  name: 'web-1',
  namespace: 'team',
  operation: 'UPDATE',
  userInfo: {
    username: 'alice',
    uid: 'u-1',
    groups: ['developers', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/credential-id': ['JTI=1'] },
  },
  object: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'web-1', namespace: 'team', annotations: { token: TOKEN } },
    data: { 'tls.key': Buffer.from(PRIVATE_KEY).toString('base64') },
    stringData: { 'tls.key': PRIVATE_KEY },
  },
  oldObject: { metadata: { name: 'web-1', namespace: 'team' } },
};

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  return httpsRequest(server.port, caPem, { path, body, headers });
}

t.test('a review is answered with the same uid over TLS the API server can verify', async (t) => {
  answer = () => ({ allowed: true });
  const res = await post('/validate', review(certificateRequestReview));
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'application/json');
  t.same(JSON.parse(res.text), {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: certificateRequestReview.uid, allowed: true },
  });
  const request = seen.at(-1);
  t.same(request?.userInfo, certificateRequestReview.userInfo, 'the requester reaches the handler');
  t.equal(request?.operation, 'UPDATE');
  t.equal(request?.object?.metadata.name, 'web-1');
});

t.test('a refusal carries its code, reason and message in a Failure status', async (t) => {
  answer = () => ({
    allowed: false,
    code: 406,
    reason: 'NotAcceptable',
    message: 'spec: Forbidden: no',
  });
  const res = await post('/validate', review(certificateRequestReview));
  t.same(JSON.parse(res.text).response, {
    uid: certificateRequestReview.uid,
    allowed: false,
    status: {
      status: 'Failure',
      code: 406,
      reason: 'NotAcceptable',
      message: 'spec: Forbidden: no',
      metadata: {},
    },
  });
});

t.test('a mutation answers a base64 JSON Patch; an empty one answers no patch', async (t) => {
  const patch = [{ op: 'add', path: '/spec/username', value: 'alice' }];
  answer = (endpoint) => (endpoint === 'mutate' ? { allowed: true, patch } : { allowed: true });
  const res = JSON.parse(
    (await post('/mutate', review({ ...certificateRequestReview, operation: 'CREATE' }))).text,
  );
  t.equal(res.response.patchType, 'JSONPatch');
  t.same(JSON.parse(Buffer.from(res.response.patch, 'base64').toString('utf8')), patch);
  answer = () => ({ allowed: true, patch: [] });
  const empty = JSON.parse((await post('/mutate', review(certificateRequestReview))).text);
  t.same(
    empty.response,
    { uid: certificateRequestReview.uid, allowed: true },
    'no patch, no patchType',
  );
});

t.test(
  'a handler that fails refuses as an internal error; only the log has the cause',
  async (t) => {
    logger.records.length = 0;
    answer = () => {
      // What a rule tripping over an unexpected value throws: JavaScript's words, not the request's.
      throw new TypeError(`Cannot read properties of undefined (reading '${'x'.repeat(300)}')`);
    };
    const res = JSON.parse((await post('/validate', review(certificateRequestReview))).text);
    t.same(res.response.status, {
      status: 'Failure',
      code: 500,
      reason: 'InternalError',
      message: `internal error: the webhook failed to decide review "${certificateRequestReview.uid}"; its log has the cause`,
      metadata: {},
    });
    t.equal(res.response.allowed, false);
    const failed = logger.records.find(([, , msg]) => msg === 'admission handler failed');
    t.match(failed, [
      'error',
      {
        endpoint: 'validate',
        uid: certificateRequestReview.uid,
        errorType: 'TypeError',
        error: /^Cannot read properties of undefined \(reading 'x+…\(348 characters\)$/,
      },
    ]);
    t.notMatch(res.response.status.message, /Cannot read|x{10}/, 'the answer names no internals');
  },
);

t.test('what is not a usable AdmissionReview v1 gets HTTP 400 saying what is wrong', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['not JSON', '{"apiVersion":', /^malformed AdmissionReview: the body is not valid JSON\n$/],
    [
      'a number and a boolean',
      JSON.stringify({ apiVersion: 1, kind: true, request: {} }),
      /got a number and a boolean\n$/,
    ],
    [
      'no apiVersion, a null kind',
      JSON.stringify({ kind: null, request: {} }),
      /^malformed AdmissionReview: expected apiVersion admission.k8s.io\/v1 and kind AdmissionReview, got nothing and null\n$/,
    ],
    [
      'a kind that is no string (and cannot be made one)',
      JSON.stringify({
        apiVersion: { toString: 1 },
        kind: ['AdmissionReview'],
        request: {},
      }),
      /^malformed AdmissionReview: expected apiVersion admission.k8s.io\/v1 and kind AdmissionReview, got an object and a list\n$/,
    ],
    ['an array', '[]', /must be a JSON object/],
    [
      'another version',
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1beta1',
        kind: 'AdmissionReview',
        request: {},
      }),
      /expected apiVersion admission.k8s.io\/v1 and kind AdmissionReview, got "admission.k8s.io\/v1beta1" and "AdmissionReview"/,
    ],
    [
      'no request',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      /request must be an object/,
    ],
    [
      'no uid',
      review({ ...certificateRequestReview, uid: '' }),
      /request.uid must be a non-empty string/,
    ],
    [
      'a bad operation',
      review({ ...certificateRequestReview, operation: 'PATCH' }),
      /request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, got "PATCH"/,
    ],
    [
      'no resource',
      review({ ...certificateRequestReview, resource: 'x' }),
      /request.resource must be an object/,
    ],
    [
      'an empty resource',
      review({ ...certificateRequestReview, resource: { group: '', version: 'v1', resource: '' } }),
      /request.resource.resource must not be empty/,
    ],
    [
      'a bad requestResource',
      review({ ...certificateRequestReview, requestResource: { group: 1 } }),
      /request.requestResource.group must be a string/,
    ],
    [
      'a numeric name',
      review({ ...certificateRequestReview, name: 5 }),
      /request.name must be a string/,
    ],
    [
      'no user',
      review({ ...certificateRequestReview, userInfo: undefined }),
      /request.userInfo must be an object/,
    ],
    [
      'a user without name',
      review({ ...certificateRequestReview, userInfo: {} }),
      /request.userInfo.username must be a string/,
    ],
    [
      'a bad user uid',
      review({ ...certificateRequestReview, userInfo: { username: 'a', uid: 1 } }),
      /request.userInfo.uid must be a string/,
    ],
    [
      'bad groups',
      review({ ...certificateRequestReview, userInfo: { username: 'a', groups: [1] } }),
      /groups must be a list of strings/,
    ],
    [
      'bad extra',
      review({ ...certificateRequestReview, userInfo: { username: 'a', extra: { k: 'v' } } }),
      /extra must map strings to lists of strings/,
    ],
    [
      'an object without metadata',
      review({ ...certificateRequestReview, object: { spec: {} } }),
      /request.object must be a Kubernetes object with metadata/,
    ],
    [
      'a bad oldObject',
      review({ ...certificateRequestReview, oldObject: 'x' }),
      /request.oldObject must be a Kubernetes object/,
    ],
    [
      'a bad dryRun',
      review({ ...certificateRequestReview, dryRun: 'yes' }),
      /request.dryRun must be a boolean/,
    ],
  ];
  const before = seen.length;
  for (const [what, body, message] of cases) {
    const res = await post('/validate', body);
    t.equal(res.status, 400, `${what}: 400`);
    t.match(res.text, message, `${what}: ${res.text.trim()}`);
  }
  t.equal(seen.length, before, 'no handler saw any of them');
});

t.test('null objects (a DELETE) are read as absent', async (t) => {
  answer = () => ({ allowed: true });
  const res = await post(
    '/validate',
    review({ ...certificateRequestReview, operation: 'DELETE', object: null, oldObject: null }),
  );
  t.equal(res.status, 200);
  t.notOk('object' in (seen.at(-1) ?? {}), 'no object');
  t.notOk('oldObject' in (seen.at(-1) ?? {}), 'no oldObject');
});

t.test('wrong method, content type, size or path are refused before any review', async (t) => {
  const get = await httpsRequest(server.port, caPem, { method: 'GET', path: '/validate' });
  t.equal(get.status, 405);
  t.equal(get.headers.allow, 'POST');
  const text = await post('/validate', review(certificateRequestReview), {
    'Content-Type': 'text/plain',
  });
  t.equal(text.status, 415);
  t.match(text.text, 'content type "text/plain" is not supported: send application/json');
  const big = await post('/validate', ' '.repeat(MAX_REVIEW_BYTES + 1));
  t.equal(big.status, 413);
  t.match(big.text, `larger than ${MAX_REVIEW_BYTES} bytes`);
  const untyped = await httpsRequest(server.port, caPem, { path: '/validate' });
  t.equal(untyped.status, 415, 'no content type');
  t.match(untyped.text, 'content type "" is not supported');
  const unknown = await post('/convert', review(certificateRequestReview));
  t.equal(unknown.status, 404);
  t.match(unknown.text, 'no such endpoint: /convert');
  // A target no URL parser takes: refused, and the server (the process) lives on.
  const malformed = await httpsRequest(server.port, caPem, { method: 'GET', path: 'http://[' });
  t.equal(malformed.status, 400);
  t.match(malformed.text, 'malformed request target');
  t.equal((await httpsRequest(server.port, caPem, { method: 'GET', path: '/livez' })).status, 200);
});

t.test('livez always, readyz when ready, both GET only', async (t) => {
  t.equal((await httpsRequest(server.port, caPem, { method: 'GET', path: '/livez' })).status, 200);
  ready = { ready: false, why: 'the caBundle does not trust the serving certificate yet' };
  const notReady = await httpsRequest(server.port, caPem, { method: 'GET', path: '/readyz' });
  t.equal(notReady.status, 503);
  t.match(notReady.text, 'not ready: the caBundle does not trust the serving certificate yet');
  ready = { ready: true };
  t.equal((await httpsRequest(server.port, caPem, { method: 'GET', path: '/readyz' })).status, 200);
  const post = await httpsRequest(server.port, caPem, {
    method: 'POST',
    path: '/readyz',
    body: '{}',
  });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, 'GET, HEAD');
});

t.test('one log line per review, without objects, keys, tokens or messages', async (t) => {
  logger.records.length = 0;
  answer = () => ({
    allowed: false,
    code: 406,
    reason: 'NotAcceptable',
    message: `metadata.annotations: ${TOKEN}`,
  });
  await post('/validate', review(certificateRequestReview));
  answer = () => ({
    allowed: true,
    patch: [{ op: 'add', path: '/spec/username', value: 'alice' }],
  });
  await post(
    '/mutate',
    review({
      ...certificateRequestReview,
      operation: 'CREATE',
      subResource: undefined,
      requestSubResource: undefined,
    }),
  );
  const { name: _n, namespace: _ns, ...clusterWide } = certificateRequestReview;
  await post(
    '/validate',
    review({
      ...clusterWide,
      operation: 'CREATE',
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      requestResource: undefined,
      subResource: undefined,
      requestSubResource: undefined,
    }),
  );
  const reviews = logger.records.filter(([, , msg]) => msg === 'admission review');
  t.equal(reviews.length, 3, 'one line each');
  const third = reviews[2]?.[1] as Record<string, unknown>;
  t.equal(third.resource, 'namespaces', 'a core resource, without a group');
  t.notOk('name' in third || 'namespace' in third, 'no name or namespace when the review has none');
  const [first, second] = reviews.map(
    ([level, obj]) => ({ level, ...obj }) as Record<string, unknown>,
  );
  t.match(first, {
    level: 'info',
    endpoint: 'validate',
    uid: certificateRequestReview.uid,
    operation: 'UPDATE',
    resource: 'certificaterequests.cert-manager.io/status',
    namespace: 'team',
    name: 'web-1',
    user: 'alice',
    allowed: false,
    code: 406,
    reason: 'NotAcceptable',
  });
  t.type(first?.latencyMs, 'number');
  t.match(second, {
    endpoint: 'mutate',
    operation: 'CREATE',
    resource: 'certificaterequests.cert-manager.io',
    allowed: true,
    patched: true,
  });
  const text = JSON.stringify(logger.records);
  for (const secret of [
    TOKEN,
    'secret-key-material',
    Buffer.from(PRIVATE_KEY).toString('base64').slice(0, 40),
    'PRIVATE KEY',
  ]) {
    t.notOk(text.includes(secret), `the log never holds ${secret.slice(0, 20)}…`);
  }
  t.notOk(text.includes('developers'), 'nor the groups of the requester');
});

t.test('a new certificate is served to new connections, without a restart', async (t) => {
  const before = await servedCertificate(server.port);
  t.ok(before.equals(new X509Certificate(issued.certificatePem).raw), 'the first certificate');
  await serving.renewNow();
  const next = serving.current;
  if (!next) throw new Error('no certificate after renewal');
  server.setCertificate(next);
  const after = await servedCertificate(server.port);
  t.ok(after.equals(new X509Certificate(next.certificatePem).raw), 'the new certificate');
  t.notOk(after.equals(before), 'not the old one');
  const res = await post('/validate', review(certificateRequestReview));
  t.equal(res.status, 200, 'the API server still verifies it: same CA, same names');
});
