import t from 'tap';
import { SignerResourceResolver } from '../../src/admission/webhook/signer-resources.js';
import { isStoreError } from '../../src/store/errors.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesDiscovery } from '../../src/store/kubernetes/kubernetes-discovery.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import { rejection } from '../support/eventually.js';

const server = await FakeApiServer.start();
t.teardown(() => server.close());
server.addToken('anyone', { username: 'anyone' });
const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions(server.kubeConfig('anyone'));

t.test('groups and resources come from the API server through client-node', async (t) => {
  const discovery = new KubernetesDiscovery(kubeConfig);
  t.same(await discovery.groupVersions('cert-manager.io'), ['v1']);
  t.equal(await discovery.groupVersions('nowhere.example.com'), undefined);
  const resources = await discovery.resources('cert-manager.io', 'v1');
  t.same(
    resources.filter((r) => !r.name.includes('/')).map((r) => [r.name, r.kind, r.namespaced]),
    [
      ['certificates', 'Certificate', true],
      ['certificaterequests', 'CertificateRequest', true],
      ['issuers', 'Issuer', true],
      ['clusterissuers', 'ClusterIssuer', false],
    ],
  );
  t.ok(
    resources.some((r) => r.name === 'issuers/status'),
    'subresources are listed too',
  );
  t.same(await discovery.resources('cert-manager.io', 'v9'), [], 'a version not served has none');
  const asked = server.requests.filter((r) => r.path.startsWith('/apis'));
  t.ok(
    asked.every((r) => r.user === 'anyone' && r.status !== 403),
    'no RBAC: any user may',
  );
});

t.test('the resolver finds issuers and clusterissuers through the server', async (t) => {
  const resolver = new SignerResourceResolver(new KubernetesDiscovery(kubeConfig));
  t.same(await resolver.resolve('cert-manager.io', 'ClusterIssuer'), {
    signerResource: 'clusterissuers.cert-manager.io',
    namespaced: false,
  });
});

t.test('a server that fails or hangs rejects with a StoreError naming the call', async (t) => {
  const stop = server.failRequests({ status: 503, times: 1, match: (r) => r.path === '/apis' });
  t.teardown(stop);
  const err = await rejection(new KubernetesDiscovery(kubeConfig).groupVersions('cert-manager.io'));
  t.ok(isStoreError(err, 'InternalError'), String(err));
  t.match(String(err), 'list API groups');
  server.failRequests({
    status: 500,
    times: 1,
    match: (r) => r.path === '/apis/cert-manager.io/v1',
  });
  t.match(
    String(await rejection(new KubernetesDiscovery(kubeConfig).resources('cert-manager.io', 'v1'))),
    'list resources of cert-manager.io/v1: Internal error occurred: injected fault',
  );
  const hang = server.failRequests({ hang: true, times: 1, match: (r) => r.path === '/apis' });
  t.teardown(hang);
  const timeout = await rejection(new KubernetesDiscovery(kubeConfig, 100).groupVersions('x'));
  t.match(String(timeout), 'list API groups: no answer from the API server within 100 ms');
});
