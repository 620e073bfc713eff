import t, { type Test } from 'tap';
import { allowEveryone, subjectAccessReviewer } from '../../src/controller/access-reviewer.js';
import { isStoreError } from '../../src/store/errors.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { FakeApiServer, serviceAccountUser } from '../fake-api-server/fake-api-server.js';
import { loadRbacYaml } from '../fake-api-server/rbac-authorizer.js';
import { rejection, rejectionMessage } from '../support/eventually.js';

// A reviewer that may create reviews, and a requester allowed `reference` on one issuer only.
const RBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reviewer}
rules:
- {apiGroups: [authorization.k8s.io], resources: [subjectaccessreviews], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reviewer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reviewer}
subjects: [{kind: ServiceAccount, name: reviewer, namespace: system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: use-ca, namespace: team}
rules:
- {apiGroups: [cert-manager.io], resources: [signers], verbs: [reference], resourceNames: [ca]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: use-ca, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: use-ca}
subjects: [{kind: Group, name: developers}]
`;

async function reviewerOf(t: Test, token: string) {
  const server = await FakeApiServer.start({ rbac: loadRbacYaml(RBAC) });
  t.teardown(() => server.close());
  server.addToken('reviewer', serviceAccountUser('system', 'reviewer'));
  server.addToken('nobody', { username: 'nobody', groups: ['system:authenticated'] });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig(token));
  const store = new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000 });
  return { server, review: subjectAccessReviewer(store) };
}

const reference = (namespace: string, name: string) => ({
  verb: 'reference',
  group: 'cert-manager.io',
  resource: 'signers',
  version: '*',
  namespace,
  name,
});

t.test('a SubjectAccessReview is answered from the RBAC rules and never stored', async (t) => {
  const { server, review } = await reviewerOf(t, 'reviewer');
  const developer = { username: 'alice', uid: 'u-1', groups: ['developers'], extra: { a: ['b'] } };
  t.equal(await review(developer, reference('team', 'ca')), true, 'the bound group may');
  t.equal(await review(developer, reference('team', 'other')), false, 'not another issuer');
  t.equal(await review(developer, reference('elsewhere', 'ca')), false, 'not in another namespace');
  t.equal(
    await review({ username: 'alice' }, reference('team', 'ca')),
    false,
    'not without the group',
  );
  const posts = server.requests.filter((r) => r.resource === 'subjectaccessreviews');
  t.same(
    posts.map((r) => [r.method, r.status]),
    [
      ['POST', 201],
      ['POST', 201],
      ['POST', 201],
      ['POST', 201],
    ],
  );
  const listed = await fetch(`${server.url}/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
    headers: { authorization: `Bearer ${server.adminToken}` },
  });
  t.equal(listed.status, 405, 'reviews cannot be listed: they are not kept');
});

t.test(
  'a reviewer without create on subjectaccessreviews gets Forbidden, not a "no"',
  async (t) => {
    const { review } = await reviewerOf(t, 'nobody');
    const err = await rejection(review({ username: 'alice' }, reference('team', 'ca')));
    t.ok(isStoreError(err, 'Forbidden'), String(err));
  },
);

t.test('a review without a user or a request is refused by the server as invalid', async (t) => {
  const { review } = await reviewerOf(t, 'reviewer');
  const err = await rejection(review({ username: '' }, reference('team', 'ca')));
  t.ok(isStoreError(err, 'Invalid'));
  t.match(
    await rejectionMessage(review({ username: '' }, reference('team', 'ca'))),
    'at least one of user or group must be specified',
  );
});

t.test('embedded mode has one user and no RBAC: everyone is allowed', async (t) => {
  t.equal(await allowEveryone({ username: 'anyone' }, reference('team', 'ca')), true);
});
