import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { isStoreError } from '../../src/store/errors.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import type { WatchEvent } from '../../src/store/resource-store.js';
import { certificateObject } from '../support/certificate-stack.js';
import { clientNode as k8s } from '../support/client-node-full.js';
import {
  CONTROLLER_TOKEN,
  NODE_TOKEN,
  POD_NAMESPACE,
  startCluster,
} from '../support/cluster-harness.js';
import { rejection, until } from '../support/eventually.js';

// Certificates through the real KubernetesStore against the fake API server, which enforces
// the RBAC of deploy/manifests: what a user writes, what the controller's ServiceAccount may
// do with it, and what it may not.

const QUICK = { timeoutMs: 5_000, intervalMs: 5 };

t.test('a Certificate round-trips: create, status through /status, watch, delete', async (t) => {
  const cluster = await startCluster(t);
  const user = new KubernetesStore({
    kubeConfig: cluster.kubeConfig(cluster.server.adminToken),
    qps: 1000,
    burst: 1000,
  });
  const controller = new KubernetesStore({
    kubeConfig: cluster.kubeConfig(CONTROLLER_TOKEN),
    qps: 1000,
    burst: 1000,
  });

  const events: WatchEvent<Certificate>[] = [];
  const errors: Error[] = [];
  const watch = controller.watch<Certificate>(
    CertificateKind,
    {},
    { onEvent: (event) => events.push(event), onError: (err) => errors.push(err) },
  );
  t.teardown(() => watch.stop());
  await until(() => cluster.server.openWatches === 1, { ...QUICK, what: 'the watch' });

  const created = await user.create<Certificate>(CertificateKind, {
    ...userCertificate('web', POD_NAMESPACE),
    status: { revision: 9 },
  });
  t.equal(created.apiVersion, 'cert-manager.io/v1');
  t.equal(created.kind, 'Certificate');
  t.match(created.metadata.uid, /.+/, 'uid from the server');
  t.equal(created.metadata.generation, 1);
  t.equal(created.status, undefined, 'status is not written by a create (status subresource)');
  t.same(created.spec, userCertificate('web', POD_NAMESPACE).spec, 'spec kept as written');

  const live = await controller.get<Certificate>(CertificateKind, 'web', POD_NAMESPACE);
  t.same(live, created, 'the controller reads what the user wrote');
  const withStatus = await controller.updateStatus<Certificate>(CertificateKind, {
    ...live,
    spec: { ...live.spec, isCA: true },
    status: { revision: 1, notAfter: '2027-01-01T00:00:00Z' },
  });
  t.same(withStatus.status, { revision: 1, notAfter: '2027-01-01T00:00:00Z' }, 'status written');
  t.notOk(withStatus.spec.isCA, 'a status write leaves spec alone');
  t.equal(withStatus.metadata.generation, 1, 'nor bumps the generation');
  const stale = await rejection(
    controller.updateStatus(CertificateKind, { ...live, status: { revision: 2 } }),
  );
  t.ok(isStoreError(stale, 'Conflict'), 'a status write from a stale resourceVersion conflicts');

  const edited = await user.update<Certificate>(CertificateKind, {
    ...withStatus,
    spec: { ...withStatus.spec, dnsNames: ['web.example.com'] },
    status: { revision: 5 },
  });
  t.equal(edited.metadata.generation, 2, 'a spec edit bumps the generation');
  t.same(edited.status, withStatus.status, 'an update keeps the stored status');

  const listed = await controller.list<Certificate>(CertificateKind, {});
  t.same(
    listed.items.map((c) => c.metadata.name),
    ['web'],
    'listed in every namespace',
  );
  await user.delete(CertificateKind, 'web', POD_NAMESPACE);
  await until(() => events.length === 4, { ...QUICK, what: 'four watch events' });
  t.same(
    events.map((e) => e.type),
    ['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED'],
    'the watch saw every change in order',
  );
  t.same(
    events.slice(0, 3).map((e) => e.object.metadata.resourceVersion),
    [created, withStatus, edited].map((c) => c.metadata.resourceVersion),
    'each at the resourceVersion its write returned',
  );
  t.same(events[1]?.object.status, withStatus.status, 'the status change reached the watch');
  t.equal(events[3]?.object.kind, 'Certificate');
  t.same(errors, []);

  // The CRD's selectableFields: an informer could select by issuer on the server.
  const custom = cluster.kubeConfig(cluster.server.adminToken).makeApiClient(k8s.CustomObjectsApi);
  await user.create(CertificateKind, userCertificate('api', POD_NAMESPACE));
  const byIssuer = (value: string) =>
    custom.listNamespacedCustomObject({
      group: 'cert-manager.io',
      version: 'v1',
      plural: 'certificates',
      namespace: POD_NAMESPACE,
      fieldSelector: `spec.issuerRef.name=${value}`,
    }) as Promise<{ items: Certificate[] }>;
  t.same(
    (await byIssuer('ca')).items.map((c) => c.metadata.name),
    ['api'],
  );
  t.same((await byIssuer('other')).items, []);
});

// What the controller may do with Certificates is proven by the controllers themselves, under
// this RBAC, in rbac.test.ts and cluster-certificates.test.ts; here what it may not.
t.test(
  'the controller ServiceAccount may not edit, create or delete Certificates; the node may not list them',
  async (t) => {
    const cluster = await startCluster(t);
    await cluster.server.store.create(CertificateKind, userCertificate('web', POD_NAMESPACE));
    const controller = new KubernetesStore({
      kubeConfig: cluster.kubeConfig(CONTROLLER_TOKEN),
      qps: 1000,
      burst: 1000,
    });
    const web = await controller.get<Certificate>(CertificateKind, 'web', POD_NAMESPACE);
    const refused = async (what: string, call: Promise<unknown>) => {
      const err = await rejection(call);
      t.ok(isStoreError(err, 'Forbidden'), `${what}: Forbidden`);
    };
    await refused(
      'a spec edit',
      controller.update(CertificateKind, { ...web, spec: { ...web.spec, isCA: true } }),
    );
    await refused(
      'a create',
      controller.create(CertificateKind, userCertificate('x', POD_NAMESPACE)),
    );
    await refused('a delete', controller.delete(CertificateKind, 'web', POD_NAMESPACE));

    const node = new KubernetesStore({
      kubeConfig: cluster.kubeConfig(NODE_TOKEN),
      qps: 1000,
      burst: 1000,
    });
    await refused('the node plugin listing Certificates', node.list(CertificateKind, {}));
  },
);

/** A Certificate as a user writes it (no status), in namespace, for a CA Issuer `ca`. */
function userCertificate(name: string, namespace: string): Certificate {
  return certificateObject(namespace, name, {
    dnsNames: [`${name}.${namespace}.svc`],
    issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
  });
}
