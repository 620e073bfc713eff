import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { NamespaceKind } from '../../src/api/namespace.js';
import { PodCertificateRequestKind } from '../../src/api/pod-certificate-request.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { splitPemCertificates } from '../../src/pki/chain.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { tlsSecret } from '../support/builders/index.js';
import {
  caIssuerAttributes,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { answered } from '../support/pod-certificate-checks.js';
import {
  createPod,
  kubeletRequest,
  namespaceObject,
  podIdentity,
  PODS_SIGNER as SIGNER,
  seedPodsIssuer,
} from '../support/pod-certificates.js';
import { recordingLogger } from '../support/recording-logger.js';

// A control plane upgraded in place from 1.36 (v1beta1 only) to a default 1.37 (v1 only)
// under a running controller and node plugin: both notice through the 404s of their
// watches and lists, look at discovery again and carry on in v1, without a restart.

const ISSUE_WITHIN_MS = 45_000;
// Generous: only a stuck source reaches it.
const FOLLOW_TIMEOUT_MS = 45_000;
// A few per client and kind: each informer's first request after the switch, and any sent
// at the same time; a loop would make hundreds.
const MAX_404_PER_KIND = 6;

const fingerprints = (pem: string) =>
  splitPemCertificates(pem)
    .map((c) => c.fingerprint256)
    .sort();

t.test('v1beta1 only, then v1 only: issued and followed without a restart', async (t) => {
  const cluster = await startCluster(t, {
    servedVersions: { podcertificaterequests: ['v1beta1'], clustertrustbundles: ['v1beta1'] },
  });
  const { server } = cluster;
  await cluster.seedIssuer();
  const [first, second] = await Promise.all([makeCA(), makeCA()]);
  const A = new X509Certificate(first.certificatePem).toString();
  const B = new X509Certificate(second.certificatePem).toString();
  await seedPodsIssuer(server.store, first);
  await server.store.create(NamespaceKind, namespaceObject('shop'));
  const pod = await createPod(server.store, podIdentity('shop', 'api-0'));
  const logger = recordingLogger();
  startClusterController(t, cluster, { logger });
  const node = await startClusterPlugin(t, cluster, { nodeId: 'node-1' });

  const { target } = await node.publish('vol-1', {
    ...caIssuerAttributes,
    'csi.cert-manager.io/key-algorithm': 'ECDSA',
    'csi.cert-manager.io/trust-bundle': `clustertrustbundle-signer:${SIGNER}`,
  });
  const caFile = join(target, 'ca.crt');
  const caFileHolds = (pems: string[]) =>
    until(
      async () =>
        JSON.stringify(fingerprints(await readFile(caFile, 'utf8').catch(() => ''))) ===
        JSON.stringify(fingerprints(pems.join(''))),
      { what: 'the CA file to hold the signer bundle', timeoutMs: FOLLOW_TIMEOUT_MS },
    );
  await caFileHolds([A]);
  const kubeConfig = cluster.kubeConfig(server.adminToken);
  const v1beta1Kubelet = new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000 });
  const before = await v1beta1Kubelet.create(
    PodCertificateRequestKind,
    (await kubeletRequest(pod, SIGNER, 'ED25519', '1.36')).request,
  );
  t.equal(before.apiVersion, 'certificates.k8s.io/v1beta1', 'v1beta1 before the switch');
  t.match((await answered(server.store, 'shop', before.metadata.name)).status?.conditions, [
    { type: 'Issued' },
  ]);

  // The upgrade: the API server restarts serving v1 only (open watches break).
  const switchedAt = server.requests.length;
  server.setServedVersions('podcertificaterequests', ['v1']);
  server.setServedVersions('clustertrustbundles', ['v1']);

  const v1Kubelet = new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000 });
  const after = await v1Kubelet.create(
    PodCertificateRequestKind,
    (await kubeletRequest(pod, SIGNER, 'ECDSAP256', '1.36')).request,
  );
  t.equal(after.apiVersion, 'certificates.k8s.io/v1');
  const started = Date.now();
  const issued = await answered(server.store, 'shop', after.metadata.name, ISSUE_WITHIN_MS);
  t.match(issued.status?.conditions, [{ type: 'Issued' }], 'issued after the switch');
  t.comment(`issued ${Date.now() - started} ms after it was created`);

  // A CA rollover after the switch: the publisher writes the bundle through v1, the node's
  // source reads it through v1.
  const secret = await server.store.get<Secret>(SecretKind, 'pods-ca', 'cert-csi');
  await server.store.update(SecretKind, {
    ...secret,
    data: tlsSecret('cert-csi', 'pods-ca', {
      'tls.crt': second.certificatePem,
      'tls.key': second.keyPem,
    }).data,
  });
  await caFileHolds([A, B]);
  t.pass('the volume follows a bundle change made after the switch');

  const since = server.requests.slice(switchedAt);
  for (const resource of ['podcertificaterequests', 'clustertrustbundles']) {
    const notFound = since.filter((r) => r.resource === resource && r.status === 404);
    t.ok(
      notFound.length >= 1 && notFound.length <= MAX_404_PER_KIND,
      `${resource}: ${notFound.length} 404s after the switch (1 to ${MAX_404_PER_KIND})`,
    );
    t.same(
      notFound.filter((r) => !r.path.includes('/v1beta1/')),
      [],
      `${resource}: only the old version answered 404`,
    );
  }
  t.ok(
    since.some(
      (r) =>
        r.resource === 'clustertrustbundles' &&
        r.user?.endsWith(':cert-csi-node') &&
        r.path.includes('/v1/') &&
        r.status === 200,
    ),
    'the node reads ClusterTrustBundles through v1',
  );
  t.same(
    logger.records
      .filter(([, , msg]) => msg === 'served version changed')
      .map(([, obj]) => obj)
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    [
      { resource: 'clustertrustbundles.certificates.k8s.io', from: 'v1beta1', to: 'v1' },
      { resource: 'podcertificaterequests.certificates.k8s.io', from: 'v1beta1', to: 'v1' },
    ],
    'the controller says so once per kind',
  );
  t.same(
    logger.records.filter(([, , msg]) => String(msg).includes('restarting the controllers')),
    [],
    'the controllers were not restarted',
  );
});
