import { X509Certificate } from 'node:crypto';
import t from 'tap';
import type { ClusterTrustBundle } from '../../src/api/cluster-trust-bundle.js';
import { ClusterIssuerKind, type Issuer, IssuerKind, isIssuerReady } from '../../src/api/issuer.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import { PodCertificateRequestKind } from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { startController } from '../../src/cli/controller/controller.js';
import { controllerSelection } from '../../src/cli/controller/controller-names.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import { trustBundleNameOf } from '../../src/issuer/podcertificaterequests/trust-bundle-publisher.js';
import { isStoreError } from '../../src/store/errors.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import {
  clusterIssuer,
  issuer,
  tlsSecret,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import {
  CONTROLLER_USER,
  startCluster,
  startClusterController,
} from '../support/cluster-harness.js';
import { rejection, until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { answered, trustBundle } from '../support/pod-certificate-checks.js';
import {
  PODS_BUNDLE as BUNDLE,
  createPod,
  kubeletRequest,
  namespaceObject,
  podIdentity,
  PODS_SIGNER as SIGNER,
  seedPodsIssuer,
} from '../support/pod-certificates.js';
import { recordingLogger } from '../support/recording-logger.js';

// Pod certificates end to end: kubelet's requests go through the fake API server (which
// validates them at create, and validates and authorizes every status write as the real one
// does), the controller signs them with exactly deploy/manifests's RBAC.

const WAIT_MS = 60_000;

t.test(
  '30 issuers: one list and one watch per kind, and every request of each issued once',
  async (t) => {
    const cluster = await startCluster(t);
    const admin = cluster.server.store;
    const kubelet = new KubernetesStore({
      kubeConfig: cluster.kubeConfig(cluster.server.adminToken),
      qps: 1000,
      burst: 1000,
    });
    const ca = await makeCA();
    const pair = { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem };
    await admin.create(NamespaceKind, namespaceObject('shop'));
    await admin.create(SecretKind, tlsSecret('shop', 'shop-ca', pair));
    await admin.create(SecretKind, tlsSecret('cert-csi', 'pods-ca', pair));
    const signers: string[] = [];
    for (let i = 0; i < 15; i++) {
      await admin.create(
        IssuerKind,
        issuer(`ca-${i}`, withNamespace('shop'), withSpec({ ca: { secretName: 'shop-ca' } })),
      );
      signers.push(`issuers.cert-manager.io/shop.ca-${i}`);
      const ci = clusterIssuer(`pods-${i}`, withSpec({ ca: { secretName: 'pods-ca' } }));
      ci.metadata.annotations = { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' };
      await admin.create(ClusterIssuerKind, ci);
      signers.push(`clusterissuers.cert-manager.io/pods-${i}`);
    }
    const pod = await createPod(admin, podIdentity('shop', 'api-0'));
    startClusterController(t, cluster);
    // Two requests per signer, and two of another signer.
    const asked = new Map<string, string>();
    for (const signerName of [...signers, ...signers, 'example.com/spiffe', 'example.com/spiffe']) {
      const { request } = await kubeletRequest(pod, signerName, 'ED25519', '1.36');
      asked.set(
        (await kubelet.create(PodCertificateRequestKind, request)).metadata.name,
        signerName,
      );
    }
    for (const [name, signerName] of asked) {
      if (signerName.startsWith('example.com/')) continue;
      const issued = await answered(admin, 'shop', name, WAIT_MS);
      t.equal(issued.status?.conditions?.[0]?.type, 'Issued', `${signerName}: ${name} issued`);
    }
    for (const signerName of signers) {
      await trustBundle(admin, trustBundleNameOf(signerName));
    }

    const controller = cluster.server.requests.filter((r) => r.user === CONTROLLER_USER);
    const countBy = (verb: string) => {
      const counts = new Map<string, number>();
      for (const r of controller.filter((r) => r.verb === verb)) {
        counts.set(String(r.resource), (counts.get(String(r.resource)) ?? 0) + 1);
      }
      return counts;
    };
    const watches = countBy('watch');
    t.same(countBy('list'), watches, 'each kind watched is listed once, before its watch');
    for (const resource of [
      'podcertificaterequests',
      'clustertrustbundles',
      'certificatesigningrequests',
      'issuers',
      'clusterissuers',
      'secrets',
      'namespaces',
    ]) {
      t.equal(watches.get(resource), 1, `one watch of ${resource}`);
    }
    t.same(
      [...watches].filter(([, count]) => count !== 1),
      [],
      'every kind the controller watches is watched once',
    );
    t.same(
      controller
        .filter((r) => r.resource === 'podcertificaterequests' && r.verb === 'watch')
        .map((r) => r.fieldSelector),
      [undefined],
      'the requests of every signer come through one watch',
    );
    const answers = new Map<string, number>();
    for (const r of controller) {
      if (r.resource !== 'podcertificaterequests' || r.subresource !== 'status') continue;
      t.equal(r.status, 200, `status write of ${r.name} accepted`);
      answers.set(String(r.name), (answers.get(String(r.name)) ?? 0) + 1);
    }
    t.same(
      [...asked].filter(([name, signerName]) => {
        const writes = answers.get(name) ?? 0;
        return signerName.startsWith('example.com/') ? writes !== 0 : writes !== 1;
      }),
      [],
      "one status write per request of ours, none for another signer's",
    );
  },
);

t.test('the API server refuses a bad proof of possession before any signer sees it', async (t) => {
  const cluster = await startCluster(t);
  const kubelet = new KubernetesStore({
    kubeConfig: cluster.kubeConfig(cluster.server.adminToken),
    qps: 1000,
    burst: 1000,
  });
  await cluster.server.store.create(NamespaceKind, namespaceObject('shop'));
  const pod = await createPod(cluster.server.store, podIdentity('shop', 'api-0'));
  const { request } = await kubeletRequest(pod, SIGNER, 'ECDSAP256', '1.35');
  request.spec.podUID = 'not-the-signed-uid';
  // Through v1beta1, as a 1.35 kubelet sends it (v1 has no proofOfPossession).
  const v1beta1 = { ...PodCertificateRequestKind, version: 'v1beta1', versions: ['v1beta1'] };
  const err = await rejection(kubelet.create(v1beta1, request));
  t.ok(isStoreError(err, 'Invalid'), 'Invalid (422)');
  t.match(String((err as Error).message), /proofOfPossession/);
  t.same((await cluster.server.store.list(PodCertificateRequestKind)).items, [], 'nothing stored');
});

t.test(
  'a cluster that does not serve the APIs runs every other controller, and starts them once it does',
  async (t) => {
    // PodCertificateRequests and ClusterTrustBundles in no version: 1.35 or 1.36 with the
    // feature gates off.
    const server = await FakeApiServer.start({
      servedVersions: { podcertificaterequests: [], clustertrustbundles: [] },
    });
    t.teardown(() => server.close());
    const logger = recordingLogger();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions(server.kubeConfig());
    const controller = startController({
      kubeConfig,
      qps: 1000,
      burst: 1000,
      identity: 'controller-a',
      clusterResourceNamespace: 'cert-csi',
      enabled: controllerSelection(undefined),
      signingWorkers: 1,
      logger,
      apiRecheckMs: 200,
      retryBaseDelayMs: 50,
    });
    t.teardown(() => controller.stop());
    const ca = await makeCA();
    await server.store.create(
      SecretKind,
      tlsSecret('shop', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
    );
    await server.store.create(
      IssuerKind,
      issuer('ca', withNamespace('shop'), withSpec({ ca: { secretName: 'ca' } })),
    );
    await until(
      async () => {
        return isIssuerReady(await server.store.get<Issuer>(IssuerKind, 'ca', 'shop'));
      },
      { what: 'the issuer to be Ready', timeoutMs: WAIT_MS, intervalMs: 50 },
    );
    const skipped = () =>
      logger.records
        .filter(
          ([, , msg]) => msg === 'the cluster does not serve this API: controller not started',
        )
        .map(([, obj]) => obj);
    t.same(skipped(), [
      {
        controller: 'podcertificaterequests-issuer',
        resource: 'podcertificaterequests.certificates.k8s.io',
        versions: 'v1, v1beta1',
      },
      {
        controller: 'clustertrustbundles-publisher',
        resource: 'clustertrustbundles.certificates.k8s.io',
        versions: 'v1, v1beta1',
      },
    ]);
    t.same(
      server.requests.filter(
        (r) => r.resource === 'clustertrustbundles' || r.resource === 'podcertificaterequests',
      ),
      [],
      'discovery decided: no request on the resources',
    );

    // The API is enabled (or the control plane upgraded to 1.37): no restart of the process.
    server.setServedVersions('podcertificaterequests', ['v1']);
    server.setServedVersions('clustertrustbundles', ['v1']);
    await until(
      () =>
        logger.records.some(
          ([, , msg]) => msg === 'the cluster serves an API it did not: restarting the controllers',
        ),
      { what: 'the controllers to restart', timeoutMs: WAIT_MS, intervalMs: 50 },
    );
    const pod = await createPod(server.store, podIdentity('shop', 'api-0'));
    const kubelet = new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000 });
    const { request } = await kubeletRequest(
      pod,
      'issuers.cert-manager.io/shop.ca',
      'ED25519',
      '1.36',
    );
    const created = await kubelet.create(PodCertificateRequestKind, request);
    const done = await answered(server.store, 'shop', created.metadata.name, WAIT_MS);
    t.match(done.status?.conditions, [{ type: 'Issued' }], 'issued after the API appeared');
    await trustBundle(server.store, trustBundleNameOf('issuers.cert-manager.io/shop.ca'));
    t.equal(skipped().length, 2, 'no controller said to be left out again');
  },
);

t.test('the bundle follows a CA rotation through the API server', async (t) => {
  const cluster = await startCluster(t);
  const admin = cluster.server.store;
  const first = await makeCA();
  await seedPodsIssuer(admin, first);
  startClusterController(t, cluster);
  await trustBundle(admin, BUNDLE);
  const second = await makeCA();
  const secret = await admin.get<ReturnType<typeof tlsSecret>>(SecretKind, 'pods-ca', 'cert-csi');
  await admin.update(SecretKind, {
    ...secret,
    data: tlsSecret('cert-csi', 'pods-ca', {
      'tls.crt': second.certificatePem,
      'tls.key': second.keyPem,
    }).data,
  });
  const rotated: ClusterTrustBundle = await trustBundle(
    admin,
    BUNDLE,
    (b) => b.spec.trustBundle.split('BEGIN CERTIFICATE').length === 3,
  );
  t.match(rotated.spec.trustBundle, /^-----BEGIN CERTIFICATE-----/);
  t.equal(
    rotated.spec.trustBundle,
    new X509Certificate(second.certificatePem).toString() +
      new X509Certificate(first.certificatePem).toString(),
    'the new CA first, the old one kept',
  );
});
