import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceError } from '@grpc/grpc-js';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import { type Issuer, IssuerKind, isIssuerReady } from '../../src/api/issuer.js';
import { type KubeEvent, KubeEventKind } from '../../src/api/kube-event.js';
import type { VolumeMetadata } from '../../src/volume/metadata.js';
import { serviceAccountUser } from '../fake-api-server/fake-api-server.js';
import { RbacAuthorizer } from '../fake-api-server/rbac-authorizer.js';
import {
  type ClusterPlugin,
  CONTROLLER_USER,
  caIssuerAttributes,
  DEPLOY_DIR,
  POD_NAMESPACE,
  POD_UID,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { expireOnceWaiting } from '../support/held-deadlines.js';
import { waitForObject } from '../support/wait-for-object.js';

const NODE_USER = 'system:serviceaccount:cert-csi:cert-csi-node';
const POD_USER = 'system:serviceaccount:sandbox:app';
const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';
const SECRETS = ['pod-token-1', 'pod-token-2', 'pod-token-3'];

/** kubelet's `csi.storage.k8s.io/serviceAccount.tokens` for one empty-audience token. */
function tokensFor(token: string): string {
  const expirationTimestamp = new Date(Date.now() + 3_600_000).toISOString();
  return JSON.stringify({ '': { token, expirationTimestamp } });
}

/** The deploy/manifests manifests, plus `create certificaterequests` for sandbox/app. */
async function rbacWithWorkloadRole(): Promise<RbacAuthorizer> {
  const objects: unknown[] = [];
  for (const name of (await readdir(DEPLOY_DIR)).filter((n) => n.endsWith('.yaml')).sort()) {
    const text = await readFile(join(DEPLOY_DIR, name), 'utf8');
    objects.push(...parseAllDocuments(text).map((document) => document.toJSON() as unknown));
  }
  objects.push(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'certificate-requester', namespace: POD_NAMESPACE },
      rules: [
        { apiGroups: ['cert-manager.io'], resources: ['certificaterequests'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'certificate-requester', namespace: POD_NAMESPACE },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'certificate-requester',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'app', namespace: POD_NAMESPACE }],
    },
  );
  return RbacAuthorizer.fromObjects(objects);
}

/** Every regular file under dir, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** The publish's gRPC error (details and message), or a failure when it succeeded. */
async function publishError(
  t: Test,
  node: ClusterPlugin,
  volumeId: string,
  tokens: string | undefined,
  attributes: Record<string, string> = caIssuerAttributes,
): Promise<ServiceError> {
  try {
    await node.publish(volumeId, attributes, tokens === undefined ? {} : { [TOKENS_KEY]: tokens });
  } catch (err) {
    return err as ServiceError;
  }
  t.fail(`${volumeId}: publish succeeded`);
  throw new Error('unreachable');
}

t.test(
  '--use-token-request: requests are created as the pod, the token stays in memory',
  async (t) => {
    const cluster = await startCluster(t);
    const { server } = cluster;
    cluster.server.rbac = await rbacWithWorkloadRole();
    await cluster.seedIssuer();
    server.addToken('pod-token-1', {
      ...serviceAccountUser(POD_NAMESPACE, 'app'),
      client: 'first-token',
    });
    server.addToken('pod-token-2', {
      ...serviceAccountUser(POD_NAMESPACE, 'app'),
      client: 'second-token',
    });
    // A ServiceAccount without the workload Role.
    server.addToken('pod-token-3', serviceAccountUser(POD_NAMESPACE, 'unprivileged'));
    startClusterController(t, cluster);
    await waitForObject<Issuer>(server.store, IssuerKind, 'ca', POD_NAMESPACE, isIssuerReady);
    const node = await startClusterPlugin(t, cluster, {
      useTokenRequest: true,
      // Only vol-stuck waits for its deadline, expired once it waits for its request.
      heldDeadlines: true,
    });

    // A publish with the pod's token: the request is created with it.
    const { target } = await node.publish('vol-token', caIssuerAttributes, {
      [TOKENS_KEY]: tokensFor('pod-token-1'),
    });
    const cert = new X509Certificate(await readFile(join(target, 'tls.crt')));
    const ca = new X509Certificate(await readFile(join(target, 'ca.crt')));
    t.ok(cert.verify(ca.publicKey), 'files written: tls.crt signed by ca.crt');
    t.ok(
      cert.checkPrivateKey(createPrivateKey(await readFile(join(target, 'tls.key')))),
      'key matches',
    );
    const [issued] = await cluster.requests();
    const firstCreates = server.requests.filter(
      (r) => r.resource === 'certificaterequests' && r.verb === 'create',
    );
    t.same(
      firstCreates.map((r) => [r.user, r.client, r.status]),
      [[POD_USER, 'first-token', 201]],
      'the CertificateRequest was created by the pod’s ServiceAccount, with its token',
    );
    t.equal(issued?.metadata.namespace, POD_NAMESPACE, 'in the pod’s namespace');

    // kubelet's requiresRepublish brings a fresh token; the renewal uses it.
    const republishedAt = Date.now();
    await node.publish('vol-token', caIssuerAttributes, { [TOKENS_KEY]: tokensFor('pod-token-2') });
    const outcome = await node.plugin.manager.renewNow({ volumeId: 'vol-token' });
    t.equal(outcome.renewed.length, 1, 'renewed');
    const renewalLog = server.requests.filter(
      (r) => r.time >= republishedAt && r.resource === 'certificaterequests',
    );
    t.same(
      renewalLog.filter((r) => r.verb === 'create').map((r) => [r.user, r.client, r.status]),
      [[POD_USER, 'second-token', 201]],
      'the renewal’s request was created with the newest token',
    );
    t.same(
      renewalLog.filter((r) => r.verb === 'delete').map((r) => [r.user, r.name, r.status]),
      [[NODE_USER, issued?.metadata.name, 200]],
      'the old request was deleted by the node ServiceAccount',
    );

    // Unusable tokens fail the publish without echoing them.
    const missing = await publishError(t, node, 'vol-no-tokens', undefined);
    t.match(
      missing.details,
      `'${TOKENS_KEY}' not present in volume context`,
      'no tokens: says the key is missing',
    );
    const noAudience = await publishError(
      t,
      node,
      'vol-no-audience',
      JSON.stringify({
        'https://vault.example': { token: 'pod-token-1', expirationTimestamp: 'x' },
      }),
    );
    t.match(
      noAudience.details,
      "empty audience service account token doesn't exist",
      'no "" audience',
    );
    // A truncated JSON that holds the token, so a parser error echoing its input would leak it.
    const notJson = await publishError(
      t,
      node,
      'vol-not-json',
      tokensFor('pod-token-1').slice(0, -3),
    );
    t.match(notJson.details, 'failed to parse service account tokens', 'not JSON');
    // A token whose ServiceAccount may not create requests: refused by the API, as that user.
    const forbidden = await publishError(t, node, 'vol-forbidden', tokensFor('pod-token-3'));
    t.match(forbidden.details, /forbidden/i, 'a ServiceAccount without the Role is refused');
    t.same(
      server.requests
        .filter((r) => r.resource === 'certificaterequests' && r.status === 403)
        .map((r) => [r.user, r.verb]),
      [['system:serviceaccount:sandbox:unprivileged', 'create']],
      'the refused create was made with that pod’s token',
    );
    for (const err of [missing, noAudience, notJson, forbidden]) {
      const text = `${err.message}\n${err.details}`;
      t.notOk(
        SECRETS.some((secret) => text.includes(secret)),
        `no token in the error: ${err.details}`,
      );
    }

    // A request no issuer answers: the publish times out and the pod gets a Warning Event.
    const stuckPublish = publishError(t, node, 'vol-stuck', tokensFor('pod-token-2'), {
      ...caIssuerAttributes,
      'csi.cert-manager.io/issuer-name': 'missing',
    });
    await expireOnceWaiting(node, 'vol-stuck');
    const stuck = await stuckPublish;
    t.match(stuck.details, /waiting for request/, `times out: ${stuck.details}`);
    await node.plugin.events.flush();
    const events = (await server.store.list<KubeEvent>(KubeEventKind, { namespace: POD_NAMESPACE }))
      .items;
    const onPod = events.filter((e) => e.involvedObject.kind === 'Pod');
    const pending = onPod.filter((e) => e.reason === 'CertificateRequestPending');
    t.equal(pending.length, 1, 'one CertificateRequestPending Event');
    t.match(
      pending[0],
      {
        type: 'Warning',
        involvedObject: { kind: 'Pod', name: 'app-0', namespace: POD_NAMESPACE, uid: POD_UID },
        message: /vol-stuck/,
      },
      'a Warning on the Pod naming the volume',
    );
    t.same(
      onPod
        .filter((e) => e.reason !== 'CertificateRequestPending')
        .map((e) => e.message.replace(/:.*/, ''))
        .sort(),
      [
        'certificate for volume vol-forbidden',
        'certificate for volume vol-no-audience',
        'certificate for volume vol-no-tokens',
        'certificate for volume vol-not-json',
      ],
      'each failed publish has its Event',
    );

    // The tokens never reach disk, nor the API objects the plugin writes.
    const files = await filesUnder(node.dir);
    t.ok(
      files.some((f) => f.endsWith('metadata.json')),
      `${files.length} files to check`,
    );
    for (const file of files) {
      const content = await readFile(file, 'latin1');
      t.notOk(
        SECRETS.some((secret) => content.includes(secret)),
        `no token in ${file.slice(node.dir.length)}`,
      );
    }
    const metadata = JSON.parse(
      await readFile(node.plugin.dataRoot.metadataPath('vol-token'), 'utf8'),
    ) as VolumeMetadata;
    t.notOk(TOKENS_KEY in metadata.volumeContext, 'metadata.json keeps no tokens key');
    t.equal(
      metadata.volumeContext['csi.storage.k8s.io/pod.name'],
      'app-0',
      'but the rest of the context',
    );
    const objects = JSON.stringify([await cluster.requests(), events]);
    t.notOk(
      SECRETS.some((secret) => objects.includes(secret)),
      'no token in any CertificateRequest or Event',
    );

    // Everything but the creates is the node ServiceAccount's.
    const requestCalls = server.requests.filter((r) => r.resource === 'certificaterequests');
    const byUser = (verb: string) => [
      ...new Set(
        requestCalls
          .filter((r) => r.verb === verb && r.user !== CONTROLLER_USER)
          .map((r) => r.user),
      ),
    ];
    t.same(byUser('list'), [NODE_USER], 'lists by the node ServiceAccount');
    t.same(byUser('watch'), [NODE_USER], 'watches by the node ServiceAccount');
    t.same(byUser('delete'), [NODE_USER], 'deletes by the node ServiceAccount');
    t.same(
      byUser('create').sort(),
      [POD_USER, 'system:serviceaccount:sandbox:unprivileged'],
      'creates only by pods',
    );
  },
);
