import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { WebhookCa } from '../../src/admission/webhook/webhook-ca.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { silentLogger } from '../../src/api/logger.js';
import { type Secret, SecretKind, secretValue } from '../../src/api/secret.js';
import {
  type MutatingWebhookConfiguration,
  MutatingWebhookConfigurationKind,
  type ValidatingWebhookConfiguration,
  ValidatingWebhookConfigurationKind,
} from '../../src/api/webhook-configuration.js';
import { ManualClock } from '../../src/base/clock.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { apiError } from '../fake-api-server/api-error.js';
import {
  certificateRequest,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { until } from '../support/eventually.js';
import { keyAndCsr } from '../support/issuer-fixtures.js';
import { recordingLogger } from '../support/recording-logger.js';
import { startWebhookCluster, WEBHOOK_USER } from '../support/webhook-cluster.js';
import { httpsRequest } from '../support/webhook-tls.js';

// Test users: developers may write requests and their status and Certificates; approvers
// hold `approve` on cert-manager.io signers, each by a ClusterRole of its own.
const USERS_RBAC = parseAllDocuments(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: developer}
rules:
- {apiGroups: [cert-manager.io], resources: [certificaterequests], verbs: [create, get, update]}
- {apiGroups: [cert-manager.io], resources: [certificaterequests/status], verbs: [update]}
- {apiGroups: [cert-manager.io], resources: [certificates], verbs: [create, get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: developers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: developer}
subjects: [{kind: Group, name: developers}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: approve-every-issuer}
rules:
- {apiGroups: [cert-manager.io], resources: [signers], verbs: [approve], resourceNames: ['issuers.cert-manager.io/*']}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: approve-every-issuer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: approve-every-issuer}
subjects: [{kind: User, name: wanda}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: approve-team-ca}
rules:
- {apiGroups: [cert-manager.io], resources: [signers], verbs: [approve], resourceNames: [issuers.cert-manager.io/team.ca]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: approve-team-ca}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: approve-team-ca}
subjects: [{kind: User, name: erin}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: approve-root}
rules:
- {apiGroups: [cert-manager.io], resources: [signers], verbs: [approve], resourceNames: [clusterissuers.cert-manager.io/root]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: approve-root}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: approve-root}
subjects: [{kind: User, name: carl}]
`).map((d) => d.toJS());

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.signature-of-a-token';
const NAMESPACE = 'team';
const GROUP = { group: 'cert-manager.io', version: 'v1' };
const CR = { ...GROUP, plural: 'certificaterequests', namespace: NAMESPACE };

const logger = recordingLogger();
const w = await startWebhookCluster(t, { extraRbac: USERS_RBAC });
const { server } = w.cluster;
const users = {
  alice: {
    username: 'alice',
    uid: 'u-alice',
    groups: ['developers'],
    extra: { 'example.com/team': ['a'] },
  },
  wanda: { username: 'wanda', uid: 'u-wanda', groups: ['developers'] },
  erin: { username: 'erin', uid: 'u-erin', groups: ['developers'] },
  carl: { username: 'carl', uid: 'u-carl', groups: ['developers'] },
};
for (const [name, identity] of Object.entries(users)) server.addToken(name, identity);
await w.start({ logger });

const { csrPem, keyPem } = await keyAndCsr(
  { algorithm: 'ECDSA', size: 256 },
  { subject: { commonName: 'web' }, dnsNames: ['web.team.svc'] },
);

let serial = 0;
/** Creates a request as user through client-node (forging another identity); returns it as stored. */
async function create(
  user: string,
  issuerRef: CertificateRequest['spec']['issuerRef'] = {
    name: 'ca',
    kind: 'Issuer',
    group: 'cert-manager.io',
  },
): Promise<CertificateRequest> {
  const body = certificateRequest(
    `web-${++serial}`,
    withNamespace(NAMESPACE),
    withSpec({
      issuerRef,
      username: 'system:admin',
      groups: ['system:masters'],
      uid: 'forged',
    }),
    withCsr(csrPem),
  );
  return (await w.api(user).createNamespacedCustomObject({ ...CR, body })) as CertificateRequest;
}

function withCondition(cr: CertificateRequest, type: 'Approved' | 'Denied'): CertificateRequest {
  return {
    ...cr,
    status: {
      conditions: [{ type, status: 'True', reason: 'test', message: `${type} by a test` }],
    },
  };
}

async function setStatus(user: string, cr: CertificateRequest) {
  return w
    .api(user)
    .replaceNamespacedCustomObjectStatus({ ...CR, name: cr.metadata.name, body: cr });
}

t.test('the webhook made its CA, and both configurations trust it', async (t) => {
  const secret = await server.store.get<Secret>(
    SecretKind,
    w.settings.caSecretName,
    w.settings.namespace,
  );
  t.equal(secret.type, 'kubernetes.io/tls');
  const bundle = secretValue(secret, 'ca.crt') ?? '';
  t.match(bundle, /BEGIN CERTIFICATE/);
  for (const [kind, name] of [
    [ValidatingWebhookConfigurationKind, w.settings.validatingWebhookConfiguration],
    [MutatingWebhookConfigurationKind, w.settings.mutatingWebhookConfiguration],
  ] as const) {
    const configuration = await server.store.get<
      ValidatingWebhookConfiguration | MutatingWebhookConfiguration
    >(kind, name ?? '');
    for (const webhook of configuration.webhooks ?? []) {
      t.equal(
        Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString(),
        bundle,
        `${webhook.name}`,
      );
    }
  }
  t.ok(w.webhook.ready());
});

t.test('a forged username and groups are replaced with the creator’s', async (t) => {
  const cr = await create('alice');
  t.same(
    { username: cr.spec.username, uid: cr.spec.uid, groups: cr.spec.groups, extra: cr.spec.extra },
    {
      username: 'alice',
      uid: 'u-alice',
      groups: ['developers', 'system:authenticated'],
      extra: { 'example.com/team': ['a'] },
    },
  );
  const stored = await server.store.get<CertificateRequest>(
    CertificateRequestKind,
    cr.metadata.name,
    NAMESPACE,
  );
  t.equal(stored.spec.username, 'alice', 'as stored');
  const calls = server.webhookCalls.filter((c) => c.name === cr.metadata.name);
  t.same(
    calls.map((c) => [c.type, c.outcome]),
    [
      ['mutating', 'patched'],
      ['validating', 'allowed'],
    ],
  );
});

t.test('a spec change is refused, naming the field', async (t) => {
  const cr = await create('alice');
  const changed = { ...cr, spec: { ...cr.spec, duration: '1h0m0s' } };
  const status = await apiError(
    w.api('alice').replaceNamespacedCustomObject({ ...CR, name: cr.metadata.name, body: changed }),
    406,
  );
  t.equal(
    status.message,
    'admission webhook "certificaterequests.webhook.cert-csi.io" denied the request: spec: Forbidden: cannot change spec after creation',
  );
  const identity = { ...cr, spec: { ...cr.spec, username: 'mallory' } };
  const denied = await apiError(
    w.api('alice').replaceNamespacedCustomObject({ ...CR, name: cr.metadata.name, body: identity }),
    406,
  );
  t.match(denied.message, 'spec.username: Forbidden: username identity cannot be changed once set');
});

t.test('a user without approve can neither approve nor deny', async (t) => {
  const cr = await create('alice');
  for (const type of ['Approved', 'Denied'] as const) {
    const status = await apiError(setStatus('alice', withCondition(cr, type)), 406);
    t.equal(
      status.message,
      'admission webhook "certificaterequests.webhook.cert-csi.io" denied the request: status.conditions: Forbidden: user "alice" does not have permissions to set approved/denied conditions for issuer {ca Issuer cert-manager.io}',
      type,
    );
  }
  const stored = await server.store.get<CertificateRequest>(
    CertificateRequestKind,
    cr.metadata.name,
    NAMESPACE,
  );
  t.same(stored.status?.conditions ?? [], [], 'nothing was set');
});

t.test('approve on issuers.cert-manager.io/* or on the exact issuer grants it', async (t) => {
  const byWildcard = await create('alice');
  await setStatus('wanda', withCondition(byWildcard, 'Approved'));
  const byExact = await create('alice');
  await setStatus('erin', withCondition(byExact, 'Denied'));
  const elsewhere = await create('alice', {
    name: 'other',
    kind: 'Issuer',
    group: 'cert-manager.io',
  });
  const status = await apiError(setStatus('erin', withCondition(elsewhere, 'Approved')), 406);
  t.match(
    status.message,
    'user "erin" does not have permissions to set approved/denied conditions for issuer {other Issuer cert-manager.io}',
  );
  const cluster = await create('alice', {
    name: 'root',
    kind: 'ClusterIssuer',
    group: 'cert-manager.io',
  });
  await setStatus('carl', withCondition(cluster, 'Approved'));
  const notCarls = await create('alice', { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' });
  await apiError(setStatus('carl', withCondition(notCarls, 'Approved')), 406);
  const conditions = async (name: string) =>
    (
      await server.store.get<CertificateRequest>(CertificateRequestKind, name, NAMESPACE)
    ).status?.conditions?.map((c) => c.type);
  t.same(await conditions(byWildcard.metadata.name), ['Approved']);
  t.same(await conditions(byExact.metadata.name), ['Denied']);
  t.same(await conditions(cluster.metadata.name), ['Approved']);
  const reviews = server.requests.filter((r) => r.resource === 'subjectaccessreviews');
  t.ok(reviews.length > 0, 'SubjectAccessReviews were asked');
  t.same(
    [...new Set(reviews.map((r) => `${r.user} ${r.status}`))],
    [`${WEBHOOK_USER} 201`],
    'by the webhook, and answered',
  );
});

t.test('an invalid Certificate is refused naming the field path', async (t) => {
  const body = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: NAMESPACE, annotations: { 'example.com/token': TOKEN } },
    spec: { secretName: 'web-tls', commonName: 'web', duration: '30m', issuerRef: { name: 'ca' } },
  };
  const status = await apiError(
    w.api('alice').createNamespacedCustomObject({
      ...GROUP,
      plural: 'certificates',
      namespace: NAMESPACE,
      body,
    }),
    406,
  );
  t.equal(
    status.message,
    'admission webhook "resources.webhook.cert-csi.io" denied the request: spec.duration: Invalid value: 30m0s: certificate duration must be greater than 1h0m0s',
  );
});

t.test('with the webhook down writes are refused, and succeed once it is back', async (t) => {
  await w.stop();
  const body = certificateRequest(
    'while-down',
    withNamespace(NAMESPACE),
    withIssuerRef({ name: 'ca' }),
    withCsr(csrPem),
  );
  const status = await apiError(w.api('alice').createNamespacedCustomObject({ ...CR, body }), 500);
  t.match(
    status.message,
    /^Internal error occurred: failed calling webhook "certificaterequests.webhook.cert-csi.io": failed to call webhook: Post "https:\/\/cert-csi-webhook.cert-csi.svc:443\/mutate\?timeout=10s": /,
  );
  t.equal(
    (await server.store.list(CertificateRequestKind, { namespace: NAMESPACE })).items.filter(
      (o) => o.metadata.name === 'while-down',
    ).length,
    0,
    'nothing stored',
  );
  const before = (
    await server.store.get<Secret>(SecretKind, w.settings.caSecretName, w.settings.namespace)
  ).data;
  await w.start({ logger });
  const created = (await w
    .api('alice')
    .createNamespacedCustomObject({ ...CR, body })) as CertificateRequest;
  t.equal(created.spec.username, 'alice');
  const named = (
    await server.store.list(CertificateRequestKind, { namespace: NAMESPACE })
  ).items.filter((o) => o.metadata.name === 'while-down');
  t.equal(named.length, 1, 'the object exists once');
  t.same(
    (await server.store.get<Secret>(SecretKind, w.settings.caSecretName, w.settings.namespace))
      .data,
    before,
    'the restarted webhook kept the CA',
  );
});

t.test('a CA replaced by another writer is trusted and served within moments', async (t) => {
  const other = new WebhookCa({
    store: new MemoryStore(),
    namespace: w.settings.namespace,
    secretName: w.settings.caSecretName,
    logger: silentLogger,
  });
  const foreign = await other.ensure();
  const stored = await server.store.get<Secret>(
    SecretKind,
    w.settings.caSecretName,
    w.settings.namespace,
  );
  await server.store.update(SecretKind, { ...stored, data: foreign.data });
  const newCa = secretValue(foreign, 'ca.crt') ?? '';
  const served = await until(
    async () => {
      try {
        const res = await httpsRequest(w.webhook.port, newCa, { method: 'GET', path: '/readyz' });
        return res.status === 200;
      } catch {
        return false;
      }
    },
    { what: 'a serving certificate from the new CA, trusted', timeoutMs: 20_000 },
  );
  t.ok(served, 'the webhook serves a certificate the new CA verifies, and is ready');
  const cr = await until(async () => create('alice').catch(() => undefined), {
    what: 'a write through the webhook',
    timeoutMs: 20_000,
  });
  t.equal(cr.spec.username, 'alice', 'the API server reaches it again');
});

t.test('one log line per review, never a key, a token or an object', async (t) => {
  const reviews = logger.records.filter(([, , msg]) => msg === 'admission review');
  t.ok(reviews.length >= 10, `${reviews.length} reviews logged`);
  for (const [, fields] of reviews) {
    t.match(fields, {
      uid: String,
      operation: String,
      resource: String,
      user: String,
      allowed: Boolean,
      latencyMs: Number,
    });
  }
  const text = JSON.stringify(logger.records);
  t.notOk(text.includes(TOKEN), 'the annotation token is not logged');
  t.notOk(text.includes('c2VjcmV0LXRva2Vu'), 'nor any part of it');
  t.notOk(text.includes('PRIVATE KEY'), 'no private key');
  t.notOk(text.includes(keyPem.split('\n')[1] ?? 'x'), 'not the request key');
  t.notOk(text.includes('CERTIFICATE REQUEST'), 'no CSR either');
});

t.test('a stopping webhook fails readyz but answers reviews until its delay ends', async (t) => {
  await w.stop();
  const clock = new ManualClock(Date.now());
  const webhook = await w.start({ logger, clock });
  const bundle = webhook.bundlePem() ?? '';
  const stopping = webhook.stop(5_000);
  const readyz = await httpsRequest(webhook.port, bundle, { method: 'GET', path: '/readyz' });
  t.equal(readyz.status, 503);
  t.equal(readyz.text, 'not ready: shutting down\n');
  const cr = await create('alice');
  t.equal(cr.spec.username, 'alice', 'reviews are still answered');
  clock.advance(5_000);
  await stopping;
  const body = certificateRequest(
    'after-stop',
    withNamespace(NAMESPACE),
    withIssuerRef({ name: 'ca' }),
    withCsr(csrPem),
  );
  await apiError(w.api('alice').createNamespacedCustomObject({ ...CR, body }), 500);
});
