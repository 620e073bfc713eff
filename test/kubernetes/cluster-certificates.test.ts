import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { isConditionTrue } from '../../src/api/conditions.js';
import { ClusterIssuerKind, type Issuer } from '../../src/api/issuer.js';
import { type KubeEvent, KubeEventKind } from '../../src/api/kube-event.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { tlsSecret } from '../support/builders/index.js';
import {
  CERTIFICATE_WAIT_MS,
  certificateObject,
  secretText,
} from '../support/certificate-stack.js';
import { runCli, startCommand } from '../support/cli-process.js';
import { CONTROLLER_TOKEN, DEPLOY_DIR, startCluster } from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import {
  checkIssuedSecret,
  E2E_KEYSTORE_PASSWORD,
  E2E_LEAF_OUTPUTS,
} from '../support/issued-secret-checks.js';
import { waitForObject } from '../support/wait-for-object.js';

const _run = promisify(execFile);
const NS = 'sandbox';

function readyAt(revision: number) {
  return (c: Certificate) =>
    isConditionTrue(c.status?.conditions, 'Ready') &&
    !isConditionTrue(c.status?.conditions, 'Issuing') &&
    c.status?.revision === revision;
}

t.test(
  'cert-csi controller (a real process) bootstraps its CA through Certificates, issues a leaf with every output, renews it by hand, reports an invalid one',
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
    // One cert-manager's webhook would refuse: reported, never issued (checked at the end).
    await server.store.create(
      CertificateKind,
      certificateObject(NS, 'short', { dnsNames: ['short.example'], duration: '30m' }),
    );

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
      tlsSecret(NS, 'keystore-password', { password: E2E_KEYSTORE_PASSWORD }),
    );
    await server.store.create(
      CertificateKind,
      certificateObject(NS, 'app', {
        commonName: 'app.sandbox.svc',
        dnsNames: ['app.sandbox.svc'],
        issuerRef: { name: 'cert-csi-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
        privateKey: { algorithm: 'ECDSA' },
        ...E2E_LEAF_OUTPUTS,
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
    const first = await server.store.get<Secret>(SecretKind, 'app-tls', NS);
    await checkIssuedSecret(t, first, caPem);

    // cmctl's renew, from the command line: one revision more, and (rotationPolicy Always) a new key.
    const renewed = await runCli([
      'renew',
      '--certificate',
      `${NS}/app`,
      '--kubeconfig',
      await cluster.kubeconfigFile(server.adminToken),
    ]);
    t.equal(renewed.code, 0, renewed.stderr);
    t.equal(renewed.stdout, `Manually triggered issuance of Certificate ${NS}/app\n`);
    const second = await waitForObject<Certificate>(
      server.store,
      CertificateKind,
      'app',
      NS,
      readyAt(2),
      CERTIFICATE_WAIT_MS,
    );
    t.equal(second.status?.revision, 2, 'renew raised the revision by one');
    const reissued = await server.store.get<Secret>(SecretKind, 'app-tls', NS);
    t.not(secretText(reissued, 'tls.key'), secretText(first, 'tls.key'), 'a new key');
    await checkIssuedSecret(t, reissued, caPem);

    // Meanwhile an invalid Certificate, which the webhook would have refused, was reported.
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
