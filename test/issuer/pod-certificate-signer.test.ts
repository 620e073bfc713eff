import { X509Certificate } from 'node:crypto';
import t, { type Test } from 'tap';
import { ClusterTrustBundleKind } from '../../src/api/cluster-trust-bundle.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { embeddedAdmission } from '../../src/cli/node/embedded-admission.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import { createStubPkcs10Request } from '../../src/pki/pod-certificate-key.js';
import { isStoreError, StoreError } from '../../src/store/errors.js';
import {
  clusterIssuer,
  issuer,
  tlsSecret,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { rejection, until } from '../support/eventually.js';
import { FaultyStore } from '../support/faulty-store.js';
import { makeCA, type TestCA } from '../support/issuer-fixtures.js';
import { startHarness } from '../support/issuer-stack-harness.js';
import { answered, checkIssued, trustBundle } from '../support/pod-certificate-checks.js';
import {
  createPod,
  kubeletRequest,
  namespaceObject,
  podIdentity,
} from '../support/pod-certificates.js';
import { recordingLogger } from '../support/recording-logger.js';
import { waitForNoObjects } from '../support/wait-for-object.js';

const CLUSTER_SIGNER = 'clusterissuers.cert-manager.io/pods';
const CLUSTER_BUNDLE = 'clusterissuers.cert-manager.io:pods:primary';

function caSecret(namespace: string, name: string, ca: TestCA) {
  return tlsSecret(namespace, name, { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem });
}

function podsClusterIssuer(selector: string | undefined): Issuer {
  const ci = clusterIssuer('pods', withSpec({ ca: { secretName: 'pods-ca' } }));
  if (selector !== undefined) {
    ci.metadata.annotations = { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: selector };
  }
  return ci;
}

/** A stack with the shop namespace (label env=prod) and, unless told otherwise, the pods ClusterIssuer and its CA. */
async function podStack(
  t: Test,
  options: {
    selector?: string | undefined;
    ca?: TestCA | null;
    maxDurationMs?: number;
    admit?: boolean;
  } = {},
) {
  const logger = recordingLogger();
  // Embedded mode's admission: every status the signer writes passes the API server's rules.
  // Without it, a store lets through what an API server refuses at create.
  const stack = await startHarness(t, {
    ...(options.admit === false ? {} : { admit: embeddedAdmission }),
    logger,
    ...(options.maxDurationMs ? { podCertificateMaxDurationMs: options.maxDurationMs } : {}),
  });
  const { store } = stack;
  await store.create(NamespaceKind, namespaceObject('shop', { env: 'prod' }));
  const ca = options.ca === undefined ? await makeCA() : options.ca;
  if (ca) await store.create(SecretKind, caSecret('kube-system', 'pods-ca', ca));
  await store.create(
    ClusterIssuerKind,
    podsClusterIssuer('selector' in options ? options.selector : ''),
  );
  const ask = async (request: PodCertificateRequest): Promise<PodCertificateRequest> =>
    store.create(PodCertificateRequestKind, request);
  return { ...stack, store, ca, logger, ask };
}

t.test(
  'a ClusterIssuer that opted in issues a SPIFFE certificate and publishes its CA',
  async (t) => {
    const { store, ask, ca } = await podStack(t);
    const pod = await createPod(store, podIdentity('shop', 'api-0', { serviceAccount: 'api' }));
    const { request, key } = await kubeletRequest(pod, CLUSTER_SIGNER, 'ECDSAP256', '1.36');
    const created = await ask(request);
    const bundle = await trustBundle(store, CLUSTER_BUNDLE);
    t.equal(bundle.spec.signerName, CLUSTER_SIGNER);
    t.equal(bundle.metadata.labels?.['cert-csi.io/trust-bundle'], 'true');
    t.equal(bundle.spec.trustBundle, new X509Certificate(ca?.certificatePem ?? '').toString());
    const issued = await answered(store, 'shop', created.metadata.name);
    await checkIssued(t, issued, {
      publicKey: key,
      spiffeId: 'spiffe://cluster.local/ns/shop/sa/api',
      trustBundlePem: bundle.spec.trustBundle,
    });
    t.equal(
      issued.status?.conditions?.[0]?.message,
      'issued spiffe://cluster.local/ns/shop/sa/api',
    );
    t.equal(
      Date.parse(issued.status?.notAfter ?? '') - Date.parse(issued.status?.notBefore ?? ''),
      86_400_000,
      'maxExpirationSeconds',
    );
    t.ok(
      Math.abs(Date.parse(issued.status?.notBefore ?? '') - (Date.now() - 120_000)) < 60_000,
      'backdated by about 2 minutes',
    );
  },
);

t.test(
  'a namespaced Issuer serves its own namespace, with the signer limit and trust domain',
  async (t) => {
    const stack = await startHarness(t, {
      admit: embeddedAdmission,
      trustDomain: 'prod.example',
      podCertificateMaxDurationMs: 2 * 3600_000,
    });
    const { store } = stack;
    const ca = await makeCA({ algorithm: 'RSA', size: 2048 });
    await store.create(SecretKind, caSecret('shop', 'shop-ca', ca));
    await store.create(
      IssuerKind,
      issuer('shop-ca', withNamespace('shop'), withSpec({ ca: { secretName: 'shop-ca' } })),
    );
    const pod = await createPod(store, podIdentity('shop', 'api-0'));
    const { request, key } = await kubeletRequest(
      pod,
      'issuers.cert-manager.io/shop.shop-ca',
      'ED25519',
      '1.35',
    );
    const created = await store.create(PodCertificateRequestKind, request);
    const bundle = await trustBundle(stack.store, 'issuers.cert-manager.io:shop.shop-ca:primary');
    const issued = await answered(store, 'shop', created.metadata.name);
    await checkIssued(t, issued, {
      publicKey: key,
      spiffeId: 'spiffe://prod.example/ns/shop/sa/default',
      trustBundlePem: bundle.spec.trustBundle,
    });
    t.equal(
      Date.parse(issued.status?.notAfter ?? '') - Date.parse(issued.status?.notBefore ?? ''),
      2 * 3600_000,
      '--pod-certificate-max-duration caps the request',
    );
  },
);

t.test('refusals: each ends with its terminal condition and reason', async (t) => {
  const { store, ask } = await podStack(t, { selector: 'env=prod' });
  // Requests the API server (and the embedded store) refuses at create, for the signer's own
  // checks: a store without admission.
  const unadmitted = await podStack(t, { selector: 'env=prod', admit: false });
  const unadmittedShop = await createPod(unadmitted.store, podIdentity('shop', 'api-0'));
  await store.create(NamespaceKind, namespaceObject('dev', { env: 'dev' }));
  await store.create(SecretKind, caSecret('shop', 'shop-ca', await makeCA()));
  await store.create(
    IssuerKind,
    issuer('shop-ca', withNamespace('shop'), withSpec({ ca: { secretName: 'shop-ca' } })),
  );
  await store.create(
    IssuerKind,
    issuer('self', withNamespace('shop'), withSpec({ selfSigned: {} })),
  );
  const shop = await createPod(store, podIdentity('shop', 'api-0'));
  const dev = await createPod(store, podIdentity('dev', 'api-0'));
  const rsa2048 = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });

  const cases: Array<{
    name: string;
    build: () => Promise<PodCertificateRequest>;
    type: string;
    reason: string;
    message: RegExp | string;
    /** What the store's admission says at create, for requests it refuses. */
    refusedAtCreate?: RegExp;
  }> = [
    {
      name: 'a namespace the selector does not select',
      build: async () => (await kubeletRequest(dev, CLUSTER_SIGNER, 'ECDSAP256', '1.36')).request,
      type: 'Denied',
      reason: 'PolicyDenied',
      message:
        'ClusterIssuer "pods" does not serve pods of namespace "dev": its cert-csi.io/pod-certificate-namespaces selector "env=prod" does not select it',
    },
    {
      name: 'an Issuer of another namespace',
      build: async () =>
        (await kubeletRequest(dev, 'issuers.cert-manager.io/shop.shop-ca', 'ECDSAP256', '1.36'))
          .request,
      type: 'Denied',
      reason: 'PolicyDenied',
      message: 'Issuer "shop/shop-ca" serves pods of namespace "shop" only, not of namespace "dev"',
    },
    {
      name: 'a SelfSigned issuer',
      build: async () =>
        (await kubeletRequest(shop, 'issuers.cert-manager.io/shop.self', 'ECDSAP256', '1.36'))
          .request,
      type: 'Denied',
      reason: 'UnsupportedIssuer',
      message: /^Issuer "shop\/self" cannot sign pod certificates/,
    },
    {
      name: 'user annotations the signer does not read',
      build: async () =>
        (
          await kubeletRequest(shop, CLUSTER_SIGNER, 'ECDSAP256', '1.36', {
            userAnnotations: { 'example.com/eku': 'server' },
          })
        ).request,
      type: 'Denied',
      reason: 'InvalidUnverifiedUserAnnotations',
      message: /remove example\.com\/eku from/,
    },
    {
      name: 'many user annotations: a few named, the rest counted',
      build: async () =>
        (
          await kubeletRequest(shop, CLUSTER_SIGNER, 'ECDSAP256', '1.36', {
            userAnnotations: Object.fromEntries(
              Array.from({ length: 40 }, (_, i) => [
                `k${String(i).padStart(2, '0')}.${'p'.repeat(60)}.${'q'.repeat(40)}.example.com/x`,
                'v',
              ]),
            ),
          })
        ).request,
      type: 'Denied',
      reason: 'InvalidUnverifiedUserAnnotations',
      // Three keys, each cut to 100 characters: the message stays short whatever the request.
      message:
        /^cert-csi reads no user annotations: remove k00\.p{60}\.q{35}…\(119 characters\), k01\.p{60}\.q{35}…\(119 characters\), k02\.p{60}\.q{35}…\(119 characters\) and 37 more from the podCertificate source's userAnnotations$/,
    },
    {
      // What a 1.35 kubelet's request (pkixPublicKey and proofOfPossession only) looks like
      // read through certificates.k8s.io/v1, which has neither field.
      name: 'a 1.35 request seen through v1: no key material at all',
      build: async () => {
        const { request } = await kubeletRequest(unadmittedShop, CLUSTER_SIGNER, 'ED25519', '1.35');
        delete request.spec.pkixPublicKey;
        delete request.spec.proofOfPossession;
        return request;
      },
      type: 'Denied',
      reason: 'UnsupportedKeyType',
      message:
        /^the request carries no key: .*a Kubernetes 1\.35 kubelet wrote has only pkixPublicKey, which certificates\.k8s\.io\/v1 does not show: upgrade the node to 1\.36 or later\)$/,
      refusedAtCreate: /spec\.stubPKCS10Request/,
    },
    {
      name: 'a key kubelet never makes',
      build: async () => {
        const { request } = await kubeletRequest(
          unadmittedShop,
          CLUSTER_SIGNER,
          'ECDSAP256',
          '1.36',
        );
        request.spec.stubPKCS10Request = (await createStubPkcs10Request(rsa2048)).toString(
          'base64',
        );
        return request;
      },
      type: 'Denied',
      reason: 'UnsupportedKeyType',
      message: /supported types are RSA3072/,
      refusedAtCreate: /spec\.stubPKCS10Request: Invalid value: .*RSA/,
    },
    {
      name: 'a bad proof of possession',
      build: async () => {
        const { request } = await kubeletRequest(
          unadmittedShop,
          CLUSTER_SIGNER,
          'ECDSAP384',
          '1.35',
        );
        // Signed for the pod's UID, presented with another one.
        const last = request.spec.podUID.endsWith('0') ? '1' : '0';
        request.spec.podUID = `${request.spec.podUID.slice(0, -1)}${last}`;
        return request;
      },
      type: 'Failed',
      reason: 'InvalidRequest',
      message: 'proofOfPossession is not a ECDSAP384 signature of the pod UID',
      refusedAtCreate:
        /spec\.proofOfPossession: Invalid value: could not verify proof-of-possession signature/,
    },
    {
      name: 'a pod UID that does not match',
      build: async () =>
        (await kubeletRequest({ ...shop, uid: 'f00' }, CLUSTER_SIGNER, 'ED25519', '1.35')).request,
      type: 'Failed',
      reason: 'InvalidRequest',
      message: /^pod "shop\/api-0" has UID "[^"]+", not the request's "f00"$/,
    },
    {
      name: 'a pod on another node',
      build: async () =>
        (await kubeletRequest({ ...shop, node: 'node-9' }, CLUSTER_SIGNER, 'ED25519', '1.36'))
          .request,
      type: 'Failed',
      reason: 'InvalidRequest',
      message: 'pod "shop/api-0" is on node "node-1", not the request\'s "node-9"',
    },
    {
      name: 'a pod that is gone',
      build: async () =>
        (await kubeletRequest({ ...shop, name: 'gone-0' }, CLUSTER_SIGNER, 'ED25519', '1.36'))
          .request,
      type: 'Failed',
      reason: 'InvalidRequest',
      message: 'pod "shop/gone-0" does not exist',
    },
  ];
  const created = await Promise.all(
    cases.map(async (c) => {
      const request = await c.build();
      if (!c.refusedAtCreate) return ask(request);
      const refused = await rejection(ask(request));
      t.ok(isStoreError(refused, 'Invalid'), `${c.name}: refused at create`);
      t.match(String(refused), c.refusedAtCreate, `${c.name}: refused at create`);
      return unadmitted.ask(request);
    }),
  );
  for (const [i, c] of cases.entries()) {
    const request = created[i] as PodCertificateRequest;
    const done = await answered(
      c.refusedAtCreate ? unadmitted.store : store,
      request.metadata.namespace ?? '',
      request.metadata.name,
    );
    t.equal(done.status?.conditions?.length, 1, `${c.name}: one condition`);
    t.match(
      done.status?.conditions?.[0],
      { type: c.type, status: 'True', reason: c.reason },
      c.name,
    );
    if (typeof c.message === 'string') {
      t.equal(done.status?.conditions?.[0]?.message, c.message, c.name);
    } else {
      t.match(done.status?.conditions?.[0]?.message, c.message, c.name);
    }
    t.equal(done.status?.certificateChain, undefined, `${c.name}: no chain`);
    t.equal(done.status?.notBefore, undefined, `${c.name}: no times`);
  }
});

t.test(
  'a ClusterIssuer without the annotation denies every request and publishes nothing',
  async (t) => {
    const { store, ask } = await podStack(t, { selector: undefined });
    const pod = await createPod(store, podIdentity('shop', 'api-0'));
    const created = await ask(
      (await kubeletRequest(pod, CLUSTER_SIGNER, 'ED25519', '1.36')).request,
    );
    const done = await answered(store, 'shop', created.metadata.name);
    t.match(done.status?.conditions?.[0], {
      type: 'Denied',
      reason: 'PolicyDenied',
      message:
        'ClusterIssuer "pods" does not serve pods of namespace "shop": it has no cert-csi.io/pod-certificate-namespaces annotation',
    });
    const bundles = await store.list(ClusterTrustBundleKind);
    t.same(bundles.items, [], 'no trust bundle for a signer that serves no pod');
  },
);

t.test('a missing CA Secret leaves the request pending until the Secret returns', async (t) => {
  const { store, ask, logger } = await podStack(t, { ca: null });
  const pod = await createPod(store, podIdentity('shop', 'api-0'));
  const { request, key } = await kubeletRequest(pod, CLUSTER_SIGNER, 'RSA3072', '1.36');
  const created = await ask(request);
  // The issuer is not Ready without its Secret: the signer says so and waits.
  await until(
    () => logger.records.some(([, obj, msg]) => msg === 'issuer not ready' && 'request' in obj),
    { what: 'the signer to look at the request' },
  );
  const pending = await store.get<PodCertificateRequest>(
    PodCertificateRequestKind,
    created.metadata.name,
    'shop',
  );
  t.same(pending.status ?? {}, {}, 'no condition while the CA is missing');
  const ca = await makeCA();
  await store.create(SecretKind, caSecret('kube-system', 'pods-ca', ca));
  const issued = await answered(store, 'shop', created.metadata.name);
  await checkIssued(t, issued, {
    publicKey: key,
    spiffeId: 'spiffe://cluster.local/ns/shop/sa/default',
    trustBundlePem: ca.certificatePem,
  });
});

t.test(
  'rotating the CA updates the bundle (old root kept while valid); new requests chain to the new CA',
  async (t) => {
    const { store, ask, ca } = await podStack(t);
    const oldRoot = new X509Certificate(ca?.certificatePem ?? '').toString();
    await trustBundle(store, CLUSTER_BUNDLE, (b) => b.spec.trustBundle === oldRoot);
    const next = await makeCA();
    const secret = await store.get<ReturnType<typeof caSecret>>(
      SecretKind,
      'pods-ca',
      'kube-system',
    );
    await store.update(SecretKind, {
      ...secret,
      data: caSecret('kube-system', 'pods-ca', next).data,
    });
    const newRoot = new X509Certificate(next.certificatePem).toString();
    const bundle = await trustBundle(store, CLUSTER_BUNDLE, (b) =>
      b.spec.trustBundle.startsWith(newRoot),
    );
    t.equal(bundle.spec.trustBundle, newRoot + oldRoot, 'new root first, then the old one');
    const pod = await createPod(store, podIdentity('shop', 'api-0'));
    const { request, key } = await kubeletRequest(pod, CLUSTER_SIGNER, 'ECDSAP521', '1.35');
    const issued = await answered(store, 'shop', (await ask(request)).metadata.name);
    const leaf = await checkIssued(t, issued, {
      publicKey: key,
      spiffeId: 'spiffe://cluster.local/ns/shop/sa/default',
      trustBundlePem: newRoot,
    });
    t.ok(leaf.checkIssued(new X509Certificate(next.certificatePem)), 'signed by the new CA');

    // Removing the opt-in withdraws the bundle; it is published again when the opt-in returns.
    const ci = await store.get<Issuer>(ClusterIssuerKind, 'pods');
    await store.update(ClusterIssuerKind, { ...ci, metadata: { ...ci.metadata, annotations: {} } });
    await waitForNoObjects(store, ClusterTrustBundleKind, {});
    const again = await store.get<Issuer>(ClusterIssuerKind, 'pods');
    await store.update(ClusterIssuerKind, {
      ...again,
      metadata: { ...again.metadata, annotations: { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' } },
    });
    const republished = await trustBundle(store, CLUSTER_BUNDLE);
    t.equal(republished.spec.trustBundle, newRoot, 'republished with the current root only');
    // Deleted by someone: published again.
    await store.delete(ClusterTrustBundleKind, CLUSTER_BUNDLE);
    await trustBundle(store, CLUSTER_BUNDLE);
  },
);

t.test('no certificate outlives its CA; a CA too close to its end fails the request', async (t) => {
  const makeShortCA = async (durationMs: number): Promise<TestCA> => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const certificatePem = await createSelfSignedCa({ key, commonName: 'short CA', durationMs });
    return { certificatePem, keyPem: encodePrivateKey(key, 'PKCS8') };
  };
  const ca = await makeShortCA(3 * 3600_000);
  const { store, ask } = await podStack(t, { ca });
  const pod = await createPod(store, podIdentity('shop', 'api-0'));
  const { request } = await kubeletRequest(pod, CLUSTER_SIGNER, 'ED25519', '1.36');
  const issued = await answered(store, 'shop', (await ask(request)).metadata.name);
  const caEnd = new Date(new X509Certificate(ca.certificatePem).validTo);
  t.equal(Date.parse(issued.status?.notAfter ?? ''), caEnd.getTime(), 'clamped to the CA notAfter');
  t.ok(
    Date.parse(issued.status?.notAfter ?? '') - Date.parse(issued.status?.notBefore ?? '') <
      86_400_000,
  );

  const dying = await makeShortCA(40 * 60_000);
  const secret = await store.get<ReturnType<typeof caSecret>>(SecretKind, 'pods-ca', 'kube-system');
  await store.update(SecretKind, {
    ...secret,
    data: caSecret('kube-system', 'pods-ca', dying).data,
  });
  await trustBundle(store, CLUSTER_BUNDLE, (b) =>
    b.spec.trustBundle.startsWith(new X509Certificate(dying.certificatePem).toString()),
  );
  const second = await kubeletRequest(pod, CLUSTER_SIGNER, 'ECDSAP256', '1.36');
  const failed = await answered(store, 'shop', (await ask(second.request)).metadata.name);
  t.match(failed.status?.conditions?.[0], {
    type: 'Failed',
    reason: 'CAExpiresTooSoon',
    message:
      /^the CA of signer "clusterissuers\.cert-manager\.io\/pods" expires at .*: a certificate would last less than the 1h minimum$/,
  });
});

t.test(
  'a pod in a namespace not cached yet waits for it, then is judged by its labels',
  async (t) => {
    const { store, ask, logger } = await podStack(t, { selector: 'team=payments' });
    const pod = await createPod(store, podIdentity('payments', 'api-0'));
    const created = await ask(
      (await kubeletRequest(pod, CLUSTER_SIGNER, 'ED25519', '1.36')).request,
    );
    await until(
      () =>
        logger.records.some(([, , msg]) => msg === 'namespace "payments" is not in the cache yet'),
      { what: 'the signer to wait for the namespace' },
    );
    const pending = await store.get<PodCertificateRequest>(
      PodCertificateRequestKind,
      created.metadata.name,
      'payments',
    );
    t.same(pending.status ?? {}, {}, 'pending, not denied, while the namespace is unknown');
    await store.create(NamespaceKind, namespaceObject('payments', { team: 'payments' }));
    const issued = await answered(store, 'payments', created.metadata.name);
    t.equal(issued.status?.conditions?.[0]?.type, 'Issued', 'issued once the namespace is seen');
  },
);

t.test(
  'the API server refusing the issued status: clock skew retries, anything else fails',
  async (t) => {
    let faulty: FaultyStore | undefined;
    const stack = await startHarness(t, {
      admit: embeddedAdmission,
      wrap: (store) => {
        faulty = new FaultyStore(store);
        return faulty;
      },
    });
    const { store } = stack;
    if (!faulty) throw new Error('no faulty store');
    await store.create(NamespaceKind, namespaceObject('shop'));
    await store.create(SecretKind, caSecret('kube-system', 'pods-ca', await makeCA()));
    await store.create(ClusterIssuerKind, podsClusterIssuer(''));
    await stack.issuerReason(undefined, 'pods', 'KeyPairVerified');
    const pod = await createPod(store, podIdentity('shop', 'api-0'));

    faulty.statusErrors.push(
      new StoreError(
        'Invalid',
        'PodCertificateRequest.certificates.k8s.io "req-1" is invalid: status.notBefore: Invalid value: "2026-01-01T00:00:00Z": must be set to within 5 minutes of kube-apiserver\'s current time',
      ),
    );
    const skewed = await store.create(
      PodCertificateRequestKind,
      (await kubeletRequest(pod, CLUSTER_SIGNER, 'ED25519', '1.36')).request,
    );
    const issued = await answered(store, 'shop', skewed.metadata.name);
    t.equal(issued.status?.conditions?.[0]?.type, 'Issued', 'signed again with fresh times');
    t.equal(faulty.statusErrors.length, 0, 'the refusal was met');

    faulty.statusErrors.push(
      new StoreError(
        'Invalid',
        'PodCertificateRequest.certificates.k8s.io "req-2" is invalid: status.certificateChain: Invalid value: "...": leaf certificate has an invalid DNS SAN',
      ),
    );
    const refused = await store.create(
      PodCertificateRequestKind,
      (await kubeletRequest(pod, CLUSTER_SIGNER, 'ECDSAP256', '1.36')).request,
    );
    const failed = await answered(store, 'shop', refused.metadata.name);
    t.match(failed.status?.conditions?.[0], {
      type: 'Failed',
      reason: 'CertificateRejected',
      message: /^the API server refused the issued certificate: .*status\.certificateChain/,
    });
    t.equal(failed.status?.certificateChain, undefined, 'no chain with Failed');
  },
);

t.test(
  "other signers' requests are never written; an issuer that becomes ours answers its waiting ones",
  async (t) => {
    const { store, ask } = await podStack(t);
    const shopCa = await makeCA();
    await store.create(SecretKind, caSecret('shop', 'shop-ca', shopCa));
    // Another issuer controller's Issuer: a signer name of cert-manager's, not ours to answer.
    await store.create(
      IssuerKind,
      issuer(
        'vault',
        withNamespace('shop'),
        withSpec({ vault: { server: 'https://vault.example', path: 'pki/sign/x' } }),
      ),
    );
    const pod = await createPod(store, podIdentity('shop', 'api-0'));
    const foreign = new Map<string, PodCertificateRequest>();
    for (const signerName of [
      'example.com/spiffe',
      'issuers.cert-manager.io/shop.vault',
      'issuers.cert-manager.io/shop.later',
      'clusterissuers.cert-manager.io/missing',
    ]) {
      const { request } = await kubeletRequest(pod, signerName, 'ED25519', '1.36');
      foreign.set(signerName, await ask(request));
    }
    const ours = await ask((await kubeletRequest(pod, CLUSTER_SIGNER, 'ED25519', '1.36')).request);
    t.equal(
      (await answered(store, 'shop', ours.metadata.name)).status?.conditions?.[0]?.type,
      'Issued',
      'the request of our ClusterIssuer, created last, is answered',
    );

    // The Vault Issuer turns into a CA Issuer, and the missing one is created: each issuer's
    // change brings back its own waiting request.
    const vault = await store.get<Issuer>(IssuerKind, 'vault', 'shop');
    await store.update(IssuerKind, { ...vault, spec: { ca: { secretName: 'shop-ca' } } });
    await store.create(
      IssuerKind,
      issuer('later', withNamespace('shop'), withSpec({ ca: { secretName: 'shop-ca' } })),
    );
    for (const signerName of [
      'issuers.cert-manager.io/shop.vault',
      'issuers.cert-manager.io/shop.later',
    ]) {
      const done = await answered(store, 'shop', foreign.get(signerName)?.metadata.name ?? '');
      t.equal(done.status?.conditions?.length, 1, `${signerName}: one condition`);
      t.equal(done.status?.conditions?.[0]?.type, 'Issued', `${signerName}: issued once ours`);
      const leaf = new X509Certificate(done.status?.certificateChain ?? '');
      t.ok(leaf.checkIssued(new X509Certificate(shopCa.certificatePem)), 'by the Issuer CA');
    }
    for (const signerName of ['example.com/spiffe', 'clusterissuers.cert-manager.io/missing']) {
      const created = foreign.get(signerName);
      const now = await store.get<PodCertificateRequest>(
        PodCertificateRequestKind,
        created?.metadata.name ?? '',
        'shop',
      );
      t.equal(
        now.metadata.resourceVersion,
        created?.metadata.resourceVersion,
        `${signerName}: never written`,
      );
    }
  },
);
