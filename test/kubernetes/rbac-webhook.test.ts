import pLimit from 'p-limit';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import {
  type CertificateRequest,
  CertificateRequestKind,
  isApproved,
} from '../../src/api/certificate-request.js';
import { IssuerKind } from '../../src/api/issuer.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import type { RequestLogEntry } from '../fake-api-server/fake-api-server.js';
import type { RbacAuthorizer } from '../fake-api-server/rbac-authorizer.js';
import {
  certificateRequest,
  issuer,
  tlsSecret,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { CONTROLLER_USER, startClusterController } from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { keyAndCsr, makeCA } from '../support/issuer-fixtures.js';
import {
  deployRbacWith,
  startWebhookCluster,
  WEBHOOK_USER,
  type WebhookCluster,
} from '../support/webhook-cluster.js';

const WEBHOOK_ROLES = ['ClusterRole/cert-csi-webhook', 'Role/cert-csi/cert-csi-webhook:ca'];
const NAMESPACE = 'team';
const CR = {
  group: 'cert-manager.io',
  version: 'v1',
  plural: 'certificaterequests',
  namespace: NAMESPACE,
};

// alice may write requests and their status; wanda holds approve on every Issuer.
const USERS_RBAC = parseAllDocuments(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: developer}
rules:
- {apiGroups: [cert-manager.io], resources: [certificaterequests], verbs: [create, get]}
- {apiGroups: [cert-manager.io], resources: [certificaterequests/status], verbs: [update]}
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
`).map((d) => d.toJS());

const { csrPem } = await keyAndCsr(
  { algorithm: 'ECDSA', size: 256 },
  { subject: { commonName: 'web' }, dnsNames: ['web.team.svc'] },
);
const full = await deployRbacWith(USERS_RBAC);

async function cluster(rbac: RbacAuthorizer): Promise<WebhookCluster> {
  const w = await startWebhookCluster(t, { rbac });
  w.cluster.server.addToken('alice', { username: 'alice', groups: ['developers'] });
  w.cluster.server.addToken('wanda', { username: 'wanda', groups: ['developers'] });
  return w;
}

/**
 * Everything the webhook does with the API: it makes its CA Secret (get, create), watches it
 * (list, watch), fills its configurations' caBundle (list, watch, get, update), asks
 * SubjectAccessReviews for an approval and, restarted over a broken Secret, rotates it
 * (update). Ends as soon as refused(entry) matches a refused request, if given.
 * Returns the requests refused with 403 and whether wanda's approval went through.
 */
async function everything(
  w: WebhookCluster,
  refused?: (r: RequestLogEntry) => boolean,
): Promise<{ forbidden: RequestLogEntry[]; approved: boolean; ready: boolean }> {
  const { server } = w.cluster;
  let approved = false;
  let ready = false;
  const stop = new AbortController();
  const { signal } = stop;
  const steps = async () => {
    await w.start({ signal });
    ready = true;
    const cr = (await w.api('alice').createNamespacedCustomObject({
      ...CR,
      body: certificateRequest(
        'web',
        withNamespace(NAMESPACE),
        withIssuerRef({ name: 'ca' }),
        withCsr(csrPem),
      ),
    })) as CertificateRequest;
    const approval = {
      ...cr,
      status: {
        conditions: [{ type: 'Approved', status: 'True' as const, reason: 'test', message: 'ok' }],
      },
    };
    await w
      .api('wanda')
      .replaceNamespacedCustomObjectStatus({ ...CR, name: 'web', body: approval });
    approved = true;
    await w.stop();
    if (signal.aborted) return;
    const secret = await server.store.get<Secret>(
      SecretKind,
      w.settings.caSecretName,
      w.settings.namespace,
    );
    await server.store.update(SecretKind, { ...secret, data: { 'tls.crt': 'YnJva2Vu' } });
    await w.start({ signal });
  };
  const done = steps().catch(() => undefined);
  const blocked = refused
    ? server
        .waitForRequest((r) => r.status === 403 && refused(r), 30_000, signal)
        .catch(() => undefined)
    : new Promise(() => {});
  await Promise.race([done, blocked]);
  // A step the missing permission holds up ends now (its wait for readiness is aborted).
  stop.abort();
  await done;
  await w.stop();
  return {
    forbidden: server.requests.filter((r) => r.status === 403 && r.user === WEBHOOK_USER),
    approved,
    ready,
  };
}

t.test('with exactly the RBAC rules of deploy/manifests the webhook does its work', async (t) => {
  const w = await cluster(full);
  const { forbidden, approved, ready } = await everything(w);
  t.same(
    forbidden.map((r) => `${r.verb} ${r.resource}`),
    [],
    'no request of the webhook was refused',
  );
  t.ok(ready && approved, 'ready, and an allowed approval went through');
  const secret = await w.cluster.server.store.get<Secret>(
    SecretKind,
    w.settings.caSecretName,
    w.settings.namespace,
  );
  t.not(secret.data?.['tls.crt'], 'YnJva2Vu', 'the broken CA Secret was replaced');
  const verbs = new Set(
    w.cluster.server.requests
      .filter((r) => r.user === WEBHOOK_USER)
      .map((r) => `${r.verb} ${r.resource}`),
  );
  for (const used of [
    'get secrets',
    'create secrets',
    'update secrets',
    'list secrets',
    'watch secrets',
    'create subjectaccessreviews',
    'get validatingwebhookconfigurations',
    'update mutatingwebhookconfigurations',
    'watch mutatingwebhookconfigurations',
  ]) {
    t.ok(verbs.has(used), `the scenario uses ${used}`);
  }
});

t.test('removing any rule, or any verb of one, of the webhook’s roles gets a 403', async (t) => {
  const rules = full.rules().filter((r) => WEBHOOK_ROLES.includes(r.role));
  t.equal(rules.length, 5, 'five rules in the webhook roles');
  const cases = full.removals(WEBHOOK_ROLES);
  const limit = pLimit(3);
  const outcomes = await Promise.all(
    cases.map(({ label, rbac, rule, verb }) =>
      limit(async () => {
        const matches = (r: RequestLogEntry) =>
          r.user === WEBHOOK_USER &&
          rule.rule.resources.includes(String(r.resource)) &&
          (verb === undefined || r.verb === verb);
        const { forbidden } = await everything(await cluster(rbac), matches);
        return {
          what: `without ${label} of ${rule.role} rule ${rule.index} (${rule.rule.resources.join(',')}: ${rule.rule.verbs.join(',')})`,
          refused: forbidden.filter(matches).length,
        };
      }),
    ),
  );
  for (const { what, refused } of outcomes) t.ok(refused > 0, `${what}: a request is refused`);
});

t.test(
  "the controller's approver approves through the webhook only with cert-csi-controller:approve",
  async (t) => {
    const run = async (rbac: RbacAuthorizer) => {
      const w = await cluster(rbac);
      const { server } = w.cluster;
      const ca = await makeCA();
      await server.store.create(
        SecretKind,
        tlsSecret(NAMESPACE, 'ca-key-pair', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
      );
      await server.store.create(
        IssuerKind,
        issuer('ca', withNamespace(NAMESPACE), withSpec({ ca: { secretName: 'ca-key-pair' } })),
      );
      await w.start();
      startClusterController(t, w.cluster);
      await w.api('alice').createNamespacedCustomObject({
        ...CR,
        body: certificateRequest(
          'web',
          withNamespace(NAMESPACE),
          withIssuerRef({ name: 'ca' }),
          withCsr(csrPem),
        ),
      });
      return { w, server };
    };
    const allowed = await run(full);
    await until(
      async () =>
        isApproved(
          await allowed.server.store.get<CertificateRequest>(
            CertificateRequestKind,
            'web',
            NAMESPACE,
          ),
        ),
      { what: 'the approval', timeoutMs: 20_000 },
    );
    await allowed.w.stop();
    const approveRule = full
      .rules()
      .find((r) => r.role === 'ClusterRole/cert-csi-controller:approve');
    if (!approveRule) throw new Error('no approve rule for the controller');
    const refused = await run(full.withoutRule(approveRule.role, approveRule.index));
    const call = await until(
      () =>
        refused.server.webhookCalls.find(
          (c) => c.subResource === 'status' && c.outcome === 'denied' && c.operation === 'UPDATE',
        ),
      { what: "the webhook refusing the controller's approval", timeoutMs: 20_000 },
    );
    t.equal(
      call.error,
      `admission webhook "certificaterequests.webhook.cert-csi.io" denied the request: status.conditions: Forbidden: user "${CONTROLLER_USER}" does not have permissions to set approved/denied conditions for issuer {ca  }`,
    );
    await refused.w.stop();
  },
);
