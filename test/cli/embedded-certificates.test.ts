import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { isConditionTrue } from '../../src/api/conditions.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { StateDirectoryReader } from '../../src/store/state-directory/state-directory-reader.js';
import { CERTIFICATE_WAIT_MS, secretText } from '../support/certificate-stack.js';
import { runCli, startNode } from '../support/cli-process.js';
import { DEPLOY_DIR } from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import {
  checkIssuedSecret,
  E2E_KEYSTORE_PASSWORD,
  E2E_LEAF_OUTPUTS,
} from '../support/issued-secret-checks.js';

const NS = 'apps';

t.test(
  'embedded mode (a real cert-csi node): bootstrap-ca.yaml and a leaf from --manifests, renewed with cert-csi renew --certificate',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'cert-csi-embedded-certificates-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const manifests = join(dir, 'manifests');
    await mkdir(manifests);
    await copyFile(join(DEPLOY_DIR, 'bootstrap-ca.yaml'), join(manifests, 'bootstrap-ca.yaml'));
    const [password, leaf] = [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'keystore-password', namespace: NS },
        stringData: { password: E2E_KEYSTORE_PASSWORD },
      },
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'app', namespace: NS },
        spec: {
          secretName: 'app-tls',
          dnsNames: ['app.apps.svc'],
          issuerRef: { name: 'cert-csi-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
          privateKey: { algorithm: 'ECDSA' },
          ...E2E_LEAF_OUTPUTS,
        },
      },
    ];
    // One object per JSON file, as kubectl reads them.
    await writeFile(join(manifests, 'keystore-password.json'), JSON.stringify(password));
    await writeFile(join(manifests, 'leaf.json'), JSON.stringify(leaf));
    const stateDir = join(dir, 'state');
    const dataRoot = join(dir, 'volumes');
    const node = await startNode([
      '--endpoint',
      `unix://${join(dir, 'csi.sock')}`,
      '--data-root',
      dataRoot,
      '--state-dir',
      stateDir,
      '--mount-mode',
      'direct',
      '--node-id',
      'embedded-certificates',
      '--cluster-resource-namespace',
      'cert-csi',
      '--manifests',
      manifests,
    ]);
    t.teardown(() => node.stop());

    // The state dir is what the plugin has made durable: read it as `cert-csi status` does.
    const state = new StateDirectoryReader(stateDir);
    const readyAt = (name: string, namespace: string, revision: number) =>
      until(
        async () => {
          const found = await state
            .get<Certificate>(CertificateKind, name, namespace)
            .catch(() => undefined);
          return (
            found !== undefined &&
            isConditionTrue(found.status?.conditions, 'Ready') &&
            !isConditionTrue(found.status?.conditions, 'Issuing') &&
            found.status?.revision === revision &&
            found
          );
        },
        {
          what: `Certificate ${namespace}/${name} Ready at revision ${revision}`,
          timeoutMs: CERTIFICATE_WAIT_MS,
          intervalMs: 50,
        },
      );
    await readyAt('cert-csi-ca', 'cert-csi', 1);
    const caPem = secretText(
      await state.get<Secret>(SecretKind, 'cert-csi-ca', 'cert-csi'),
      'tls.crt',
    );
    await readyAt('app', NS, 1);
    const first = await state.get<Secret>(SecretKind, 'app-tls', NS);
    await checkIssuedSecret(t, first, caPem);

    const renewed = await runCli(['renew', '--certificate', `${NS}/app`, '--data-root', dataRoot]);
    t.equal(renewed.code, 0, renewed.stderr);
    t.equal(renewed.stdout, `Manually triggered issuance of Certificate ${NS}/app\n`);
    const second = await readyAt('app', NS, 2);
    t.equal(second.status?.revision, 2, 'renew raised the revision by one');
    const reissued = await state.get<Secret>(SecretKind, 'app-tls', NS);
    t.not(secretText(reissued, 'tls.key'), secretText(first, 'tls.key'), 'a new key');
    await checkIssuedSecret(t, reissued, caPem);

    const status = await runCli(['status', '--certificate', `${NS}/app`, '--state-dir', stateDir]);
    t.equal(status.code, 0, status.stderr);
    t.match(status.stdout, /Ready: True, Reason: Ready/);
    t.match(status.stdout, /Revision: 2/);
    t.notMatch(node.output(), /PRIVATE KEY|changeme/, 'no key material or password in the logs');
  },
);
