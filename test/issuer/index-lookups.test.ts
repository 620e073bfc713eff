import t from 'tap';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../../src/api/labels.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import { SecretKind } from '../../src/api/secret.js';
import type { SharedInformers } from '../../src/controller/shared-informers.js';
import {
  certificateRequest,
  issuer,
  keyAndCsr,
  makeCA,
  tlsSecret,
} from '../support/issuer-fixtures.js';
import { startHarness } from '../support/issuer-stack-harness.js';

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
        certificateRequest('noise', `r-${i}`, csrPem, { issuerRef: { name: `missing-${i}` } }),
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
      issuer('ca', undefined, { ca: { secretName: 'ca-key' } }),
    );
    await h.issuerReason(undefined, 'ca', 'ErrGetKeyPair');
    for (const name of ['a', 'b', 'c']) {
      await h.store.create(
        CertificateRequestKind,
        certificateRequest('app', name, csrPem, {
          issuerRef: { name: 'ca', kind: 'ClusterIssuer' },
        }),
      );
      await h.readyReason('app', name, 'Pending');
    }
    // A SelfSigned request whose key Secret does not exist yet.
    await h.store.create(IssuerKind, issuer('self', 'app', { selfSigned: {} }));
    const key = await keyAndCsr(ecdsa, { dnsNames: ['self.example.com'] });
    await h.store.create(
      CertificateRequestKind,
      certificateRequest(
        'app',
        'self',
        key.csrPem,
        { issuerRef: { name: 'self' } },
        { [PRIVATE_KEY_SECRET_NAME_ANNOTATION]: 'self-key' },
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
