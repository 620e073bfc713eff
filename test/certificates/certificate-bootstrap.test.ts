import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { ClusterIssuerKind, type Issuer } from '../../src/api/issuer.js';
import {
  certificateObject,
  secretText,
  startCertificateStack,
} from '../support/certificate-stack.js';
import { opensslVerify } from '../support/issuer-fixtures.js';
import { projectPath } from '../support/project-files.js';

t.test(
  'deploy/manifests/bootstrap-ca.yaml: SelfSigned -> CA Certificate -> CA ClusterIssuer -> a leaf',
  async (t) => {
    const stack = await startCertificateStack(t, {
      config: { clusterResourceNamespace: 'cert-csi' },
    });
    const documents = parseAllDocuments(
      await readFile(projectPath('deploy', 'manifests', 'bootstrap-ca.yaml'), 'utf8'),
    );
    for (const document of [documents].flat()) {
      const object = document.toJS() as Issuer | Certificate;
      if (object.kind === 'Certificate') await stack.store.create(CertificateKind, object);
      else await stack.store.create(ClusterIssuerKind, object);
    }
    const ca = await stack.ready('cert-csi', 'cert-csi-ca', 1);
    t.ok(ca.status?.notAfter);
    const caSecret = await stack.secret('cert-csi', 'cert-csi-ca');
    const caPem = secretText(caSecret, 'tls.crt');
    const caCertificate = new X509Certificate(caPem);
    t.ok(caCertificate.ca, 'the CA Certificate is a CA');
    t.equal(caCertificate.subject, 'CN=cert-csi CA');
    t.equal(caCertificate.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    t.equal(secretText(caSecret, 'ca.crt'), caPem, 'self-signed: its own CA');

    await stack.store.create(
      CertificateKind,
      certificateObject('apps', 'leaf', {
        dnsNames: ['leaf.apps.svc'],
        issuerRef: { name: 'cert-csi-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
        privateKey: { algorithm: 'ECDSA' },
      }),
    );
    await stack.ready('apps', 'leaf', 1);
    const leafSecret = await stack.secret('apps', 'leaf-tls');
    t.equal(secretText(leafSecret, 'ca.crt'), caPem);
    t.match(await opensslVerify(caPem, secretText(leafSecret, 'tls.crt')), /OK/);
  },
);

t.test(
  'a Certificate whose issuer does not exist yet waits, and completes once it exists',
  async (t) => {
    const stack = await startCertificateStack(t);
    await stack.store.create(
      CertificateKind,
      certificateObject('apps', 'early', {
        dnsNames: ['early.example'],
        issuerRef: { name: 'later', kind: 'ClusterIssuer' },
        privateKey: { algorithm: 'ECDSA' },
      }),
    );
    await stack.certificate(
      'apps',
      'early',
      (c) => c.status?.nextPrivateKeySecretName !== undefined,
    );
    await stack.store.create(ClusterIssuerKind, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'later' },
      spec: { selfSigned: {} },
    } as Issuer);
    const ready = await stack.ready('apps', 'early', 1);
    t.equal(ready.status?.revision, 1);
  },
);
