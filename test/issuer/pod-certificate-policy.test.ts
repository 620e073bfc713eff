import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { issuerOfSignerName, signerNameOfIssuer } from '../../src/api/issuer-signer-name.js';
import type { PodCertificateRequest } from '../../src/api/pod-certificate-request.js';
import {
  issuerVerdict,
  POD_CERTIFICATE_NAMESPACES_ANNOTATION,
  podMismatch,
} from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import { trustDomainProblem } from '../../src/issuer/podcertificaterequests/pod-certificate-profile.js';
import {
  beginRefreshAt,
  podCertificateWindow,
} from '../../src/issuer/podcertificaterequests/pod-certificate-times.js';
import {
  MAX_PREVIOUS_ROOTS,
  trustAnchorOf,
  trustBundleContent,
} from '../../src/issuer/podcertificaterequests/trust-bundle-content.js';
import {
  clusterIssuer,
  issuer,
  issuerFrom,
  withAnnotations,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { makeCA } from '../support/issuer-fixtures.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

t.test('signer names designate Issuers and ClusterIssuers, and nothing else', async (t) => {
  t.same(issuerOfSignerName('clusterissuers.cert-manager.io/ca'), {
    kind: 'ClusterIssuer',
    name: 'ca',
  });
  t.same(issuerOfSignerName('issuers.cert-manager.io/shop.my.ca'), {
    kind: 'Issuer',
    namespace: 'shop',
    name: 'my.ca',
  });
  t.same(issuerOfSignerName('clusterissuers.cert-manager.io/my.ca'), {
    kind: 'ClusterIssuer',
    name: 'my.ca',
  });
  // cert-manager's parser: a path without a dot is a name in namespace '', an empty name stays.
  t.same(issuerOfSignerName('issuers.cert-manager.io/no-dot'), {
    kind: 'Issuer',
    namespace: '',
    name: 'no-dot',
  });
  t.same(issuerOfSignerName('issuers.cert-manager.io/ns.'), {
    kind: 'Issuer',
    namespace: 'ns',
    name: '',
  });
  for (const other of [
    'example.com/spiffe',
    'issuers.cert-manager.io/.x',
    'clusterissuers.cert-manager.io/',
    'clusterissuers.cert-manager.io/.x',
    'clusterissuers.cert-manager.io/a/b',
    'signers.cert-manager.io/ca',
    'issuers.example.com/ns.ca',
    'issuers/ns.ca',
    'kubernetes.io',
  ]) {
    t.equal(issuerOfSignerName(other), undefined, other);
  }
  t.equal(
    signerNameOfIssuer(issuer('ca', withNamespace('shop'), withSpec({ ca: { secretName: 's' } }))),
    'issuers.cert-manager.io/shop.ca',
  );
  t.equal(
    signerNameOfIssuer(clusterIssuer('ca', withSpec({ ca: { secretName: 's' } }))),
    'clusterissuers.cert-manager.io/ca',
  );
});

function request(namespace: string): PodCertificateRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'PodCertificateRequest',
    metadata: { name: 'req-1', namespace },
    spec: {
      signerName: 'x/y',
      podName: 'api-0',
      podUID: 'uid-1',
      serviceAccountName: 'api',
      serviceAccountUID: 'sa-uid',
      nodeName: 'node-1',
      nodeUID: 'node-uid',
    },
  };
}

/** A ClusterIssuer for pod certificates, as a base for the cases. */
const podCa = clusterIssuer('ca', withSpec({ ca: { secretName: 's' } }));

/** Sets the annotation that selects the namespaces a ClusterIssuer serves pods of. */
const selecting = (selector: string) =>
  withAnnotations({ [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: selector });

t.test('an Issuer serves the pods of its own namespace only', async (t) => {
  const own = issuer('ca', withNamespace('shop'), withSpec({ ca: { secretName: 's' } }));
  t.same(issuerVerdict(request('shop'), own, undefined), { step: 'sign' });
  t.same(issuerVerdict(request('bank'), own, {}), {
    step: 'deny',
    reason: 'PolicyDenied',
    message: 'Issuer "shop/ca" serves pods of namespace "shop" only, not of namespace "bank"',
  });
});

t.test('a ClusterIssuer serves the namespaces its annotation selects', async (t) => {
  t.same(issuerVerdict(request('shop'), issuerFrom(podCa), {}), {
    step: 'deny',
    reason: 'PolicyDenied',
    message:
      'ClusterIssuer "ca" does not serve pods of namespace "shop": it has no cert-csi.io/pod-certificate-namespaces annotation',
  });
  t.same(
    issuerVerdict(request('shop'), issuerFrom(podCa, selecting('')), {}),
    { step: 'sign' },
    '"" selects all',
  );
  t.same(
    issuerVerdict(request('shop'), issuerFrom(podCa, selecting('env=prod')), { env: 'prod' }),
    {
      step: 'sign',
    },
  );
  t.same(
    issuerVerdict(
      request('shop'),
      issuerFrom(podCa, selecting('kubernetes.io/metadata.name in (shop,bank)')),
      {},
    ),
    { step: 'sign' },
    'the name label the API server sets counts even when the cached labels lack it',
  );
  t.same(issuerVerdict(request('shop'), issuerFrom(podCa, selecting('env=prod')), { env: 'dev' }), {
    step: 'deny',
    reason: 'PolicyDenied',
    message:
      'ClusterIssuer "ca" does not serve pods of namespace "shop": its cert-csi.io/pod-certificate-namespaces selector "env=prod" does not select it',
  });
  t.same(issuerVerdict(request('shop'), issuerFrom(podCa, selecting('env=prod')), undefined), {
    step: 'wait',
    message: 'namespace "shop" is not in the cache yet',
  });
  const bad = issuerVerdict(request('shop'), issuerFrom(podCa, selecting('env in (')), {});
  t.equal(bad.step, 'deny');
  t.match(bad, {
    reason: 'PolicyDenied',
    message: /annotation "env in \(" is not a label selector: /,
  });
});

t.test('a SelfSigned issuer cannot sign pod certificates', async (t) => {
  const verdict = issuerVerdict(
    request('shop'),
    issuer('self', withNamespace('shop'), withSpec({ selfSigned: {} })),
    {},
  );
  t.same(verdict, {
    step: 'deny',
    reason: 'UnsupportedIssuer',
    message:
      'Issuer "shop/self" cannot sign pod certificates: only CA issuers can (a self-signed certificate would need the pod\'s private key)',
  });
});

t.test('the pod must still be the one that asked', async (t) => {
  const { spec } = request('shop');
  const pod = (uid: string, node: string, serviceAccountName?: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'api-0', namespace: 'shop', uid },
    spec: { nodeName: node, ...(serviceAccountName ? { serviceAccountName } : {}) },
  });
  t.equal(podMismatch(spec, 'shop', pod('uid-1', 'node-1', 'api')), undefined);
  t.equal(podMismatch(spec, 'shop', undefined), 'pod "shop/api-0" does not exist');
  t.equal(
    podMismatch(spec, 'shop', pod('uid-2', 'node-1', 'api')),
    'pod "shop/api-0" has UID "uid-2", not the request\'s "uid-1"',
  );
  t.equal(
    podMismatch(spec, 'shop', pod('uid-1', 'node-2', 'api')),
    'pod "shop/api-0" is on node "node-2", not the request\'s "node-1"',
  );
  t.equal(
    podMismatch(spec, 'shop', pod('uid-1', 'node-1')),
    'pod "shop/api-0" runs as service account "default", not the request\'s "api"',
  );
});

t.test(
  'times: backdated to a whole second, lifetime bounded by the request and the signer',
  async (t) => {
    const now = new Date('2026-03-02T10:00:03.750Z');
    t.same(podCertificateWindow(now, 86_400, 720 * HOUR), {
      notBefore: new Date('2026-03-02T09:58:03Z'),
      durationMs: 24 * HOUR,
    });
    t.equal(podCertificateWindow(now, undefined, 720 * HOUR).durationMs, 24 * HOUR, 'API default');
    t.equal(podCertificateWindow(now, 7_862_400, 720 * HOUR).durationMs, 720 * HOUR);
    const nb = new Date('2026-03-02T09:58:03Z');
    t.same(
      beginRefreshAt(nb, new Date('2026-03-03T09:58:03Z')),
      new Date('2026-03-02T21:58:03Z'),
      'half-way',
    );
    t.same(
      beginRefreshAt(nb, new Date(nb.getTime() + HOUR + 1_000)),
      new Date(nb.getTime() + 30 * MINUTE),
      'a 1 h certificate refreshes at its middle, inside the 10 min margins',
    );
    t.equal(beginRefreshAt(nb, new Date(nb.getTime() + HOUR - 1_000)), undefined, '< 1 h');
    const odd = beginRefreshAt(nb, new Date(nb.getTime() + HOUR + 1_000));
    t.equal((odd?.getTime() ?? 1) % 1000, 0, 'whole seconds');
  },
);

t.test(
  'trust bundles: current anchors first, valid previous ones kept, no duplicates',
  async (t) => {
    const [a, b, c] = await Promise.all([makeCA(), makeCA(), makeCA()]);
    const cert = (pem: string) => new X509Certificate(pem);
    const now = new Date();
    t.equal(
      trustBundleContent([cert(a.certificatePem)], undefined, now),
      cert(a.certificatePem).toString(),
    );
    const rotated = trustBundleContent(
      [cert(b.certificatePem)],
      a.certificatePem + b.certificatePem,
      now,
    );
    t.equal(rotated, [b, a].map((ca) => cert(ca.certificatePem).toString()).join(''));
    const later = new Date(Date.now() + 400 * 24 * HOUR);
    t.equal(
      trustBundleContent([cert(c.certificatePem)], rotated, later),
      cert(c.certificatePem).toString(),
      'expired previous anchors are dropped',
    );
    t.equal(
      trustBundleContent(
        [cert(c.certificatePem)],
        '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
        now,
      ),
      cert(c.certificatePem).toString(),
      'a bundle someone garbled is replaced by the current anchor',
    );
    const many = await Promise.all(Array.from({ length: MAX_PREVIOUS_ROOTS + 2 }, () => makeCA()));
    const bundle = trustBundleContent(
      [cert(a.certificatePem)],
      many.map((ca) => ca.certificatePem).join(''),
      now,
    );
    t.equal(bundle.split('BEGIN CERTIFICATE').length - 1, MAX_PREVIOUS_ROOTS + 1, 'bounded');
    t.equal(
      trustAnchorOf([cert(a.certificatePem), cert(b.certificatePem)])?.toString(),
      cert(b.certificatePem).toString(),
    );
    t.equal(trustAnchorOf([]), undefined);
  },
);

t.test('trust domains are SPIFFE trust domain names', async (t) => {
  t.equal(trustDomainProblem('cluster.local'), undefined);
  t.equal(trustDomainProblem('prod_1-eu.example'), undefined);
  t.equal(trustDomainProblem(''), 'must not be empty');
  t.equal(
    trustDomainProblem('Cluster.local'),
    "may contain only lowercase letters, digits, '.', '-' and '_'",
  );
  t.equal(
    trustDomainProblem('a/b'),
    "may contain only lowercase letters, digits, '.', '-' and '_'",
  );
  t.equal(trustDomainProblem('a'.repeat(256)), 'must be at most 255 characters');
});
