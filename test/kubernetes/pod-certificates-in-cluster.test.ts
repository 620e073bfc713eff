import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  type ClusterTrustBundle,
  ClusterTrustBundleKind,
} from '../../src/api/cluster-trust-bundle.js';
import { ClusterIssuerKind, type Issuer, IssuerKind, isIssuerReady } from '../../src/api/issuer.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { startController } from '../../src/cli/controller/controller.js';
import { controllerSelection } from '../../src/cli/controller/controller-names.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import { trustBundleNameOf } from '../../src/issuer/podcertificaterequests/trust-bundle-publisher.js';
import { POD_CERTIFICATE_KEY_TYPES } from '../../src/pki/pod-certificate-key.js';
import { isStoreError } from '../../src/store/errors.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import { certCsiKinds } from '../fake-api-server/kinds.js';
import {
  clusterIssuer,
  issuer,
  tlsSecret,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { startCluster, startClusterController } from '../support/cluster-harness.js';
import { rejection, until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { answered, checkIssued, trustBundle } from '../support/pod-certificate-checks.js';
import {
  createPod,
  type KeyMaterialForm,
  kubeletRequest,
  namespaceObject,
  podIdentity,
} from '../support/pod-certificates.js';
import { recordingLogger } from '../support/recording-logger.js';

// Pod certificates end to end: kubelet's requests go through the fake API server (which
// validates them at create, and validates and authorizes every status write as the real one
// does), the controller signs them with exactly deploy/manifests's RBAC.

const SIGNER = 'clusterissuers.cert-manager.io/pods';
const BUNDLE = 'clusterissuers.cert-manager.io:pods:primary';
const WAIT_MS = 60_000;
const CONTROLLER_USER = 'system:serviceaccount:cert-csi:cert-csi-controller';

t.test(
  'every key type in both key forms is issued through the API server and chains to the bundle',
  async (t) => {
    const cluster = await startCluster(t);
    const admin = cluster.server.store;
    const kubelet = new KubernetesStore({
      kubeConfig: cluster.kubeConfig(cluster.server.adminToken),
      qps: 1000,
      burst: 1000,
    });
    const ca = await makeCA();
    await admin.create(NamespaceKind, namespaceObject('shop', { tier: 'web' }));
    await admin.create(
      SecretKind,
      tlsSecret('cert-csi', 'pods-ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
    );
    const ci = clusterIssuer('pods', withSpec({ ca: { secretName: 'pods-ca' } }));
    ci.metadata.annotations = { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: 'tier=web' };
    await admin.create(ClusterIssuerKind, ci);
    const pod = await createPod(admin, podIdentity('shop', 'api-0', { serviceAccount: 'api' }));
    // Another signer's request: the controller must never see it.
    const foreign = await kubelet.create(
      PodCertificateRequestKind,
      (await kubeletRequest(pod, 'example.com/spiffe', 'ED25519', '1.36')).request,
    );

    startClusterController(t, cluster);
    const asked: Array<{
      name: string;
      label: string;
      key: Awaited<ReturnType<typeof kubeletRequest>>['key'];
    }> = [];
    for (const keyType of POD_CERTIFICATE_KEY_TYPES) {
      for (const form of ['1.35', '1.36'] as KeyMaterialForm[]) {
        const { request, key } = await kubeletRequest(pod, SIGNER, keyType, form);
        const created = await kubelet.create(PodCertificateRequestKind, request);
        asked.push({ name: created.metadata.name, label: `${keyType} ${form}`, key });
      }
    }
    const bundle = await trustBundle(admin, BUNDLE);
    t.equal(bundle.spec.signerName, SIGNER);
    for (const { name, label, key } of asked) {
      const issued = await answered(admin, 'shop', name, WAIT_MS);
      t.test(label, async (t) => {
        await checkIssued(t, issued, {
          publicKey: key,
          spiffeId: 'spiffe://cluster.local/ns/shop/sa/api',
          trustBundlePem: bundle.spec.trustBundle,
        });
      });
    }

    const untouched = await admin.get<PodCertificateRequest>(
      PodCertificateRequestKind,
      foreign.metadata.name,
      'shop',
    );
    t.same(untouched.status ?? {}, {}, "another signer's request is left alone");
    const reads = cluster.server.requests.filter(
      (r) =>
        r.user === CONTROLLER_USER && r.resource === 'podcertificaterequests' && !r.subresource,
    );
    t.ok(
      reads.some((r) => r.verb === 'watch'),
      'the controller watches requests',
    );
    t.same(
      cluster.server.requests.filter(
        (r) => r.user === CONTROLLER_USER && r.name === foreign.metadata.name,
      ),
      [],
      "no request of the controller names another signer's request (no get, no status write)",
    );
    t.same(
      cluster.server.requests.filter((r) => r.status >= 400 && r.user === CONTROLLER_USER),
      [],
      'no request of the controller was refused',
    );
  },
);

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
        // The start's probe of whether the cluster serves the API is not an informer's list.
        if (r.fieldSelector === 'spec.signerName=cert-csi.io/api-probe') continue;
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
  const err = await rejection(kubelet.create(PodCertificateRequestKind, request));
  t.ok(isStoreError(err, 'Invalid'), 'Invalid (422)');
  t.match(String((err as Error).message), /proofOfPossession/);
  t.same((await cluster.server.store.list(PodCertificateRequestKind)).items, [], 'nothing stored');
});

t.test('a cluster that does not serve the APIs runs every other controller', async (t) => {
  const server = await FakeApiServer.start({
    kinds: certCsiKinds.filter(
      (served) =>
        served.kind.plural !== PodCertificateRequestKind.plural &&
        served.kind.plural !== ClusterTrustBundleKind.plural,
    ),
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
  const skipped = logger.records
    .filter(([, , msg]) => msg === 'the cluster does not serve this API: controller not started')
    .map(([, obj]) => (obj as { controller: string }).controller);
  t.same(skipped, ['podcertificaterequests-issuer', 'clustertrustbundles-publisher']);
  t.equal(
    server.requests.filter((r) => r.resource === 'clustertrustbundles').length,
    1,
    'one probe, no informer',
  );
});

t.test('the bundle follows a CA rotation through the API server', async (t) => {
  const cluster = await startCluster(t);
  const admin = cluster.server.store;
  const first = await makeCA();
  await admin.create(
    SecretKind,
    tlsSecret('cert-csi', 'pods-ca', { 'tls.crt': first.certificatePem, 'tls.key': first.keyPem }),
  );
  const ci = clusterIssuer('pods', withSpec({ ca: { secretName: 'pods-ca' } }));
  ci.metadata.annotations = { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' };
  await admin.create(ClusterIssuerKind, ci);
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
