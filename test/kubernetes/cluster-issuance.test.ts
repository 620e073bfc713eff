import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
  isApproved,
  readyReason,
} from '../../src/api/certificate-request.js';
import { setCondition } from '../../src/api/conditions.js';
import { IssuerKind } from '../../src/api/issuer.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import { controllerSelection } from '../../src/cli/controller/controller-names.js';
import { issuer, withNamespace, withSpec } from '../support/builders/index.js';
import { startCommand } from '../support/cli-process.js';
import {
  CONTROLLER_TOKEN,
  caIssuerAttributes,
  POD_NAMESPACE,
  POD_UID,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { expireOnceWaiting } from '../support/held-deadlines.js';
import { run } from '../support/issuer-fixtures.js';

const NODE_USER = 'system:serviceaccount:cert-csi:cert-csi-node';

t.test(
  'cluster mode: the plugin requests, `cert-csi controller` signs, the pod gets its files',
  async (t) => {
    const cluster = await startCluster(t);
    await cluster.seedIssuer();
    // An ACME issuer is cert-manager's business: the controller must not touch its requests.
    await cluster.server.store.create(
      IssuerKind,
      issuer(
        'letsencrypt',
        withNamespace(POD_NAMESPACE),
        withSpec({ acme: { server: 'https://acme.example' } } as never),
      ),
    );
    const controller = await startCommand(
      [
        'controller',
        '--kubeconfig',
        await cluster.kubeconfigFile(CONTROLLER_TOKEN),
        '--leader-election-namespace',
        'cert-csi',
        '--cluster-resource-namespace',
        'cert-csi',
        '--leader-election-lease-duration',
        '3s',
        '--leader-election-renew-deadline',
        '2s',
        '--leader-election-retry-period',
        '500ms',
      ],
      'became leader',
    );
    t.teardown(() => controller.stop());
    const node = await startClusterPlugin(t, cluster, { nodeId: 'node-1' });

    const { target } = await node.publish('vol-1', {
      ...caIssuerAttributes,
      'example.com/team': 'blue',
    });
    const certPem = await readFile(join(target, 'tls.crt'), 'utf8');
    const caPem = await readFile(join(target, 'ca.crt'), 'utf8');
    const cert = new X509Certificate(certPem);
    t.match(cert.subjectAltName, /DNS:app-0\.sandbox\.svc/, 'variables expanded into the SAN');
    t.ok(cert.verify(new X509Certificate(caPem).publicKey), 'signed by the Issuer CA');
    const verified = await run('openssl', [
      'verify',
      '-CAfile',
      join(target, 'ca.crt'),
      join(target, 'tls.crt'),
    ]);
    t.match(verified.stdout, /OK/, 'openssl verify accepts it');
    t.ok(
      cert.checkPrivateKey(
        (await import('node:crypto')).createPrivateKey(await readFile(join(target, 'tls.key'))),
      ),
      'the key on disk matches',
    );

    const requests = (await cluster.requests()).filter((r) => r.spec.issuerRef.name === 'ca');
    t.equal(requests.length, 1, 'exactly one CertificateRequest');
    const request = requests[0] as CertificateRequest;
    t.equal(request.metadata.namespace, POD_NAMESPACE, "in the pod's namespace");
    t.same(request.metadata.labels, {
      [NODE_ID_HASH_LABEL]: hashIdentifier('node-1'),
      [VOLUME_ID_HASH_LABEL]: hashIdentifier('vol-1'),
    });
    t.same(request.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Pod', name: 'app-0', uid: POD_UID },
    ]);
    t.same(request.metadata.annotations, { 'example.com/team': 'blue' }, 'pass-through annotation');
    t.ok(isApproved(request), 'approved by the controller');
    t.equal(readyReason(request), 'Issued');

    // A request for another issuer type, created as cert-manager's users would.
    await cluster.server.store.create<CertificateRequest>(CertificateRequestKind, {
      ...request,
      metadata: { name: 'acme-request', namespace: POD_NAMESPACE },
      spec: { ...request.spec, issuerRef: { name: 'letsencrypt', kind: 'Issuer' } },
      status: {},
    });
    await delay(1_500);
    const acme = await cluster.server.store.get<CertificateRequest>(
      CertificateRequestKind,
      'acme-request',
      POD_NAMESPACE,
    );
    t.same(acme.status ?? {}, {}, 'an ACME request is neither approved, nor marked, nor signed');

    const nodeRequests = cluster.server.requests.filter((r) => r.user === NODE_USER);
    const requestCalls = nodeRequests.filter((r) => r.resource === 'certificaterequests');
    const selector = `${NODE_ID_HASH_LABEL}=${hashIdentifier('node-1')}`;
    for (const call of requestCalls.filter((r) => r.verb === 'list' || r.verb === 'watch')) {
      t.equal(call.labelSelector, selector, `${call.verb} carries the node's label selector`);
      t.equal(call.namespace, undefined, `${call.verb} spans all namespaces`);
    }
    t.equal(
      requestCalls.filter((r) => r.verb === 'list').length,
      1,
      'one list at start: no polling',
    );
    t.equal(requestCalls.filter((r) => r.verb === 'get').length, 0, 'no gets: the watch tells');
    const writes = nodeRequests.filter((r) => !['get', 'list', 'watch'].includes(r.verb));
    t.same(
      writes.map((r) => `${r.verb} ${r.resource}`),
      ['create certificaterequests'],
      'one write by the plugin for a first issuance',
    );
    t.ok(
      cluster.server.requests.every((r) => r.status !== 403),
      'nothing was refused by the manifests’ RBAC',
    );
  },
);

t.test('--disable-approval leaves approval to another approver, then signs', async (t) => {
  const cluster = await startCluster(t);
  await cluster.seedIssuer();
  startClusterController(t, cluster, {
    enabled: controllerSelection(['*', '-certificaterequests-approver']),
  });
  const node = await startClusterPlugin(t, cluster, { heldDeadlines: true });
  const publishing = node.publish('vol-wait', caIssuerAttributes).then(
    () => undefined,
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  await expireOnceWaiting(node, 'vol-wait');
  const failed = await publishing;
  t.match(failed, /not yet been approved/, 'the publish says what it waits for');
  const [pending] = await cluster.requests();
  t.ok(pending, 'the request exists');
  if (!pending) return;
  t.notOk(isApproved(pending), 'nobody approved it');

  // Another approver (approver-policy, a person with kubectl) approves it.
  await cluster.server.store.updateStatus(CertificateRequestKind, {
    ...pending,
    status: {
      ...pending.status,
      conditions: setCondition(
        pending.status?.conditions,
        { type: 'Approved', status: 'True', reason: 'policy.cert-manager.io', message: 'ok' },
        new Date(),
      ),
    },
  });
  const { target } = await node.publish('vol-wait', caIssuerAttributes);
  t.ok(new X509Certificate(await readFile(join(target, 'tls.crt'))), 'signed once approved');
  t.equal((await cluster.requests()).length, 1, 'the same request was resumed, not a new one');
});
