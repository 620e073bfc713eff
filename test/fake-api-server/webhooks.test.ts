import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type * as K8s from '@kubernetes/client-node';
import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { KubeObject } from '../../src/api/meta.js';
import {
  certificateRequest,
  clusterIssuer,
  issuer,
  type Modifier,
  withCsr,
  withIssuerRef,
  withLabels,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { clientNode as k8s } from '../support/client-node-full.js';
import { issueLeaf, makeSigner, newKey } from '../support/pod-certificate-fixtures.js';
import type { AdmissionReviewRequest } from './admission-review.js';
import { apiError } from './api-error.js';
import { FakeApiServer } from './fake-api-server.js';

// The fake API server calls admission webhooks over real TLS as kube-apiserver does: these
// tests run a small AdmissionReview server and write through the real client-node.

interface Teardown {
  teardown(fn: () => unknown): void;
}

const NS = 'team-a';
const HOOK_HOST = 'hook.webhooks.svc';
const CR = { group: 'cert-manager.io', version: 'v1', plural: 'certificaterequests' };
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const ALICE = {
  username: 'alice',
  uid: 'alice-uid-1',
  groups: ['dev'],
  extra: { 'scopes.example.com': ['read', 'write'] },
};

// One CA and one serving certificate for `hook.webhooks.svc` (and 127.0.0.1, for url configs).
const ca = await makeSigner('webhook CA');
const otherCa = await makeSigner('another CA');
const servingKey = await newKey();
const servingCert = await issueLeaf(ca, servingKey, {
  dnsNames: [HOOK_HOST],
  ipAddresses: ['127.0.0.1'],
});
const servingKeyPem = String(servingKey.export({ type: 'pkcs8', format: 'pem' }));
const caBundle = Buffer.from(ca.certificatePem).toString('base64');

/** What the webhook server received. */
interface Received {
  method: string;
  path: string;
  query: string;
  contentType: string | undefined;
  host: string | undefined;
  serverName: string | false | null;
  review: AdmissionReviewRequest;
}

type Answer =
  | Record<string, unknown>
  | { raw: { status: number; contentType: string; body: string } }
  | 'hang';

function allow(review: AdmissionReviewRequest, response: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: review.request.uid, allowed: true, ...response },
  };
}

function deny(review: AdmissionReviewRequest, status?: Record<string, unknown>) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: review.request.uid, allowed: false, ...(status && { status }) },
  };
}

function jsonPatch(operations: unknown[]) {
  return {
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(operations)).toString('base64'),
  };
}

function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => resolve(text));
  });
}

/** An HTTPS AdmissionReview server; answer decides each reply ('hang' never replies). */
async function startWebhookServer(
  t: Teardown,
  answer: (review: AdmissionReviewRequest, path: string) => Answer,
) {
  const received: Received[] = [];
  const server = createHttpsServer({ key: servingKeyPem, cert: servingCert });
  server.on('request', (req: IncomingMessage, res) => {
    void readText(req).then((text) => {
      const url = new URL(req.url as string, 'https://webhook');
      const review = JSON.parse(text) as AdmissionReviewRequest;
      received.push({
        method: req.method as string,
        path: url.pathname,
        query: url.search,
        contentType: req.headers['content-type'],
        host: req.headers.host,
        serverName: (req.socket as TLSSocket).servername,
        review,
      });
      const reply = answer(review, url.pathname);
      if (reply === 'hang') return;
      if ('raw' in reply) {
        const raw = reply.raw as { status: number; contentType: string; body: string };
        res.writeHead(raw.status, { 'Content-Type': raw.contentType });
        res.end(raw.body);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as { port: number };
  return { port, received };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createNetServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function clients(server: FakeApiServer, token: string) {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions(server.kubeConfig(token));
  return {
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    core: kc.makeApiClient(k8s.CoreV1Api),
    leases: kc.makeApiClient(k8s.CoordinationV1Api),
    admission: kc.makeApiClient(k8s.AdmissionregistrationV1Api),
  };
}

/** A fake API server whose Service webhooks/hook:443 routes to a webhook server answering with answer. */
async function start(
  t: Teardown,
  answer: (review: AdmissionReviewRequest, path: string) => Answer,
) {
  const server = await FakeApiServer.start();
  t.teardown(() => server.close());
  const hook = await startWebhookServer(t, answer);
  server.setServiceEndpoint('webhooks', 'hook', 443, { host: '127.0.0.1', port: hook.port });
  server.addToken('alice', ALICE);
  return {
    server,
    hook,
    admin: clients(server, server.adminToken),
    alice: clients(server, 'alice'),
  };
}

type Rule = K8s.V1RuleWithOperations;

const CR_RULE: Rule = {
  operations: ['CREATE', 'UPDATE'],
  apiGroups: ['cert-manager.io'],
  apiVersions: ['v1'],
  resources: ['certificaterequests', 'certificaterequests/status'],
};

/** A webhook behind the hook Service, trusting the test CA. */
function webhook(
  name: string,
  path: string,
  rules: Rule[],
  extra: Partial<K8s.V1ValidatingWebhook> = {},
): K8s.V1ValidatingWebhook {
  return {
    name,
    clientConfig: { service: { namespace: 'webhooks', name: 'hook', path }, caBundle },
    rules,
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

async function validating(
  api: K8s.AdmissionregistrationV1Api,
  name: string,
  webhooks: K8s.V1ValidatingWebhook[],
) {
  await api.createValidatingWebhookConfiguration({ body: { metadata: { name }, webhooks } });
}

async function mutating(
  api: K8s.AdmissionregistrationV1Api,
  name: string,
  webhooks: K8s.V1MutatingWebhook[],
) {
  await api.createMutatingWebhookConfiguration({ body: { metadata: { name }, webhooks } });
}

/** The CertificateRequests the cases send (with certificateRequest): in NS, for the Issuer ca. */
const inNs: Modifier<CertificateRequest>[] = [
  withNamespace(NS),
  withIssuerRef({ name: 'ca', kind: 'Issuer' }),
  withCsr('-----BEGIN'),
];

function createRequest(custom: K8s.CustomObjectsApi, body: KubeObject, fieldManager?: string) {
  return custom.createNamespacedCustomObject({
    ...CR,
    namespace: NS,
    body,
    ...(fieldManager && { fieldManager }),
  }) as Promise<KubeObject & { spec: Record<string, unknown>; status?: Record<string, unknown> }>;
}

t.test(
  'a mutating patch is applied before the validating webhooks, which see it; the reviews are as kube-apiserver sends them',
  async (t) => {
    const { server, hook, admin, alice } = await start(t, (review, path) => {
      if (path === '/validate') return allow(review);
      const request = review.request;
      if (request.subResource === 'status') {
        return allow(
          review,
          jsonPatch([
            { op: 'add', path: '/status/conditions/0/message', value: 'seen by the webhook' },
          ]),
        );
      }
      if (request.operation === 'CREATE') {
        return allow(review, jsonPatch([{ op: 'add', path: '/spec/username', value: 'alice' }]));
      }
      return allow(review);
    });
    await mutating(admin.admission, 'cert-csi-mutating', [
      webhook('mutate.cert-csi.io', '/mutate', [CR_RULE]),
    ]);
    await validating(admin.admission, 'cert-csi-validating', [
      webhook('validate.cert-csi.io', '/validate', [CR_RULE]),
    ]);

    const body = certificateRequest('cr-1', ...inNs);
    const created = await createRequest(alice.custom, body, 'kubectl');
    t.equal(created.spec.username, 'alice', 'the answer carries the patched object');
    const stored = (await admin.custom.getNamespacedCustomObject({
      ...CR,
      namespace: NS,
      name: 'cr-1',
    })) as typeof created;
    t.equal(stored.spec.username, 'alice', 'the patched object is stored');

    t.equal(hook.received.length, 2, 'one mutating call, then one validating call');
    const [mutate, validate] = hook.received as [Received, Received];
    t.equal(mutate.path, '/mutate');
    t.equal(validate.path, '/validate');
    for (const call of [mutate, validate]) {
      t.equal(call.method, 'POST');
      t.equal(call.query, '?timeout=10s', 'the default timeout, told to the webhook');
      t.equal(call.contentType, 'application/json');
      t.equal(call.host, `${HOOK_HOST}:443`);
      t.equal(call.serverName, HOOK_HOST, 'TLS server name of the Service');
      t.equal(call.review.apiVersion, 'admission.k8s.io/v1');
      t.equal(call.review.kind, 'AdmissionReview');
    }
    const { uid, object, ...request } = mutate.review.request;
    t.match(uid, /^[0-9a-f-]{36}$/, 'a fresh uid');
    t.not(validate.review.request.uid, uid, 'every call has its own uid');
    t.same(request, {
      kind: { group: 'cert-manager.io', version: 'v1', kind: 'CertificateRequest' },
      resource: { group: 'cert-manager.io', version: 'v1', resource: 'certificaterequests' },
      requestKind: { group: 'cert-manager.io', version: 'v1', kind: 'CertificateRequest' },
      requestResource: { group: 'cert-manager.io', version: 'v1', resource: 'certificaterequests' },
      name: 'cr-1',
      namespace: NS,
      operation: 'CREATE',
      userInfo: { ...ALICE, groups: ['dev', 'system:authenticated'] },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl' },
    });
    t.notOk('subResource' in request, 'no subResource for the object itself');
    t.same(object, body, 'the mutating webhook sees the object as written');
    t.equal(
      (validate.review.request.object as typeof created).spec.username,
      'alice',
      'the validating webhook sees the patched object',
    );

    t.same(
      server.webhookCalls.map((call) => [call.type, call.webhook, call.outcome, call.allowed]),
      [
        ['mutating', 'mutate.cert-csi.io', 'patched', true],
        ['validating', 'validate.cert-csi.io', 'allowed', true],
      ],
      'the call log',
    );
    const [logged] = server.webhookCalls;
    t.match(logged, {
      configuration: 'cert-csi-mutating',
      url: `https://${HOOK_HOST}:443/mutate?timeout=10s`,
      uid,
      operation: 'CREATE',
      group: 'cert-manager.io',
      resource: 'certificaterequests',
      subResource: '',
      namespace: NS,
      name: 'cr-1',
      error: undefined,
    });
    t.ok((logged?.latencyMs ?? -1) >= 0, 'latency is measured');

    // A status write: UPDATE of certificaterequests/status, with the stored object as old.
    hook.received.length = 0;
    const withStatus = {
      ...stored,
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Pending', message: '' }] },
    };
    const written = (await alice.custom.replaceNamespacedCustomObjectStatus({
      ...CR,
      namespace: NS,
      name: 'cr-1',
      body: withStatus,
    })) as typeof created;
    t.match(
      written.status,
      { conditions: [{ type: 'Ready', message: 'seen by the webhook' }] },
      'the status patch is applied',
    );
    const statusCall = hook.received[0]?.review.request;
    t.match(statusCall, {
      operation: 'UPDATE',
      subResource: 'status',
      requestSubResource: 'status',
      resource: { resource: 'certificaterequests' },
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
    });
    t.same(statusCall?.oldObject, stored, 'oldObject is the stored object');
    const validated = hook.received[1]?.review.request.object as typeof created | undefined;
    t.same(validated?.status, written.status, 'the validating webhook sees the status as stored');

    // A merge patch is admitted as an UPDATE with UpdateOptions, as upstream.
    hook.received.length = 0;
    await alice.custom.patchNamespacedCustomObject(
      { ...CR, namespace: NS, name: 'cr-1', body: { metadata: { labels: { team: 'a' } } } },
      mergePatch,
    );
    t.match(hook.received[0]?.review.request, {
      operation: 'UPDATE',
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
      object: { metadata: { labels: { team: 'a' } } },
    });
    t.notOk('subResource' in (hook.received[0]?.review.request ?? {}));
  },
);

t.test(
  "a denial refuses the write with the webhook's code and message; nothing is stored",
  async (t) => {
    const { server, hook, admin, alice } = await start(t, (review, path) => {
      const name = review.request.name;
      if (path === '/mutate') {
        return name === 'mutate-deny'
          ? deny(review, { message: 'not from this webhook' })
          : allow(review);
      }
      switch (name) {
        case 'forbidden':
          return deny(review, { code: 403, reason: 'Forbidden', message: 'spec is immutable' });
        case 'reason-only':
          return deny(review, { reason: 'NotAcceptable' });
        case 'warned':
          return allow(review, { warnings: ['spec.duration is short', 'a "quoted" word'] });
        default:
          return deny(review, { code: 200 });
      }
    });
    await mutating(admin.admission, 'm', [webhook('mutate.cert-csi.io', '/mutate', [CR_RULE])]);
    await validating(admin.admission, 'v', [
      webhook('validate.cert-csi.io', '/validate', [CR_RULE]),
    ]);

    const forbidden = await apiError(
      createRequest(alice.custom, certificateRequest('forbidden', ...inNs)),
      403,
    );
    t.match(forbidden, {
      kind: 'Status',
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: 'admission webhook "validate.cert-csi.io" denied the request: spec is immutable',
    });
    const reasonOnly = await apiError(
      createRequest(alice.custom, certificateRequest('reason-only', ...inNs)),
      400,
    );
    t.equal(
      reasonOnly.message,
      'admission webhook "validate.cert-csi.io" denied the request: NotAcceptable',
    );
    const bare = await apiError(
      createRequest(alice.custom, certificateRequest('bare', ...inNs)),
      400,
    );
    t.equal(
      bare.message,
      'admission webhook "validate.cert-csi.io" denied the request without explanation',
      'a code below 400 becomes 400, and no message reads as upstream',
    );
    t.equal(bare.status, 'Failure');

    const before = hook.received.length;
    const mutateDenied = await apiError(
      createRequest(alice.custom, certificateRequest('mutate-deny', ...inNs)),
      400,
    );
    t.equal(
      mutateDenied.message,
      'admission webhook "mutate.cert-csi.io" denied the request: not from this webhook',
    );
    t.equal(hook.received.length, before + 1, 'a mutating denial ends the write before validation');

    const { items } = (await admin.custom.listNamespacedCustomObject({ ...CR, namespace: NS })) as {
      items: unknown[];
    };
    t.equal(items.length, 0, 'no refused write was stored');
    t.same(
      server.webhookCalls.filter((call) => call.outcome === 'denied').map((call) => call.error),
      [forbidden.message, reasonOnly.message, bare.message, mutateDenied.message],
      'denials are logged with their message',
    );

    // Warnings come back as Warning headers (client-node ignores them; a raw request sees them).
    const response = await fetch(
      `${server.url}/apis/cert-manager.io/v1/namespaces/${NS}/certificaterequests`,
      {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${server.adminToken}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify(certificateRequest('warned', ...inNs)),
      },
    );
    t.equal(response.status, 201);
    t.equal(
      response.headers.get('warning'),
      '299 - "spec.duration is short", 299 - "a \\"quoted\\" word"',
    );
  },
);

t.test(
  'rules, scope and selectors decide which writes are sent; the rest make no call',
  async (t) => {
    const { server, admin, alice } = await start(t, (review) => allow(review));
    const all = (ops: string[], groups: string[], resources: string[], scope?: string): Rule => ({
      operations: ops,
      apiGroups: groups,
      apiVersions: ['*'],
      resources,
      ...(scope && { scope }),
    });
    await validating(admin.admission, 'selection', [
      webhook('namespaced.issuers.test', '/v', [
        all(['CREATE'], ['cert-manager.io'], ['issuers', 'clusterissuers'], 'Namespaced'),
      ]),
      webhook('cluster.scope.test', '/v', [all(['CREATE'], ['*'], ['*'], 'Cluster')]),
      webhook('object.only.test', '/v', [
        all(['UPDATE'], ['cert-manager.io'], ['certificaterequests']),
      ]),
      webhook('status.only.test', '/v', [all(['*'], ['*'], ['*/status'])]),
      webhook('labelled.secrets.test', '/v', [all(['*'], [''], ['secrets'])], {
        objectSelector: { matchLabels: { 'cert-csi.io/webhook': 'on' } },
      }),
      webhook(
        'prod.leases.test',
        '/v',
        [all(['CREATE'], ['coordination.k8s.io', ''], ['leases', 'namespaces'])],
        {
          namespaceSelector: {
            matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }],
          },
        },
      ),
      webhook(
        'prod.clusterissuers.test',
        '/v',
        [all(['CREATE'], ['cert-manager.io'], ['clusterissuers'])],
        {
          namespaceSelector: { matchLabels: { env: 'prod' } },
        },
      ),
    ]);
    const callsTo = (name: string) =>
      server.webhookCalls
        .filter((call) => call.webhook === name)
        .map(
          (call) =>
            `${call.operation} ${call.resource}${call.subResource ? `/${call.subResource}` : ''} ${call.namespace}/${call.name}`,
        );

    await alice.custom.createNamespacedCustomObject({
      group: 'cert-manager.io',
      version: 'v1',
      plural: 'issuers',
      namespace: NS,
      body: issuer('ns-issuer', withNamespace(NS), withSpec({ selfSigned: {} })),
    });
    await alice.custom.createClusterCustomObject({
      group: 'cert-manager.io',
      version: 'v1',
      plural: 'clusterissuers',
      body: clusterIssuer('cluster-issuer', withSpec({ selfSigned: {} })),
    });
    await alice.custom.deleteNamespacedCustomObject({
      group: 'cert-manager.io',
      version: 'v1',
      plural: 'issuers',
      namespace: NS,
      name: 'ns-issuer',
    });
    t.same(
      callsTo('namespaced.issuers.test'),
      [`CREATE issuers ${NS}/ns-issuer`],
      'Namespaced scope, CREATE only',
    );

    const created = await createRequest(alice.custom, certificateRequest('cr-1', ...inNs));
    const withStatus = (await alice.custom.replaceNamespacedCustomObjectStatus({
      ...CR,
      namespace: NS,
      name: 'cr-1',
      body: { ...created, status: { conditions: [] } },
    })) as KubeObject;
    await alice.custom.replaceNamespacedCustomObject({
      ...CR,
      namespace: NS,
      name: 'cr-1',
      body: { ...withStatus, metadata: { ...withStatus.metadata, labels: { x: 'y' } } },
    });
    t.same(
      callsTo('object.only.test'),
      [`UPDATE certificaterequests ${NS}/cr-1`],
      'a rule on the object is not called for status writes',
    );
    t.same(
      callsTo('status.only.test'),
      [`UPDATE certificaterequests/status ${NS}/cr-1`],
      '*/status is called only for status writes',
    );

    // objectSelector: the new object's labels or the old one's.
    const secret = (name: string, labels?: Record<string, string>): K8s.V1Secret => ({
      metadata: { name, ...(labels && { labels }) },
      stringData: { 'tls.crt': 'x' },
    });
    await alice.core.createNamespacedSecret({ namespace: NS, body: secret('plain') });
    await alice.core.createNamespacedSecret({
      namespace: NS,
      body: secret('marked', { 'cert-csi.io/webhook': 'on' }),
    });
    await alice.core.replaceNamespacedSecret({
      namespace: NS,
      name: 'marked',
      body: secret('marked'),
    });
    await alice.core.replaceNamespacedSecret({
      namespace: NS,
      name: 'marked',
      body: secret('marked', { other: 'label' }),
    });
    await alice.core.createNamespacedSecret({
      namespace: NS,
      body: secret('gone', { 'cert-csi.io/webhook': 'on' }),
    });
    await alice.core.deleteNamespacedSecret({ namespace: NS, name: 'gone' });
    t.same(
      callsTo('labelled.secrets.test'),
      [
        `CREATE secrets ${NS}/marked`,
        `UPDATE secrets ${NS}/marked`,
        `CREATE secrets ${NS}/gone`,
        `DELETE secrets ${NS}/gone`,
      ],
      'the label on the new object, then on the old one only; a delete is matched by the stored object',
    );

    // namespaceSelector: the labels of the request's Namespace; a Namespace by its own labels.
    const namespaces: Array<[string, string]> = [
      ['prod-ns', 'prod'],
      ['dev-ns', 'dev'],
    ];
    for (const [name, env] of namespaces) {
      await alice.core.createNamespace({ body: { metadata: { name, labels: { env } } } });
    }
    const lease = (name: string): K8s.V1Lease => ({
      metadata: { name },
      spec: { holderIdentity: 'x' },
    });
    await alice.leases.createNamespacedLease({ namespace: 'prod-ns', body: lease('l1') });
    await alice.leases.createNamespacedLease({ namespace: 'dev-ns', body: lease('l2') });
    t.same(
      callsTo('prod.leases.test'),
      ['CREATE namespaces /prod-ns', 'CREATE leases prod-ns/l1'],
      'a Namespace is matched by its own labels; a lease by its Namespace',
    );
    const missing = await apiError(
      alice.leases.createNamespacedLease({ namespace: 'ghost', body: lease('l3') }),
      404,
    );
    t.equal(
      missing.message,
      'namespaces "ghost" not found',
      'a missing Namespace is a 404, as upstream',
    );
    t.same(
      callsTo('prod.clusterissuers.test'),
      ['CREATE clusterissuers /cluster-issuer'],
      'cluster-scoped objects are not filtered by the namespaceSelector',
    );
    t.same(
      callsTo('cluster.scope.test'),
      [
        'CREATE clusterissuers /cluster-issuer',
        'CREATE namespaces /prod-ns',
        'CREATE namespaces /dev-ns',
      ],
      'Cluster scope: cluster-scoped objects and Namespaces',
    );
  },
);

t.test(
  "calls that fail: Fail refuses the write with upstream's 500, Ignore skips the webhook",
  async (t) => {
    const { server, hook, admin, alice } = await start(t, (review, path) => {
      switch (path) {
        case '/hang':
          return 'hang';
        case '/wrong-uid':
          return { ...allow(review), response: { uid: 'nope', allowed: true } };
        case '/broken':
          return { raw: { status: 500, contentType: 'text/plain', body: 'boom\n' } };
        case '/patch-on-validating':
          return allow(review, jsonPatch([]));
        default:
          return allow(review);
      }
    });
    const dead = await closedPort();
    server.setServiceEndpoint('webhooks', 'dead', 443, { host: '127.0.0.1', port: dead });
    server.setServiceEndpoint('webhooks', 'other', 443, { host: '127.0.0.1', port: hook.port });
    const caseOf = (
      label: string,
      name: string,
      path: string,
      extra: Partial<K8s.V1ValidatingWebhook> = {},
    ) =>
      webhook(name, path, [CR_RULE], {
        objectSelector: { matchLabels: { case: label } },
        ...extra,
      });
    const service = (name: string, path: string) => ({
      service: { namespace: 'webhooks', name, path },
      caBundle,
    });
    await validating(admin.admission, 'failures', [
      caseOf('timeout-fail', 'timeout.fail.test', '/hang', { timeoutSeconds: 1 }),
      caseOf('timeout-ignore', 'timeout.ignore.test', '/hang', {
        timeoutSeconds: 1,
        failurePolicy: 'Ignore',
      }),
      caseOf('refused', 'refused.fail.test', '/v', { clientConfig: service('dead', '/v') }),
      caseOf('no-service', 'missing.fail.test', '/v', { clientConfig: service('nowhere', '/v') }),
      caseOf('untrusted', 'untrusted.fail.test', '/v', {
        clientConfig: {
          ...service('hook', '/v'),
          caBundle: Buffer.from(otherCa.certificatePem).toString('base64'),
        },
      }),
      caseOf('wrong-name', 'wrong.name.test', '/v', { clientConfig: service('other', '/v') }),
      caseOf('garbage-ca', 'garbage.ca.test', '/v', {
        clientConfig: {
          ...service('hook', '/v'),
          caBundle: Buffer.from('not a certificate').toString('base64'),
        },
      }),
      caseOf('wrong-uid', 'wrong.uid.test', '/wrong-uid'),
      caseOf('broken', 'broken.fail.test', '/broken'),
      caseOf('broken-ignored', 'broken.ignored.test', '/broken', { failurePolicy: 'Ignore' }),
      caseOf('patch', 'patch.validating.test', '/patch-on-validating'),
    ]);
    const refusal = async (label: string) =>
      (
        await apiError(
          createRequest(
            alice.custom,
            certificateRequest(label, ...inNs, withLabels({ case: label })),
          ),
          500,
        )
      ).message;
    const prefix = (name: string) => `Internal error occurred: failed calling webhook "${name}": `;

    // Both hanging calls run at once: one timeout for the pair.
    const [timedOut, skipped] = await Promise.all([
      refusal('timeout-fail'),
      createRequest(
        alice.custom,
        certificateRequest('timeout-ignore', ...inNs, withLabels({ case: 'timeout-ignore' })),
      ),
    ]);
    t.equal(
      timedOut,
      `${prefix('timeout.fail.test')}failed to call webhook: Post "https://${HOOK_HOST}:443/hang?timeout=1s": context deadline exceeded`,
    );
    t.equal(
      skipped.metadata.name,
      'timeout-ignore',
      'Ignore: the write goes on without the webhook',
    );
    const timeoutCalls = server.webhookCalls.filter((call) => call.webhook.startsWith('timeout.'));
    t.same(timeoutCalls.map((call) => call.outcome).sort(), ['failed', 'ignored']);
    for (const call of timeoutCalls) {
      t.ok(
        call.latencyMs >= 990,
        `${call.webhook} waited its timeoutSeconds (${call.latencyMs} ms)`,
      );
      t.equal(call.allowed, undefined, 'no answer');
    }

    t.equal(
      await refusal('refused'),
      `${prefix('refused.fail.test')}failed to call webhook: Post "https://dead.webhooks.svc:443/v?timeout=10s": dial tcp 127.0.0.1:${dead}: connect: connection refused`,
    );
    t.equal(
      await refusal('no-service'),
      `${prefix('missing.fail.test')}failed to call webhook: Post "https://nowhere.webhooks.svc:443/v?timeout=10s": service "nowhere" not found`,
    );
    t.equal(
      await refusal('untrusted'),
      `${prefix('untrusted.fail.test')}failed to call webhook: Post "https://${HOOK_HOST}:443/v?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
    );
    t.equal(
      await refusal('wrong-name'),
      `${prefix('wrong.name.test')}failed to call webhook: Post "https://other.webhooks.svc:443/v?timeout=10s": tls: failed to verify certificate: x509: certificate is valid for ${HOOK_HOST}, not other.webhooks.svc`,
    );
    t.equal(
      await refusal('garbage-ca'),
      `${prefix('garbage.ca.test')}could not get REST client: unable to load root certificates: unable to parse bytes as PEM block`,
    );
    const wrongUid = await refusal('wrong-uid');
    const sentUid = server.webhookCalls.find((call) => call.webhook === 'wrong.uid.test')?.uid;
    t.equal(
      wrongUid,
      `${prefix('wrong.uid.test')}received invalid webhook response: expected response.uid="${sentUid}", got "nope"`,
    );
    t.equal(
      await refusal('broken'),
      `${prefix('broken.fail.test')}failed to call webhook: an error on the server ("boom") has prevented the request from succeeding`,
    );
    await createRequest(
      alice.custom,
      certificateRequest('broken-ignored', ...inNs, withLabels({ case: 'broken-ignored' })),
    );
    t.equal(
      await refusal('patch'),
      `${prefix('patch.validating.test')}received invalid webhook response: validating webhook may not return response.patch`,
    );

    const failed = await apiError(
      createRequest(
        alice.custom,
        certificateRequest('refused', ...inNs, withLabels({ case: 'refused' })),
      ),
      500,
    );
    t.match(failed, {
      reason: 'InternalError',
      code: 500,
      details: { causes: [{ message: /^failed calling webhook/ }] },
    });
    const { items } = (await admin.custom.listNamespacedCustomObject({ ...CR, namespace: NS })) as {
      items: KubeObject[];
    };
    t.same(
      items.map((item) => item.metadata.name).sort(),
      ['broken-ignored', 'timeout-ignore'],
      'only the writes whose failing webhook is Ignore were stored',
    );
    t.same(
      server.webhookCalls.find((call) => call.webhook === 'refused.fail.test'),
      {
        ...server.webhookCalls.find((call) => call.webhook === 'refused.fail.test'),
        outcome: 'failed',
        allowed: undefined,
        url: 'https://dead.webhooks.svc:443/v?timeout=10s',
        error: failed.message,
      },
      'a failed call is logged with the refusal',
    );
  },
);

t.test(
  'a write refused while the webhook is down succeeds once it is back, stored once',
  async (t) => {
    const { server, hook, admin, alice } = await start(t, (review) =>
      allow(
        review,
        jsonPatch([{ op: 'add', path: '/metadata/annotations', value: { admitted: 'yes' } }]),
      ),
    );
    await mutating(admin.admission, 'm', [webhook('mutate.cert-csi.io', '/m', [CR_RULE])]);
    server.setServiceEndpoint('webhooks', 'hook', 443, undefined);
    const down = await apiError(
      createRequest(alice.custom, certificateRequest('cr-1', ...inNs)),
      500,
    );
    t.match(
      down.message,
      /failed calling webhook "mutate.cert-csi.io": .*service "hook" not found$/,
    );
    const list = async () =>
      (
        (await admin.custom.listNamespacedCustomObject({ ...CR, namespace: NS })) as {
          items: KubeObject[];
        }
      ).items;
    t.same(await list(), [], 'nothing stored while the webhook is down');

    server.setServiceEndpoint('webhooks', 'hook', 443, { host: '127.0.0.1', port: hook.port });
    const created = await createRequest(alice.custom, certificateRequest('cr-1', ...inNs));
    t.same(created.metadata.annotations, { admitted: 'yes' });
    const items = await list();
    t.equal(items.length, 1, 'stored exactly once');
    t.equal(items[0]?.metadata.uid, created.metadata.uid);
    t.equal(hook.received.length, 1, 'the webhook saw the retried write once');
  },
);

t.test(
  'DELETE: the webhooks see the stored object as oldObject; a mutating one may not patch it',
  async (t) => {
    const { server, hook, admin, alice } = await start(t, (review, path) =>
      path === '/patching'
        ? allow(review, jsonPatch([{ op: 'remove', path: '/metadata/labels' }]))
        : allow(review),
    );
    const DELETE_SECRETS: Rule = {
      operations: ['DELETE'],
      apiGroups: [''],
      apiVersions: ['v1'],
      resources: ['secrets'],
    };
    await mutating(admin.admission, 'm', [
      webhook('patching.cert-csi.io', '/patching', [DELETE_SECRETS], {
        objectSelector: { matchLabels: { patch: 'yes' } },
      }),
    ]);
    await validating(admin.admission, 'v', [
      webhook('validate.cert-csi.io', '/v', [DELETE_SECRETS]),
    ]);
    const stored = await alice.core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 's1' }, data: { a: 'Yg==' } },
    });
    await alice.core.deleteNamespacedSecret({
      namespace: NS,
      name: 's1',
      body: { propagationPolicy: 'Background' },
    });
    const request = hook.received[0]?.review.request;
    t.match(request, {
      operation: 'DELETE',
      name: 's1',
      namespace: NS,
      object: null,
      options: {
        kind: 'DeleteOptions',
        apiVersion: 'meta.k8s.io/v1',
        propagationPolicy: 'Background',
      },
    });
    t.match(
      request?.oldObject,
      {
        metadata: {
          name: 's1',
          uid: stored.metadata?.uid,
          resourceVersion: stored.metadata?.resourceVersion,
        },
        data: { a: 'Yg==' },
      },
      'oldObject is the stored Secret',
    );

    await alice.core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 's2', labels: { patch: 'yes' } } },
    });
    const refused = await apiError(
      alice.core.deleteNamespacedSecret({ namespace: NS, name: 's2' }),
      500,
    );
    t.equal(
      refused.message,
      'Internal error occurred: admission webhook "patching.cert-csi.io" attempted to modify the object, which is not supported for this operation',
    );
    t.equal(
      (await admin.core.readNamespacedSecret({ namespace: NS, name: 's2' })).metadata?.name,
      's2',
      'still there',
    );
    t.equal(server.webhookCalls.at(-1)?.outcome, 'failed');
  },
);

t.test(
  'webhook configurations: defaulted and validated as kube-apiserver does, and never sent to webhooks',
  async (t) => {
    const { server, admin } = await start(t, (review) => allow(review));
    await mutating(admin.admission, 'defaults', [
      {
        name: 'm.cert-csi.io',
        clientConfig: { service: { namespace: 'webhooks', name: 'hook' } },
        rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ]);
    const read = await admin.admission.readMutatingWebhookConfiguration({ name: 'defaults' });
    t.match(read.webhooks?.[0], {
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      clientConfig: { service: { port: 443 } },
      rules: [{ scope: '*' }],
    });

    const invalid = await apiError(
      admin.admission.createValidatingWebhookConfiguration({
        body: {
          metadata: { name: 'bad' },
          webhooks: [
            {
              name: 'short',
              clientConfig: { url: 'http://example.com/x?y=1' },
              rules: [
                {
                  operations: ['GET' as never],
                  apiGroups: [''],
                  apiVersions: ['v1'],
                  resources: ['pods'],
                },
              ],
              timeoutSeconds: 31,
              admissionReviewVersions: ['v2'],
              matchConditions: [{ name: 'c', expression: 'true' }],
              // sideEffects left out on purpose: the server requires it.
            } as unknown as K8s.V1ValidatingWebhook,
            { ...webhook('dup.cert-csi.io', '/v', []), clientConfig: {} },
            webhook('dup.cert-csi.io', '/v', []),
          ],
        },
      }),
      422,
    );
    t.equal(
      invalid.message,
      'ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: [' +
        [
          'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
          'webhooks[0].rules[0].operations[0]: Unsupported value: "GET": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
          'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
          'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
          `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
          'webhooks[0].clientConfig.url: Invalid value: "y=1": query parameters are not permitted in the URL',
          'webhooks[0].matchConditions: Forbidden: not supported by the fake API server',
          'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
          'webhooks[1].clientConfig: Required value: exactly one of url or service is required',
          'webhooks[2].name: Duplicate value: "dup.cert-csi.io"',
        ].join(', ') +
        ']',
    );

    // A webhook for everything, unreachable and failing closed, still lets its own
    // configurations be written and removed: they are never sent to webhooks.
    await validating(admin.admission, 'everything', [
      webhook(
        'everything.cert-csi.io',
        '/v',
        [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
        { clientConfig: { service: { namespace: 'webhooks', name: 'nowhere' }, caBundle } },
      ),
    ]);
    await admin.admission.deleteMutatingWebhookConfiguration({ name: 'defaults' });
    await admin.admission.deleteValidatingWebhookConfiguration({ name: 'everything' });
    t.same(server.webhookCalls, [], 'no call for webhook configurations');
  },
);

t.test('a url clientConfig is called as written, verified against its caBundle', async (t) => {
  const { server, hook, admin, alice } = await start(t, (review) => allow(review));
  await validating(admin.admission, 'by-url', [
    webhook('url.cert-csi.io', '', [CR_RULE], {
      clientConfig: { url: `https://127.0.0.1:${hook.port}/by-url`, caBundle },
      timeoutSeconds: 3,
    }),
  ]);
  await createRequest(alice.custom, certificateRequest('cr-1', ...inNs));
  t.match(hook.received[0], {
    path: '/by-url',
    query: '?timeout=3s',
    host: `127.0.0.1:${hook.port}`,
  });
  t.equal(server.webhookCalls[0]?.url, `https://127.0.0.1:${hook.port}/by-url?timeout=3s`);
});

t.test(
  'patches kube-apiserver cannot use: a call failure under the failurePolicy, or a 500 whatever it says',
  async (t) => {
    const { server, admin, alice } = await start(t, (review, path) => {
      switch (path) {
        case '/merge-patch':
          return allow(review, {
            patchType: 'JSONPatch',
            patch: Buffer.from('{"spec":{}}').toString('base64'),
          });
        case '/wrong-type':
          return allow(review, {
            ...jsonPatch([{ op: 'add', path: '/spec/x', value: 1 }]),
            patchType: 'MergePatch',
          });
        case '/unapplicable':
          return allow(review, jsonPatch([{ op: 'remove', path: '/spec/missing' }]));
        case '/no-kind':
          return { response: { uid: review.request.uid, allowed: true } };
        default:
          return allow(review);
      }
    });
    const caseOf = (
      label: string,
      name: string,
      path: string,
      extra: Partial<K8s.V1MutatingWebhook> = {},
    ) =>
      webhook(name, path, [CR_RULE], {
        objectSelector: { matchLabels: { case: label } },
        ...extra,
      });
    await mutating(admin.admission, 'patches', [
      caseOf('merge-patch', 'merge.patch.test', '/merge-patch'),
      caseOf('wrong-type', 'wrong.type.test', '/wrong-type', { failurePolicy: 'Ignore' }),
      caseOf('unapplicable', 'unapplicable.patch.test', '/unapplicable', {
        failurePolicy: 'Ignore',
      }),
      caseOf('no-kind', 'no.kind.test', '/no-kind'),
    ]);
    const create = (label: string) =>
      createRequest(alice.custom, certificateRequest(label, ...inNs, withLabels({ case: label })));
    t.equal(
      (await apiError(create('merge-patch'), 500)).message,
      'Internal error occurred: failed calling webhook "merge.patch.test": received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    );
    const skipped = await create('wrong-type');
    t.equal(skipped.spec.x, undefined, 'Ignore: an unsupported patch type skips the webhook');
    t.match(server.webhookCalls.at(-1), {
      webhook: 'wrong.type.test',
      outcome: 'ignored',
      allowed: true,
      error: 'failed calling webhook "wrong.type.test": unsupported patch type "MergePatch"',
    });
    const unapplicable = await apiError(create('unapplicable'), 500);
    t.match(
      unapplicable.message,
      /^Internal error occurred: /,
      'a patch that does not apply fails the write even under Ignore',
    );
    t.equal(server.webhookCalls.at(-1)?.outcome, 'failed');
    t.match(
      (await apiError(create('no-kind'), 500)).message,
      /^Internal error occurred: failed calling webhook "no.kind.test": failed to call webhook: Object 'Kind' is missing in '\{"response":/,
    );
  },
);
