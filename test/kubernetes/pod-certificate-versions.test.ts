import type { KeyObject } from 'node:crypto';
import t from 'tap';
import type { ResourceKind } from '../../src/api/meta.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../src/api/pod-certificate-request.js';
import type { PodCertificateKeyType } from '../../src/pki/pod-certificate-key.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import type { RequestLogEntry } from '../fake-api-server/fake-api-server.js';
import {
  CONTROLLER_USER,
  startCluster,
  startClusterController,
} from '../support/cluster-harness.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { answered, checkIssued, trustBundle } from '../support/pod-certificate-checks.js';
import {
  PODS_BUNDLE as BUNDLE,
  createPod,
  type KeyMaterialForm,
  kubeletRequest,
  namespaceObject,
  podIdentity,
  PODS_SIGNER as SIGNER,
  seedPodsIssuer,
} from '../support/pod-certificates.js';
import { recordingLogger } from '../support/recording-logger.js';

// Pod certificates on each shape of cluster people run: which versions of
// certificates.k8s.io the API server serves PodCertificateRequests and ClusterTrustBundles in.
// Kubelets of each release create requests through the version they speak; the controller
// finds the served version through discovery and signs every request once.

const WAIT_MS = 60_000;
// One RSA type (its key generation is slow; kubeletKey shares one key per type).
const KEY_TYPES: PodCertificateKeyType[] = [
  'ECDSAP256',
  'ECDSAP384',
  'ECDSAP521',
  'ED25519',
  'RSA3072',
];

interface Shape {
  name: string;
  served: { podcertificaterequests: string[]; clustertrustbundles: string[] };
  /** Kubelets asking: the key form of their release, the version they create through. */
  kubelets: Array<{ form: KeyMaterialForm; version: string }>;
  /** The version the controller speaks, per resource (none: not served). */
  controllerSpeaks: { podcertificaterequests: string; clustertrustbundles: string | undefined };
}

const SHAPES: Shape[] = [
  {
    name: '1.37 default: v1 only',
    served: { podcertificaterequests: ['v1'], clustertrustbundles: ['v1'] },
    kubelets: [{ form: '1.36', version: 'v1' }],
    controllerSpeaks: { podcertificaterequests: 'v1', clustertrustbundles: 'v1' },
  },
  {
    name: '1.37 with v1beta1 re-enabled: both',
    served: { podcertificaterequests: ['v1', 'v1beta1'], clustertrustbundles: ['v1', 'v1beta1'] },
    // A 1.37 kubelet and a 1.36 one (which still speaks v1beta1).
    kubelets: [
      { form: '1.36', version: 'v1' },
      { form: '1.36', version: 'v1beta1' },
    ],
    controllerSpeaks: { podcertificaterequests: 'v1', clustertrustbundles: 'v1' },
  },
  {
    name: '1.36: v1beta1 only',
    served: { podcertificaterequests: ['v1beta1'], clustertrustbundles: ['v1beta1'] },
    kubelets: [
      { form: '1.35', version: 'v1beta1' },
      { form: '1.36', version: 'v1beta1' },
    ],
    controllerSpeaks: { podcertificaterequests: 'v1beta1', clustertrustbundles: 'v1beta1' },
  },
  {
    name: '1.35 without ClusterTrustBundles',
    served: { podcertificaterequests: ['v1beta1'], clustertrustbundles: [] },
    kubelets: [{ form: '1.35', version: 'v1beta1' }],
    controllerSpeaks: { podcertificaterequests: 'v1beta1', clustertrustbundles: undefined },
  },
];

/** kind as a client that speaks only version sees it (a kubelet of one release). */
function speaking(kind: ResourceKind, version: string): ResourceKind {
  return { ...kind, version, versions: [version] };
}

/** The version in a request's path (`/apis/<group>/<version>/...`). */
function versionOf(entry: RequestLogEntry): string | undefined {
  return entry.path.split('/')[3];
}

for (const shape of SHAPES) {
  t.test(shape.name, async (t) => {
    const cluster = await startCluster(t, { servedVersions: shape.served });
    const admin = cluster.server.store;
    const ca = await makeCA();
    await admin.create(NamespaceKind, namespaceObject('shop'));
    await seedPodsIssuer(admin, ca);
    const pod = await createPod(admin, podIdentity('shop', 'api-0', { serviceAccount: 'api' }));
    const logger = recordingLogger();
    startClusterController(t, cluster, { logger });

    const kubeConfig = cluster.kubeConfig(cluster.server.adminToken);
    const asked: Array<{ name: string; label: string; key: KeyObject }> = [];
    for (const { form, version } of shape.kubelets) {
      const kubelet = new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000 });
      const kind = speaking(PodCertificateRequestKind, version);
      for (const keyType of KEY_TYPES) {
        const { request, key } = await kubeletRequest(pod, SIGNER, keyType, form);
        const created = await kubelet.create(kind, request);
        t.equal(created.apiVersion, `certificates.k8s.io/${version}`, 'answered in its version');
        asked.push({
          name: created.metadata.name,
          label: `${keyType} ${form} via ${version}`,
          key,
        });
      }
    }

    const bundleVersion = shape.controllerSpeaks.clustertrustbundles;
    const trustBundlePem = bundleVersion
      ? (await trustBundle(admin, BUNDLE)).spec.trustBundle
      : ca.certificatePem;
    for (const { name, label, key } of asked) {
      const issued = await answered(admin, 'shop', name, WAIT_MS);
      await t.test(label, async (t) => {
        await checkIssued(t, issued, {
          publicKey: key,
          spiffeId: 'spiffe://cluster.local/ns/shop/sa/api',
          trustBundlePem,
        });
      });
    }

    const controller = cluster.server.requests.filter((r) => r.user === CONTROLLER_USER);
    const of = (resource: string) => controller.filter((r) => r.resource === resource);
    t.same(
      [...new Set(of('podcertificaterequests').map(versionOf))],
      [shape.controllerSpeaks.podcertificaterequests],
      'every request of the controller on PodCertificateRequests speaks the served version',
    );
    const writes = new Map<string, number>();
    for (const r of of('podcertificaterequests')) {
      if (r.subresource === 'status')
        writes.set(String(r.name), (writes.get(String(r.name)) ?? 0) + 1);
    }
    t.same(
      asked.filter(({ name }) => writes.get(name) !== 1).map(({ label }) => label),
      [],
      'exactly one status write per request',
    );
    if (bundleVersion) {
      const creates = of('clustertrustbundles').filter((r) => r.verb === 'create');
      t.same(
        creates.map((r) => [versionOf(r), r.status]),
        [[bundleVersion, 201]],
        'the bundle is created once, through the served version',
      );
      t.same(
        [...new Set(of('clustertrustbundles').map(versionOf))],
        [bundleVersion],
        'the publisher speaks the served version only',
      );
    } else {
      t.same(of('clustertrustbundles'), [], 'no request on a resource not served');
      t.same(
        logger.records
          .filter(
            ([, , msg]) => msg === 'the cluster does not serve this API: controller not started',
          )
          .map(([, obj]) => obj),
        [
          {
            controller: 'clustertrustbundles-publisher',
            resource: 'clustertrustbundles.certificates.k8s.io',
            versions: 'v1, v1beta1',
          },
        ],
        'the publisher is left out, said once',
      );
    }
    t.same(
      controller.filter((r) => r.status >= 400),
      [],
      'no request of the controller was refused (discovery decided before any was sent)',
    );
  });
}

t.test(
  "both versions served: a 1.35 kubelet's request, read through v1, is Denied UnsupportedKeyType",
  async (t) => {
    const cluster = await startCluster(t);
    const admin = cluster.server.store;
    const ca = await makeCA();
    await admin.create(NamespaceKind, namespaceObject('shop'));
    await seedPodsIssuer(admin, ca);
    const pod = await createPod(admin, podIdentity('shop', 'api-0'));
    const v1beta1 = new KubernetesStore({
      kubeConfig: cluster.kubeConfig(cluster.server.adminToken),
      qps: 1000,
      burst: 1000,
    });
    const { request } = await kubeletRequest(pod, SIGNER, 'ECDSAP256', '1.35');
    const created = await v1beta1.create<PodCertificateRequest>(
      speaking(PodCertificateRequestKind, 'v1beta1'),
      request,
    );
    t.ok(created.spec.pkixPublicKey, 'v1beta1 shows the key the kubelet sent');
    const v1 = new KubernetesStore({
      kubeConfig: cluster.kubeConfig(cluster.server.adminToken),
      qps: 1000,
      burst: 1000,
    });
    const seen = await v1.get<PodCertificateRequest>(
      PodCertificateRequestKind,
      created.metadata.name,
      'shop',
    );
    t.equal(seen.apiVersion, 'certificates.k8s.io/v1');
    t.equal(seen.spec.pkixPublicKey, undefined, 'v1 has no pkixPublicKey');
    t.equal(seen.spec.proofOfPossession, undefined, 'nor proofOfPossession');

    startClusterController(t, cluster);
    const done = await answered(admin, 'shop', created.metadata.name, WAIT_MS);
    t.match(done.status?.conditions, [
      {
        type: 'Denied',
        status: 'True',
        reason: 'UnsupportedKeyType',
        message: /certificates\.k8s\.io\/v1 does not show: upgrade the node to 1\.36 or later/,
      },
    ]);
    t.equal(done.status?.conditions?.length, 1, 'Denied only: never Failed');
    t.equal(done.status?.certificateChain, undefined, 'no chain');
  },
);
