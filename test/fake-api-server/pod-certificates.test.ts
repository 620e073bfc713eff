import type * as K8s from '@kubernetes/client-node';
import t from 'tap';
import type { ClusterTrustBundle } from '../../src/api/cluster-trust-bundle.js';
import { formatTimestamp } from '../../src/api/conditions.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
  type PodCertificateRequestStatus,
} from '../../src/api/pod-certificate-request.js';
import { encodePem } from '../../src/pki/pem.js';
import { clientNode as k8s } from '../support/client-node-full.js';
import {
  issuedStatus,
  issueLeaf,
  kubeletRequest,
  MINUTE_MS,
  makeSigner,
  newKey,
  refusedStatus,
  SIGNER_NAME,
  trustBundle,
} from '../support/pod-certificate-fixtures.js';
import { type ApiStatus, apiError } from './api-error.js';
import { FakeApiServer, type FakeApiServerOptions, serviceAccountUser } from './fake-api-server.js';
import { loadRbacYaml } from './rbac-authorizer.js';

const PCR = { group: 'certificates.k8s.io', version: 'v1beta1', plural: 'podcertificaterequests' };
const CTB = { group: 'certificates.k8s.io', version: 'v1beta1', plural: 'clustertrustbundles' };
const NS = 'shop';
const HOUR_MS = 60 * MINUTE_MS;
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

// kubelet creates requests; the signer signs for every example.com signer and attests for its
// own; the exact signer signs for one name; the rogue may write statuses and bundles but holds
// no grant on any signer.
const RBAC_YAML = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-pcr}
rules:
- {apiGroups: [certificates.k8s.io], resources: [podcertificaterequests], verbs: [create, get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: node-pcr}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-pcr}
subjects: [{kind: Group, name: 'system:nodes'}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pcr-writer}
rules:
- {apiGroups: [certificates.k8s.io], resources: [podcertificaterequests], verbs: [get, list, watch, update, patch]}
- {apiGroups: [certificates.k8s.io], resources: [podcertificaterequests/status], verbs: [update, patch]}
- {apiGroups: [certificates.k8s.io], resources: [clustertrustbundles], verbs: [get, list, create, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: domain-signer}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: ['example.com/*'], verbs: [sign]}
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: ['${SIGNER_NAME}'], verbs: [attest]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: exact-signer}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: ['${SIGNER_NAME}'], verbs: [sign]}
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: ['example.com/*'], verbs: [attest]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: pcr-writers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pcr-writer}
subjects:
- {kind: ServiceAccount, name: signer, namespace: cert-csi}
- {kind: ServiceAccount, name: exact, namespace: cert-csi}
- {kind: ServiceAccount, name: rogue, namespace: cert-csi}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: domain-signer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: domain-signer}
subjects: [{kind: ServiceAccount, name: signer, namespace: cert-csi}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: exact-signer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: exact-signer}
subjects: [{kind: ServiceAccount, name: exact, namespace: cert-csi}]
`;

interface Teardown {
  teardown(fn: () => unknown): void;
}

async function start(t: Teardown, options: FakeApiServerOptions = {}) {
  const server = await FakeApiServer.start({ rbac: loadRbacYaml(RBAC_YAML), ...options });
  t.teardown(() => server.close());
  server.addToken('kubelet', { username: 'system:node:worker-3', groups: ['system:nodes'] });
  server.addToken('signer', serviceAccountUser('cert-csi', 'signer'));
  server.addToken('exact', serviceAccountUser('cert-csi', 'exact'));
  server.addToken('rogue', serviceAccountUser('cert-csi', 'rogue'));
  const api = (token: string) => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions(server.kubeConfig(token));
    return {
      custom: kc.makeApiClient(k8s.CustomObjectsApi),
      core: kc.makeApiClient(k8s.CoreV1Api),
    };
  };
  return {
    server,
    admin: api(server.adminToken),
    kubelet: api('kubelet'),
    signer: api('signer'),
    exact: api('exact'),
    rogue: api('rogue'),
  };
}

type Custom = K8s.CustomObjectsApi;

function createRequest(custom: Custom, body: PodCertificateRequest) {
  return custom.createNamespacedCustomObject({
    ...PCR,
    namespace: NS,
    body,
  }) as Promise<PodCertificateRequest>;
}

function writeStatus(
  custom: Custom,
  request: PodCertificateRequest,
  status: PodCertificateRequestStatus,
) {
  return custom.replaceNamespacedCustomObjectStatus({
    ...PCR,
    namespace: NS,
    name: request.metadata.name,
    body: { ...request, status },
  }) as Promise<PodCertificateRequest>;
}

const signerCa = await makeSigner();
const key = await newKey();
const otherKey = await newKey();

t.test(
  'kubelet creates requests in both forms: status wiped, maxExpirationSeconds defaulted',
  async (t) => {
    const { kubelet, admin } = await start(t);
    for (const form of ['pkix', 'stub'] as const) {
      const body = await kubeletRequest(key, form);
      body.metadata = { ...body.metadata, name: '', generateName: 'req-' };
      // A status in the body, as a confused client might send: the server drops it.
      body.status = refusedStatus('Denied');
      const created = await createRequest(kubelet.custom, body);
      t.match(created.metadata.name, /^req-[a-z0-9]{5}$/, `${form}: generateName`);
      t.equal(created.status, undefined, `${form}: no status`);
      t.equal(created.spec.maxExpirationSeconds, 86_400, `${form}: the default`);
      const stored = (await admin.custom.getNamespacedCustomObject({
        ...PCR,
        namespace: NS,
        name: created.metadata.name,
      })) as PodCertificateRequest;
      t.same(
        stored.spec,
        { ...body.spec, maxExpirationSeconds: 86_400 },
        `${form}: stored as sent, defaulted`,
      );
      t.equal(stored.apiVersion, 'certificates.k8s.io/v1beta1');
    }
    const explicit = await kubeletRequest(key, 'stub', { maxExpirationSeconds: 3600 });
    explicit.metadata.name = 'explicit';
    t.equal(
      (await createRequest(kubelet.custom, explicit)).spec.maxExpirationSeconds,
      3600,
      'an explicit value stays',
    );
  },
);

t.test(
  'a request whose proof does not verify is refused at create, and nothing is stored',
  async (t) => {
    const { kubelet, server } = await start(t);
    const body = await kubeletRequest(key, 'pkix', { podUID: 'not-the-signed-uid' });
    const status = await apiError(createRequest(kubelet.custom, body), 422);
    t.equal(status.reason, 'Invalid');
    t.equal(
      status.message,
      'PodCertificateRequest.certificates.k8s.io "req-7xk2q" is invalid: spec.proofOfPossession: Invalid value: could not verify proof-of-possession signature',
    );
    t.same(status.details?.causes, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: could not verify proof-of-possession signature',
        field: 'spec.proofOfPossession',
      },
    ]);
    const tampered = await kubeletRequest(key, 'stub');
    const der = Buffer.from(tampered.spec.stubPKCS10Request as string, 'base64');
    der[der.length - 1] = (der.at(-1) ?? 0) ^ 0xff;
    tampered.spec.stubPKCS10Request = der.toString('base64');
    const stub = await apiError(createRequest(kubelet.custom, tampered), 422);
    t.equal(stub.details?.causes?.[0]?.field, 'spec.stubPKCS10Request');
    t.same((await server.store.list(PodCertificateRequestKind)).items, []);
  },
);

t.test('the signer issues: accepted once, then the status is immutable', async (t) => {
  const { kubelet, signer } = await start(t);
  for (const form of ['pkix', 'stub'] as const) {
    const body = await kubeletRequest(key, form);
    body.metadata.name = `req-${form}`;
    const created = await createRequest(kubelet.custom, body);
    const notBefore = new Date(Date.now() - 2 * MINUTE_MS);
    const chain = (await issueLeaf(signerCa, key, { notBefore })) + signerCa.certificatePem;
    const issued = await writeStatus(signer.custom, created, issuedStatus(chain, notBefore));
    t.equal(issued.status?.conditions?.[0]?.type, 'Issued', `${form}: issued`);
    t.equal(issued.status?.certificateChain, chain);
    t.same(issued.spec, created.spec, 'the spec is what was stored');
    const again = await writeStatus(
      signer.custom,
      issued,
      issued.status as PodCertificateRequestStatus,
    );
    t.equal(
      again.metadata.resourceVersion,
      issued.metadata.resourceVersion,
      `${form}: rewriting it unchanged is a no-op`,
    );
    const denied = await apiError(writeStatus(signer.custom, issued, refusedStatus('Denied')), 422);
    t.equal(
      denied.message,
      `PodCertificateRequest.certificates.k8s.io "req-${form}" is invalid: status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed`,
    );
    t.equal(denied.details?.causes?.[0]?.field, 'status');
  }
});

t.test('each status rule (kube-apiserver’s) answers 422 at its field', async (t) => {
  const { kubelet, signer } = await start(t);
  const created = await createRequest(kubelet.custom, await kubeletRequest(key, 'pkix'));
  const now = Date.now();
  const leafAt = async (minutesAgo: number, lifetimeMs = 24 * HOUR_MS, leafKey = key) => {
    const notBefore = new Date(now - minutesAgo * MINUTE_MS);
    return { notBefore, chain: await issueLeaf(signerCa, leafKey, { notBefore, lifetimeMs }) };
  };
  const recent = await leafAt(2);
  const old = await leafAt(6);
  const long = await leafAt(2, 25 * HOUR_MS);
  const foreign = await leafAt(2, 24 * HOUR_MS, otherKey);
  const keyBlock = encodePem('PRIVATE KEY', new Uint8Array(8));
  const issued = issuedStatus(recent.chain, recent.notBefore);
  const cases: Array<[string, PodCertificateRequestStatus, string, RegExp]> = [
    [
      'notBefore more than 5 minutes ago',
      issuedStatus(old.chain, old.notBefore),
      'status.notBefore',
      /within 5 minutes of kube-apiserver's current time/,
    ],
    [
      'a lifetime over maxExpirationSeconds',
      issuedStatus(long.chain, long.notBefore, 25 * HOUR_MS),
      'status.certificateChain',
      /lifetime must be <= spec.maxExpirationSeconds \(86400\)/,
    ],
    [
      'a refresh too early',
      issuedStatus(recent.chain, recent.notBefore, 24 * HOUR_MS, 5 * MINUTE_MS),
      'status.beginRefreshAt',
      /at least 10 minutes after status.notBefore/,
    ],
    [
      'a leaf for another key',
      issuedStatus(foreign.chain, foreign.notBefore),
      'status.certificateChain',
      /not issued to the requested public key/,
    ],
    [
      'a key in the chain',
      issuedStatus(recent.chain + keyBlock, recent.notBefore),
      'status.certificateChain',
      /entirely of CERTIFICATE PEM blocks/,
    ],
    [
      "notAfter not the leaf's",
      { ...issued, notAfter: formatTimestamp(new Date(recent.notBefore.getTime() + HOUR_MS)) },
      'status.notAfter',
      /NotAfter time encoded in the leaf/,
    ],
    [
      'two outcomes',
      {
        ...issued,
        conditions: [...(issued.conditions ?? []), ...(refusedStatus('Failed').conditions ?? [])],
      },
      'status.conditions[1].type',
      /at most one condition/,
    ],
    [
      'a reason that is no reason',
      {
        ...issued,
        conditions: [
          {
            ...(issued.conditions?.[0] as NonNullable<
              PodCertificateRequestStatus['conditions']
            >[number]),
            reason: 'no good',
          },
        ],
      },
      'status.conditions[0].reason',
      /a condition reason must start/,
    ],
    [
      'Denied with a chain',
      { ...refusedStatus('Denied'), certificateChain: recent.chain },
      'status',
      /non-condition status fields must be empty/,
    ],
    [
      'a progress marker',
      { certificateChain: recent.chain },
      'status',
      /status is immutable unless transitioning/,
    ],
  ];
  for (const [name, status, field, message] of cases) {
    const error = await apiError(writeStatus(signer.custom, created, status), 422);
    t.equal(error.details?.causes?.[0]?.field, field, name);
    t.match(error.message, message, name);
  }
  const missing = await apiError(
    writeStatus(
      signer.custom,
      { ...created, metadata: { ...created.metadata, resourceVersion: '' } },
      issued,
    ),
    422,
  );
  t.match(
    missing.message,
    /metadata.resourceVersion: Invalid value: 0x0: must be specified for an update/,
    'a status write needs a resourceVersion',
  );
  const accepted = await writeStatus(signer.custom, created, issued);
  t.equal(
    accepted.status?.conditions?.[0]?.type,
    'Issued',
    'after all that, the right status goes through',
  );
  await apiError(writeStatus(signer.custom, created, refusedStatus('Denied')), 409);
});

t.test('status writes need sign on the signer: exact name or <domain>/*', async (t) => {
  const { kubelet, signer, exact, rogue } = await start(t);
  const requests: PodCertificateRequest[] = [];
  for (const name of ['a', 'b', 'c']) {
    const body = await kubeletRequest(key, 'stub');
    body.metadata.name = name;
    requests.push(await createRequest(kubelet.custom, body));
  }
  const [a, b, c] = requests as [
    PodCertificateRequest,
    PodCertificateRequest,
    PodCertificateRequest,
  ];
  const denial = await apiError(writeStatus(rogue.custom, a, refusedStatus('Denied')), 422);
  t.equal(
    denial.message,
    'PodCertificateRequest.certificates.k8s.io "a" is invalid: spec.signerName: Forbidden: User "system:serviceaccount:cert-csi:rogue" is not permitted to "sign" for signer "example.com/spiffe"',
    'the strategy refuses with a field error, which the API server answers as 422',
  );
  t.same(denial.details?.causes?.[0], {
    reason: 'FieldValueForbidden',
    message:
      'Forbidden: User "system:serviceaccount:cert-csi:rogue" is not permitted to "sign" for signer "example.com/spiffe"',
    field: 'spec.signerName',
  });
  const unchanged = await writeStatus(rogue.custom, a, {});
  t.equal(
    unchanged.metadata.resourceVersion,
    a.metadata.resourceVersion,
    'a write that changes nothing needs no grant',
  );
  const patched = await rogue.custom
    .patchNamespacedCustomObjectStatus(
      { ...PCR, namespace: NS, name: 'a', body: { status: refusedStatus('Denied') } },
      mergePatch,
    )
    .then(
      () => 'patched',
      (err: unknown) => (err instanceof k8s.ApiException ? err.code : err),
    );
  t.equal(patched, 422, 'a patch is checked the same way');

  const byDomain = await writeStatus(signer.custom, a, refusedStatus('Denied'));
  t.equal(byDomain.status?.conditions?.[0]?.type, 'Denied', 'sign on example.com/* is enough');
  const byName = await writeStatus(exact.custom, b, refusedStatus('Failed', 'CAExpired'));
  t.equal(byName.status?.conditions?.[0]?.type, 'Failed', 'sign on the exact name is enough');
  const viaPatch = (await signer.custom.patchNamespacedCustomObjectStatus(
    { ...PCR, namespace: NS, name: 'c', body: { status: refusedStatus('Denied', 'PodNotFound') } },
    mergePatch,
  )) as PodCertificateRequest;
  t.equal(
    viaPatch.status?.conditions?.[0]?.reason,
    'PodNotFound',
    'and a merge patch of the status',
  );
  t.same(viaPatch.spec, c.spec);

  const other = await kubeletRequest(key, 'stub', { signerName: 'other.org/signer' });
  other.metadata.name = 'other';
  const elsewhere = await createRequest(kubelet.custom, other);
  const refused = await apiError(
    writeStatus(signer.custom, elsewhere, refusedStatus('Denied')),
    422,
  );
  t.match(
    refused.message,
    /is not permitted to "sign" for signer "other.org\/signer"/,
    'no grant on another domain',
  );
});

t.test('without RBAC every status write is allowed, as every other request', async (t) => {
  const server = await FakeApiServer.start();
  t.teardown(() => server.close());
  server.addToken('anyone', { username: 'anyone' });
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions(server.kubeConfig('anyone'));
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const created = await createRequest(custom, await kubeletRequest(key, 'pkix'));
  const denied = await writeStatus(custom, created, refusedStatus('Denied'));
  t.equal(denied.status?.conditions?.[0]?.type, 'Denied');
});

t.test('the server clock decides the notBefore window', async (t) => {
  let skew = 0;
  const { kubelet, signer } = await start(t, { now: () => Date.now() + skew });
  const created = await createRequest(kubelet.custom, await kubeletRequest(key, 'pkix'));
  const notBefore = new Date(Date.now() - 2 * MINUTE_MS);
  const status = issuedStatus(await issueLeaf(signerCa, key, { notBefore }), notBefore);
  skew = 10 * MINUTE_MS;
  const error = await apiError(writeStatus(signer.custom, created, status), 422);
  t.equal(
    error.details?.causes?.[0]?.field,
    'status.notBefore',
    'a signer 10 minutes behind the API server',
  );
  skew = 0;
  t.equal(
    (await writeStatus(signer.custom, created, status)).status?.conditions?.[0]?.type,
    'Issued',
  );
});

t.test('updates of the main resource: spec immutable, status kept, metadata free', async (t) => {
  const { kubelet, signer } = await start(t);
  const created = await createRequest(kubelet.custom, await kubeletRequest(key, 'pkix'));
  const denied = await writeStatus(signer.custom, created, refusedStatus('Denied'));
  const replace = (body: PodCertificateRequest) =>
    signer.custom.replaceNamespacedCustomObject({
      ...PCR,
      namespace: NS,
      name: body.metadata.name,
      body,
    }) as Promise<PodCertificateRequest>;
  const relabelled = await replace({
    ...denied,
    metadata: { ...denied.metadata, labels: { seen: 'yes' } },
    status: {},
  });
  t.same(relabelled.metadata.labels, { seen: 'yes' });
  t.same(relabelled.status, denied.status, 'the body cannot clear the status');
  const changed = await apiError(
    replace({ ...relabelled, spec: { ...relabelled.spec, podName: 'api-1' } }),
    422,
  );
  t.match(changed.message, /is invalid: spec: Invalid value: .*: field is immutable$/);
  t.equal(changed.details?.causes?.[0]?.field, 'spec');
  const { maxExpirationSeconds: _max, ...undefaulted } = relabelled.spec;
  const same = await replace({ ...relabelled, spec: undefaulted });
  t.equal(
    same.spec.maxExpirationSeconds,
    86_400,
    'an update body is defaulted too, so omitting it changes nothing',
  );
});

t.test('ClusterTrustBundles: validated; a signer-linked one needs attest', async (t) => {
  const { signer, exact, rogue, admin } = await start(t);
  const ca = signerCa.certificatePem;
  const create = (custom: Custom, body: ClusterTrustBundle) =>
    custom.createClusterCustomObject({ ...CTB, body }) as Promise<ClusterTrustBundle>;
  const linked = trustBundle('example.com:spiffe:primary', ca, SIGNER_NAME);

  const forbidden = await apiError(create(rogue.custom, linked), 403);
  t.equal(
    forbidden.message,
    'clustertrustbundles.certificates.k8s.io "example.com:spiffe:primary" is forbidden: user not permitted to attest for signerName "example.com/spiffe"',
  );
  t.equal(forbidden.reason, 'Forbidden');

  const unlinked = await create(rogue.custom, trustBundle('roots', ca));
  t.equal(unlinked.spec.trustBundle, ca, 'an unlinked bundle needs no grant');
  const invalid = await apiError(
    create(rogue.custom, trustBundle('junk', 'no certificates here')),
    422,
  );
  t.equal(
    invalid.message,
    'ClusterTrustBundle.certificates.k8s.io "junk" is invalid: spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided',
  );
  const named = await apiError(create(signer.custom, trustBundle('primary', ca, SIGNER_NAME)), 422);
  t.match(
    named.message,
    /must be named with prefix example.com:spiffe:/,
    'validation comes before the attest check',
  );

  for (const [who, custom] of [
    ['attest on the name', signer.custom],
    ['attest on example.com/*', exact.custom],
  ] as const) {
    const result = await create(custom, {
      ...linked,
      metadata: { name: `${linked.metadata.name}-${who.length}` },
    }).then(
      (bundle) => ({ code: 201, bundle }),
      (err: unknown) => {
        if (!(err instanceof k8s.ApiException)) throw err;
        return { code: err.code, body: JSON.parse(err.body as string) as ApiStatus };
      },
    );
    t.not(result.code, 403, `${who}: the attest check passes`);
    t.equal(result.code, 201, `${who}: the bundle is stored`);
  }

  const stored = (await admin.custom.getClusterCustomObject({
    ...CTB,
    name: 'roots',
  })) as ClusterTrustBundle;
  const relinked = await apiError(
    rogue.custom.replaceClusterCustomObject({
      ...CTB,
      name: 'roots',
      body: { ...stored, spec: { ...stored.spec, signerName: SIGNER_NAME } },
    }),
    422,
  );
  t.match(
    relinked.message,
    /spec.signerName: Invalid value: "example.com\/spiffe": field is immutable/,
  );
  const list = (await rogue.custom.listClusterCustomObject({
    ...CTB,
    fieldSelector: `spec.signerName=${SIGNER_NAME}`,
  })) as { items: ClusterTrustBundle[] };
  t.same(
    list.items.map((bundle) => bundle.metadata.name).sort(),
    ['attest on example.com/*', 'attest on the name']
      .map((who) => `${linked.metadata.name}-${who.length}`)
      .sort(),
    'the field selector spec.signerName selects the two linked bundles, not "roots"',
  );
});

t.test(
  'PodCertificateRequests are listed by spec.signerName, spec.podName and spec.nodeName',
  async (t) => {
    const { kubelet, signer } = await start(t);
    const make = async (name: string, signerName: string, podName: string, nodeName: string) => {
      const body = await kubeletRequest(key, 'stub', { signerName, podName, nodeName });
      body.metadata.name = name;
      return createRequest(kubelet.custom, body);
    };
    await make('a', SIGNER_NAME, 'api-0', 'worker-1');
    await make('b', 'other.org/signer', 'api-0', 'worker-2');
    await make('c', SIGNER_NAME, 'api-1', 'worker-2');
    const names = async (fieldSelector: string) => {
      const list = (await signer.custom.listClusterCustomObject({ ...PCR, fieldSelector })) as {
        items: PodCertificateRequest[];
      };
      return list.items.map((item) => item.metadata.name);
    };
    t.same(await names(`spec.signerName=${SIGNER_NAME}`), ['a', 'c']);
    t.same(await names('spec.signerName!=example.com/spiffe'), ['b']);
    t.same(await names('spec.podName=api-0,spec.nodeName=worker-2'), ['b']);
    const inNamespace = (await signer.custom.listNamespacedCustomObject({
      ...PCR,
      namespace: NS,
      fieldSelector: 'spec.nodeName=worker-1',
    })) as { items: PodCertificateRequest[] };
    t.same(
      inNamespace.items.map((item) => item.metadata.name),
      ['a'],
    );
    const unsupported = await apiError(names('spec.podUID=x'), 400);
    t.equal(unsupported.message, 'field label not supported: spec.podUID');
  },
);

t.test('Namespaces are served, with their labels', async (t) => {
  const { admin } = await start(t);
  await admin.core.createNamespace({
    body: { metadata: { name: 'shop', labels: { 'example.com/pod-certificates': 'on' } } },
  });
  await admin.core.createNamespace({ body: { metadata: { name: 'quiet' } } });
  const shop = await admin.core.readNamespace({ name: 'shop' });
  t.same(shop.metadata?.labels, { 'example.com/pod-certificates': 'on' });
  const labelled = await admin.core.listNamespace({
    labelSelector: 'example.com/pod-certificates=on',
  });
  t.same(
    labelled.items.map((ns) => ns.metadata?.name),
    ['shop'],
  );
});
