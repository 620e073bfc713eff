import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
  encodeBytes,
} from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import { runApprove } from '../../src/cli/approve/approve-command.js';
import { runDeny } from '../../src/cli/deny/deny-command.js';
import { createCsr } from '../../src/pki/csr.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { certificateRequest, withIssuerRef, withNamespace } from '../support/builders/index.js';
import { NODE_TOKEN, startCluster } from '../support/cluster-harness.js';
import { runInProcess } from '../support/in-process-command.js';
import { startPlugin } from '../support/plugin-harness.js';
import { tempDir } from '../support/temp-dir.js';

// `cert-csi approve` / `deny` (cmctl's verbs): the condition a person sets on a waiting
// CertificateRequest, in the embedded plugin (through its control socket, under its store's
// rules) and in a cluster (the fake API server, with the manifests' RBAC).

/** A CertificateRequest NAME in sandbox that nothing has approved or denied, with a real CSR. */
async function seedWaiting(store: ResourceStore, name: string): Promise<void> {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const request = certificateRequest(name, withNamespace('sandbox'), withIssuerRef({ name: 'ca' }));
  request.spec.request = encodeBytes(await createCsr({ key, dnsNames: ['web.sandbox.svc'] }));
  await store.create<CertificateRequest>(CertificateRequestKind, request);
}

const conditionOf = async (store: ResourceStore, name: string, type: string) =>
  (
    await store.get<CertificateRequest>(CertificateRequestKind, name, 'sandbox')
  ).status?.conditions?.find((c: Condition) => c.type === type);

t.test('embedded: approve and deny through the plugin, each decision final', async (t) => {
  // No approver: the requests wait for a person.
  const plugin = await startPlugin(t, {
    controllers: { select: ['*', '-certificaterequests-approver'] },
  });
  await seedWaiting(plugin.store, 'web-1');
  await seedWaiting(plugin.store, 'web-2');
  const root = ['--data-root', plugin.dataRoot.root];

  const approved = await runInProcess(runApprove, ['web-1', '-n', 'sandbox', ...root]);
  t.equal(approved.code, 0, approved.stderr);
  t.equal(approved.stdout, "Approved CertificateRequest 'sandbox/web-1'\n", "cmctl's line");
  t.match(await conditionOf(plugin.store, 'web-1', 'Approved'), {
    status: 'True',
    reason: 'KubectlCertManager',
    message: 'manually approved by "cert-csi"',
  });

  const denied = await runInProcess(runDeny, [
    'web-2',
    '--namespace',
    'sandbox',
    '--reason',
    'pki-team',
    '--message',
    'violates policy',
    ...root,
  ]);
  t.equal(denied.code, 0, denied.stderr);
  t.equal(denied.stdout, "Denied CertificateRequest 'sandbox/web-2'\n");
  t.match(await conditionOf(plugin.store, 'web-2', 'Denied'), {
    status: 'True',
    reason: 'pki-team',
    message: 'violates policy',
  });
  t.notOk(await conditionOf(plugin.store, 'web-2', 'Approved'), 'denied, not approved');

  const refusals: Array<[typeof runApprove, string[], string]> = [
    [
      runApprove,
      ['web-1'],
      'cert-csi approve: CertificateRequest sandbox/web-1 is already approved',
    ],
    [runDeny, ['web-1'], 'cert-csi deny: CertificateRequest sandbox/web-1 is already approved'],
    [runApprove, ['web-2'], 'cert-csi approve: CertificateRequest sandbox/web-2 is already denied'],
    [runApprove, ['nope'], 'cert-csi approve: CertificateRequest sandbox/nope not found'],
  ];
  for (const [run, args, line] of refusals) {
    const result = await runInProcess(run, [...args, '-n', 'sandbox', ...root]);
    t.equal(result.code, 1, args.join(' '));
    const command = run === runApprove ? 'approve' : 'deny';
    t.equal(
      result.stderr,
      `${line}\nsee cert-csi ${command} --help\n`,
      `${args.join(' ')}: one line, then where the help is`,
    );
    t.equal(result.stdout, '', 'nothing said to have worked');
  }
  t.match(
    await conditionOf(plugin.store, 'web-1', 'Approved'),
    { reason: 'KubectlCertManager' },
    'the first decision stands',
  );

  const empty = await tempDir(t, 'cert-csi-no-plugin-');
  const noPlugin = await runInProcess(runApprove, ['web-3', '--data-root', empty]);
  t.equal(noPlugin.code, 1);
  t.match(
    noPlugin.stderr,
    /^cert-csi approve: no plugin answers at \S+ \(no socket there\): is cert-csi node running with --data-root /,
  );
});

t.test('cluster: approve and deny through the API, as RBAC allows', async (t) => {
  const cluster = await startCluster(t);
  const store = cluster.server.store;
  await seedWaiting(store, 'web-1');
  await seedWaiting(store, 'web-2');
  const admin = ['--kubeconfig', await cluster.kubeconfigFile(cluster.server.adminToken)];
  // A condition the issuer wrote already stays as it is.
  const pending: Condition = {
    type: 'Ready',
    status: 'False',
    reason: 'Pending',
    message: 'waiting for approval',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  };
  const current = await store.get<CertificateRequest>(CertificateRequestKind, 'web-1', 'sandbox');
  await store.updateStatus(CertificateRequestKind, {
    ...current,
    status: { conditions: [pending] },
  });

  const approved = await runInProcess(runApprove, ['web-1', '-n', 'sandbox', ...admin]);
  t.equal(approved.code, 0, approved.stderr);
  t.equal(approved.stdout, "Approved CertificateRequest 'sandbox/web-1'\n");
  t.match(await conditionOf(store, 'web-1', 'Approved'), {
    status: 'True',
    reason: 'KubectlCertManager',
  });
  t.same(await conditionOf(store, 'web-1', 'Ready'), pending, 'the Ready condition is kept');
  t.ok(
    cluster.server.requests.some(
      (r) => r.resource === 'certificaterequests' && r.subresource === 'status',
    ),
    'a status update, as cmctl makes it',
  );

  // The node's service account (deploy/manifests/rbac-node.yaml) may create requests, not decide them.
  const node = ['--kubeconfig', await cluster.kubeconfigFile(NODE_TOKEN)];
  const forbidden = await runInProcess(runDeny, ['web-2', '-n', 'sandbox', ...node]);
  t.equal(forbidden.code, 1);
  t.match(
    forbidden.stderr,
    /^cert-csi deny: [^\n]*forbidden[^\n]*\nsee cert-csi deny --help\n$/i,
    'one line',
  );
  t.notOk(await conditionOf(store, 'web-2', 'Denied'), 'nothing written');

  const again = await runInProcess(runApprove, ['web-1', '-n', 'sandbox', ...admin]);
  t.equal(again.code, 1);
  t.equal(
    again.stderr,
    'cert-csi approve: CertificateRequest sandbox/web-1 is already approved\nsee cert-csi approve --help\n',
  );
});

t.test('approve and deny: a command line they cannot use', async (t) => {
  const cases: Array<[string[], string]> = [
    [['--data-root', '/d'], "give the CertificateRequest's name: cert-csi approve NAME"],
    [['a', 'b', '--data-root', '/d'], 'give one CertificateRequest name only'],
    [
      ['a'],
      'give --data-root DIR (a request of the embedded plugin) or --kubeconfig FILE (a request in a cluster), one of them',
    ],
    [
      ['a', '--data-root', '/d', '--kubeconfig', '/k'],
      'give --data-root DIR (a request of the embedded plugin) or --kubeconfig FILE (a request in a cluster), one of them',
    ],
    [['a', '--reason', '', '--data-root', '/d'], '--reason must not be empty'],
    [['a', '--message', '', '--data-root', '/d'], '--message must not be empty'],
    [['A_B', '--data-root', '/d'], ''],
    [['a', '--kubeconfig', '/k', '--timeout', '1s'], '--timeout: only used with --data-root'],
    [
      ['a', '--data-root', '/d', '--kube-api-qps', '3'],
      '--kube-api-qps: only used with --kubeconfig or --context',
    ],
    [['a', '--resaon', 'x'], 'unknown flag --resaon (did you mean --reason?)'],
    [['a', '--kubeconfig', '/nonexistent/kubeconfig'], ''],
  ];
  for (const [args, line] of cases) {
    const result = await runInProcess(runApprove, args);
    t.equal(result.code, 2, args.join(' '));
    if (line === '') {
      t.match(
        result.stderr,
        /^cert-csi approve: .+\nsee cert-csi approve --help\n$/,
        'a bad name or kubeconfig',
      );
    } else {
      t.equal(
        result.stderr,
        `cert-csi approve: ${line}\nsee cert-csi approve --help\n`,
        args.join(' '),
      );
    }
  }
  const help = await runInProcess(runDeny, ['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: cert-csi deny NAME /);
  t.match(help.stdout, /Exit codes: 0 denied; 1 refused/);
});
