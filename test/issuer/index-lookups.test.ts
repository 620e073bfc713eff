import t from 'tap';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../../src/api/labels.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { embeddedAdmission } from '../../src/cli/node/embedded-admission.js';
import type { SharedInformers } from '../../src/controller/shared-informers.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import {
  certificateRequest,
  clusterIssuer,
  issuer,
  tlsSecret,
  withAnnotations,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { until } from '../support/eventually.js';
import { keyAndCsr, makeCA } from '../support/issuer-fixtures.js';
import { startHarness } from '../support/issuer-stack-harness.js';
import { answered } from '../support/pod-certificate-checks.js';
import {
  createPod,
  kubeletRequest,
  namespaceObject,
  podIdentity,
} from '../support/pod-certificates.js';
import { recordingLogger } from '../support/recording-logger.js';

/**
 * Records, from now on, every whole-cache read (list) of the given informers and every index
 * look-up with its value: what a change costs, as calls.
 */
function spyOnCaches(informers: SharedInformers, kinds: ResourceKind[]) {
  const scans: string[] = [];
  const lookups: string[] = [];
  for (const kind of kinds) {
    const informer = informers.informer<KubeObject>(kind);
    const list = informer.list.bind(informer);
    const byIndex = informer.byIndex.bind(informer);
    informer.list = (namespace?: string) => {
      scans.push(kind.kind);
      return list(namespace);
    };
    informer.byIndex = (definition, value) => {
      lookups.push(`${kind.kind} ${definition.name}=${value}`);
      return byIndex(definition, value);
    };
  }
  return { scans, lookups };
}

t.test(
  'an Issuer or Secret change reaches its requests through indexes, never a scan',
  async (t) => {
    const h = await startHarness(t, { clusterResourceNamespace: 'kube-system' });
    const ecdsa = { algorithm: 'ECDSA', size: 256 } as const;
    const { csrPem } = await keyAndCsr(ecdsa);
    // Noise: requests of other issuers that no change below concerns.
    for (let i = 0; i < 50; i++) {
      await h.store.create(
        CertificateRequestKind,
        certificateRequest(
          `r-${i}`,
          withNamespace('noise'),
          withIssuerRef({ name: `missing-${i}` }),
          withCsr(csrPem),
        ),
      );
    }
    for (let i = 0; i < 50; i++) await h.readyReason('noise', `r-${i}`, 'Pending');
    const noiseVersions = async () =>
      (await h.store.list(CertificateRequestKind, { namespace: 'noise' })).items.map(
        (r) => r.metadata.resourceVersion,
      );
    const before = await noiseVersions();
    // A CA ClusterIssuer whose Secret does not exist yet, and three requests waiting for it.
    await h.store.create(
      ClusterIssuerKind,
      clusterIssuer('ca', withSpec({ ca: { secretName: 'ca-key' } })),
    );
    await h.issuerReason(undefined, 'ca', 'ErrGetKeyPair');
    for (const name of ['a', 'b', 'c']) {
      await h.store.create(
        CertificateRequestKind,
        certificateRequest(
          name,
          withNamespace('app'),
          withIssuerRef({ name: 'ca', kind: 'ClusterIssuer' }),
          withCsr(csrPem),
        ),
      );
      await h.readyReason('app', name, 'Pending');
    }
    // A SelfSigned request whose key Secret does not exist yet.
    await h.store.create(
      IssuerKind,
      issuer('self', withNamespace('app'), withSpec({ selfSigned: {} })),
    );
    const key = await keyAndCsr(ecdsa, { dnsNames: ['self.example.com'] });
    await h.store.create(
      CertificateRequestKind,
      certificateRequest(
        'self',
        withNamespace('app'),
        withIssuerRef({ name: 'self' }),
        withCsr(key.csrPem),
        withAnnotations({ [PRIVATE_KEY_SECRET_NAME_ANNOTATION]: 'self-key' }),
      ),
    );
    await h.readyReason('app', 'self', 'Pending');

    const spy = spyOnCaches(h.controllers.informers, [
      CertificateRequestKind,
      IssuerKind,
      ClusterIssuerKind,
      SecretKind,
    ]);
    const ca = await makeCA();
    await h.store.create(
      SecretKind,
      tlsSecret('kube-system', 'ca-key', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
    );
    await h.store.create(SecretKind, tlsSecret('app', 'self-key', { 'tls.key': key.keyPem }));
    for (const name of ['a', 'b', 'c', 'self']) await h.readyReason('app', name, 'Issued');

    t.same(spy.scans, [], 'no informer cache was scanned');
    // The Secret found its ClusterIssuer, the issuer's update found its requests, and the key
    // Secret found the SelfSigned request: each by one look-up.
    t.ok(spy.lookups.includes('ClusterIssuer ca-secret=ca-key'), 'Secret → ClusterIssuer');
    t.ok(
      spy.lookups.includes('CertificateRequest issuer-ref=ClusterIssuer/ca'),
      'issuer → requests',
    );
    t.ok(
      spy.lookups.includes('CertificateRequest private-key-secret=app/self-key'),
      'key Secret → SelfSigned request',
    );
    t.ok(
      spy.lookups.includes('Issuer ca-secret=app/self-key'),
      'an Issuer in that namespace checked',
    );
    t.same(await noiseVersions(), before, 'the other requests were not touched');
  },
);

t.test(
  'a Namespace, Secret or issuer change reaches its pod certificate requests through indexes, never a scan',
  async (t) => {
    const logger = recordingLogger();
    const h = await startHarness(t, { admit: embeddedAdmission, logger });
    const signer = 'clusterissuers.cert-manager.io/pods';
    const ci = clusterIssuer('pods', withSpec({ ca: { secretName: 'pods-ca' } }));
    ci.metadata.annotations = { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: 'team=payments' };
    await h.store.create(ClusterIssuerKind, ci);
    await h.issuerReason(undefined, 'pods', 'ErrGetKeyPair');
    // Noise: other signers' requests in the same namespace and in another one.
    const noise: PodCertificateRequest[] = [];
    for (const namespace of ['payments', 'noise']) {
      const pod = await createPod(h.store, podIdentity(namespace, 'other-0'));
      for (const other of ['example.com/spiffe', 'issuers.cert-manager.io/payments.missing']) {
        const { request } = await kubeletRequest(pod, other, 'ED25519', '1.36');
        noise.push(await h.store.create(PodCertificateRequestKind, request));
      }
    }
    // Three requests of the ClusterIssuer in a namespace not created yet: they wait for it.
    const pod = await createPod(h.store, podIdentity('payments', 'api-0'));
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { request } = await kubeletRequest(pod, signer, 'ED25519', '1.36');
      names.push((await h.store.create(PodCertificateRequestKind, request)).metadata.name);
    }
    await until(
      () =>
        logger.records.filter(([, , msg]) => msg === 'namespace "payments" is not in the cache yet')
          .length >= 3,
      { what: 'the signer to look at each request' },
    );

    const spy = spyOnCaches(h.controllers.informers, [
      PodCertificateRequestKind,
      NamespaceKind,
      IssuerKind,
      ClusterIssuerKind,
      SecretKind,
    ]);
    await h.store.create(NamespaceKind, namespaceObject('payments', { team: 'payments' }));
    await until(() => spy.lookups.includes('PodCertificateRequest namespace=payments'), {
      what: 'the Namespace to find its requests',
    });
    const ca = await makeCA();
    await h.store.create(
      SecretKind,
      tlsSecret('kube-system', 'pods-ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
    );
    for (const name of names) {
      t.equal(
        (await answered(h.store, 'payments', name)).status?.conditions?.[0]?.type,
        'Issued',
        `${name} issued`,
      );
    }

    t.same(spy.scans, [], 'no informer cache was scanned');
    t.ok(spy.lookups.includes('ClusterIssuer ca-secret=pods-ca'), 'Secret → ClusterIssuer');
    t.ok(
      spy.lookups.includes(`PodCertificateRequest pod-signer-name=${signer}`),
      'issuer → its requests',
    );
    t.notOk(
      spy.lookups.some((lookup) => lookup.includes('example.com')),
      "no look-up for another signer's requests",
    );
    for (const request of noise) {
      const now = await h.store.get<PodCertificateRequest>(
        PodCertificateRequestKind,
        request.metadata.name,
        request.metadata.namespace,
      );
      t.equal(
        now.metadata.resourceVersion,
        request.metadata.resourceVersion,
        `${request.spec.signerName} in ${request.metadata.namespace}: never written`,
      );
    }
  },
);
