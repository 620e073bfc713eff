import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { isConditionTrue } from '../../src/api/conditions.js';
import { ClusterIssuerKind, type Issuer } from '../../src/api/issuer.js';
import { type KubeEvent, KubeEventKind } from '../../src/api/kube-event.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { decodePrivateKey } from '../../src/pki/keys.js';
import { opensslPkcs12 } from '../pki/fixtures/keystore-tools.js';
import {
  CERTIFICATE_WAIT_MS,
  certificateObject,
  secretText,
} from '../support/certificate-stack.js';
import { startCommand } from '../support/cli-process.js';
import { CONTROLLER_TOKEN, DEPLOY_DIR, startCluster } from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { opensslVerify, tlsSecret } from '../support/issuer-fixtures.js';
import { waitForObject } from '../support/wait-for-object.js';

const run = promisify(execFile);
const NS = 'sandbox';

function readyAt(revision: number) {
  return (c: Certificate) =>
    isConditionTrue(c.status?.conditions, 'Ready') &&
    !isConditionTrue(c.status?.conditions, 'Issuing') &&
    c.status?.revision === revision;
}

t.test(
  'cert-csi controller (a real process) bootstraps its CA through Certificates and issues a leaf with every output',
  async (t) => {
    const cluster = await startCluster(t);
    const { server } = cluster;
    const documents = parseAllDocuments(
      await readFile(join(DEPLOY_DIR, 'bootstrap-ca.yaml'), 'utf8'),
    );
    for (const document of [documents].flat()) {
      const object = document.toJS() as Issuer | Certificate;
      await server.store.create(
        object.kind === 'Certificate' ? CertificateKind : ClusterIssuerKind,
        object,
      );
    }
    const controller = await startCommand(
      [
        'controller',
        '--kubeconfig',
        await cluster.kubeconfigFile(CONTROLLER_TOKEN),
        '--cluster-resource-namespace',
        'cert-csi',
        '--leader-elect=false',
      ],
      'cert-csi controller started',
    );
    t.teardown(() => controller.stop());

    const ca = await waitForObject<Certificate>(
      server.store,
      CertificateKind,
      'cert-csi-ca',
      'cert-csi',
      readyAt(1),
      CERTIFICATE_WAIT_MS,
    );
    t.ok(ca.status?.notAfter, 'the CA Certificate is Ready');
    const caSecret = await server.store.get<Secret>(SecretKind, 'cert-csi-ca', 'cert-csi');
    const caPem = secretText(caSecret, 'tls.crt');
    t.ok(new X509Certificate(caPem).ca);

    await server.store.create(
      SecretKind,
      tlsSecret(NS, 'keystore-password', { password: 'changeme' }),
    );
    await server.store.create(
      CertificateKind,
      certificateObject(NS, 'app', {
        commonName: 'app.sandbox.svc',
        dnsNames: ['app.sandbox.svc'],
        issuerRef: { name: 'cert-csi-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
        privateKey: { algorithm: 'RSA', size: 2048, encoding: 'PKCS8' },
        additionalOutputFormats: [{ type: 'CombinedPEM' }, { type: 'DER' }],
        keystores: {
          pkcs12: {
            create: true,
            profile: 'Modern2023',
            passwordSecretRef: { name: 'keystore-password', key: 'password' },
          },
          jks: { create: true, passwordSecretRef: { name: 'keystore-password', key: 'password' } },
        },
      }),
    );
    await waitForObject<Certificate>(
      server.store,
      CertificateKind,
      'app',
      NS,
      readyAt(1),
      CERTIFICATE_WAIT_MS,
    );
    const secret = await server.store.get<Secret>(SecretKind, 'app-tls', NS);
    const keyPem = secretText(secret, 'tls.key');
    const chain = secretText(secret, 'tls.crt');
    t.match(keyPem, /^-----BEGIN PRIVATE KEY-----/, 'PKCS8 as asked');
    t.equal(secretText(secret, 'ca.crt'), caPem);
    t.match(await opensslVerify(caPem, chain), /OK/);
    t.equal(secretText(secret, 'tls-combined.pem'), `${keyPem}\n${chain}`, 'CombinedPEM');
    t.same(
      Buffer.from(secret.data?.['key.der'] ?? '', 'base64'),
      decodePrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' }),
      'DER is the key PEM block',
    );
    const p12 = Buffer.from(secret.data?.['keystore.p12'] ?? '', 'base64');
    const info = await opensslPkcs12(p12, 'changeme', ['-nodes']);
    t.match(info, /PBES2, PBKDF2, AES-256-CBC/);
    t.ok(
      info.includes(new X509Certificate(chain).toString().trim()),
      'the leaf is in keystore.p12',
    );
    const jksPath = join(cluster.dir, 'keystore.jks');
    await writeFile(jksPath, Buffer.from(secret.data?.['keystore.jks'] ?? '', 'base64'));
    const { stdout } = await run('keytool', [
      '-list',
      '-storetype',
      'JKS',
      '-keystore',
      jksPath,
      '-storepass',
      'changeme',
    ]);
    t.match(
      stdout,
      /certificate, .*PrivateKeyEntry/,
      'keytool lists the key entry under the default alias',
    );
    t.match(stdout, /ca, .*trustedCertEntry/);
  },
);

t.test(
  'a Certificate the webhook would refuse is reported on the Certificate and as an Event',
  async (t) => {
    const cluster = await startCluster(t);
    const { server } = cluster;
    const controller = await startCommand(
      [
        'controller',
        '--kubeconfig',
        await cluster.kubeconfigFile(CONTROLLER_TOKEN),
        '--cluster-resource-namespace',
        'cert-csi',
        '--leader-elect=false',
      ],
      'cert-csi controller started',
    );
    t.teardown(() => controller.stop());
    await server.store.create(
      CertificateKind,
      certificateObject(NS, 'short', { dnsNames: ['short.example'], duration: '30m' }),
    );
    const refused = await waitForObject<Certificate>(
      server.store,
      CertificateKind,
      'short',
      NS,
      (c) => c.status?.conditions?.some((x) => x.reason === 'InvalidSpec') ?? false,
      CERTIFICATE_WAIT_MS,
    );
    const ready = refused.status?.conditions?.find((c) => c.type === 'Ready');
    t.match(ready, { status: 'False', reason: 'InvalidSpec', message: /spec\.duration/ });
    t.notOk(
      refused.status?.conditions?.some((c) => c.type === 'Issuing'),
      'not issued',
    );
    // The Event writer sends Events after the status write; wait for it to arrive.
    const event = await until(
      async () =>
        (await server.store.list<KubeEvent>(KubeEventKind, { namespace: NS })).items.find(
          (e) => e.reason === 'InvalidSpec',
        ),
      { what: 'the InvalidSpec Event', timeoutMs: CERTIFICATE_WAIT_MS },
    );
    t.match(event, {
      type: 'Warning',
      message: /spec\.duration/,
      involvedObject: { name: 'short' },
    });
  },
);
