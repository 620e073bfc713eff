import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
  encodeBytes,
} from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import { SecretKind } from '../../src/api/secret.js';
import type { CertificateStatusReport } from '../../src/certificates/certificate-status-report.js';
import { runRenew } from '../../src/cli/renew/renew-command.js';
import { runStatus } from '../../src/cli/status/status-command.js';
import { LOCK_FILE } from '../../src/fs/directory-lock.js';
import { createCsr } from '../../src/pki/csr.js';
import { decodePrivateKey } from '../../src/pki/keys.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import {
  CONTROL_SOCKET_NAME,
  controlSocketOf,
} from '../../src/volume-manager/control/control-protocol.js';
import { type IssuedLeaf, issuedLeaf, revisionRequest } from '../certificates/fixtures.js';
import { tlsSecret } from '../support/builders/index.js';
import { runCli } from '../support/cli-process.js';
import { NODE_TOKEN, startCluster } from '../support/cluster-harness.js';
import { runInProcess } from '../support/in-process-command.js';
import { startPlugin } from '../support/plugin-harness.js';
import { tempDir } from '../support/temp-dir.js';

// Child processes start slowly on a busy 2-core machine; the in-process cases stay fast.
t.setTimeout(300_000);

const leaf: IssuedLeaf = await issuedLeaf('web.sandbox.svc', ['web.sandbox.svc']);

const ready: Condition = {
  type: 'Ready',
  status: 'True',
  reason: 'Ready',
  message: 'Certificate is up to date and has not expired',
  lastTransitionTime: '2026-01-01T00:00:00Z',
  observedGeneration: 1,
};

const TRIGGERED = 'Manually triggered issuance of Certificate sandbox/web\n';

/**
 * An issued Certificate sandbox/web at revision 1 as cert-manager leaves it: Ready, its
 * Secret with the issuer annotations, and its request of revision 1 (owned, with the UID).
 */
async function seedCertificate(store: ResourceStore): Promise<Certificate> {
  const created = await store.create<Certificate>(CertificateKind, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: 'sandbox' },
    spec: {
      secretName: 'web-tls',
      issuerRef: { name: 'ca', kind: 'Issuer' },
      dnsNames: ['web.sandbox.svc'],
    },
  });
  const certificate = await store.updateStatus<Certificate>(CertificateKind, {
    ...created,
    status: {
      conditions: [ready],
      notBefore: '2026-01-01T00:00:00Z',
      notAfter: '2026-04-01T00:00:00Z',
      renewalTime: '2026-03-02T00:00:00Z',
      revision: 1,
    },
  });
  const secret = tlsSecret('sandbox', 'web-tls', {
    'tls.crt': leaf.certificatePem,
    'tls.key': leaf.keyPem,
    'ca.crt': leaf.caPem,
  });
  secret.metadata.annotations = {
    'cert-manager.io/issuer-name': 'ca',
    'cert-manager.io/issuer-kind': 'Issuer',
    'cert-manager.io/issuer-group': 'cert-manager.io',
  };
  await store.create(SecretKind, secret);
  const request = revisionRequest('web-1', '1', { uid: created.metadata.uid ?? '' });
  request.metadata.namespace = 'sandbox';
  // A real CSR for the leaf's key: the embedded store admits only a request that verifies.
  request.spec.request = encodeBytes(
    await createCsr({ key: decodePrivateKey(leaf.keyPem), dnsNames: ['web.sandbox.svc'] }),
  );
  const madeRequest = await store.create<CertificateRequest>(CertificateRequestKind, request);
  await store.updateStatus<CertificateRequest>(CertificateRequestKind, {
    ...madeRequest,
    status: {
      conditions: [
        { type: 'Approved', status: 'True', reason: 'cert-manager.io', message: 'approved' },
        { type: 'Ready', status: 'True', reason: 'Issued', message: 'Certificate fetched' },
      ],
    },
  });
  return certificate;
}

const issuingOf = async (store: ResourceStore) =>
  (await store.get<Certificate>(CertificateKind, 'web', 'sandbox')).status?.conditions?.find(
    (c) => c.type === 'Issuing',
  );

t.test(
  'cluster: renew --certificate sets the condition as cmctl does, status shows it',
  async (t) => {
    const cluster = await startCluster(t);
    const { server } = cluster;
    const store = server.store;
    const before = await seedCertificate(store);
    const kubeconfig = await cluster.kubeconfigFile(server.adminToken);
    const statusWrites = () =>
      server.requests.filter((r) => r.resource === 'certificates' && r.subresource === 'status')
        .length;

    const renew = await runInProcess(runRenew, [
      '--certificate',
      'sandbox/web',
      '--kubeconfig',
      kubeconfig,
    ]);
    t.equal(renew.code, 0, renew.stderr);
    t.equal(renew.stdout, TRIGGERED, "cmctl's line");
    t.equal(renew.stderr, '');
    const after = await store.get<Certificate>(CertificateKind, 'web', 'sandbox');
    const issuing = after.status?.conditions?.find((c) => c.type === 'Issuing');
    t.match(issuing, {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
      observedGeneration: before.metadata.generation,
      lastTransitionTime: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    });
    t.ok(
      Math.abs(Date.parse(issuing?.lastTransitionTime ?? '') - Date.now()) < 60_000,
      'lastTransitionTime is now',
    );
    t.same(after.status?.conditions?.[0], ready, 'Ready kept');
    t.same(after.spec, before.spec, 'the spec untouched');
    t.equal(statusWrites(), 1, 'one status write');

    // Already issuing: written again (reason and message), the transition time kept, a note.
    const again = await runInProcess(runRenew, [
      '--certificate',
      'sandbox/web',
      '--kubeconfig',
      kubeconfig,
    ]);
    t.equal(again.code, 0);
    t.equal(again.stdout, TRIGGERED);
    t.equal(
      again.stderr,
      'note: Certificate sandbox/web was already being issued: that issuance goes on, no second one starts\n',
    );
    t.equal((await issuingOf(store))?.lastTransitionTime, issuing?.lastTransitionTime);

    // A Conflict (someone wrote in between) is retried on a fresh read.
    server.conflictOnNextStatusUpdates(2);
    const writes = statusWrites();
    const contended = await runInProcess(runRenew, [
      '--certificate',
      'sandbox/web',
      '--kubeconfig',
      kubeconfig,
    ]);
    t.equal(contended.code, 0, contended.stderr);
    t.equal(statusWrites() - writes, 3, 'two Conflicts, then the write');

    // Unknown: exit 1, the name in the message, nothing written.
    const beforeUnknown = statusWrites();
    const unknown = await runInProcess(runRenew, [
      '--certificate',
      'sandbox/nope',
      '--kubeconfig',
      kubeconfig,
    ]);
    t.equal(unknown.code, 1);
    t.equal(unknown.stdout, '');
    t.equal(
      unknown.stderr,
      'cert-csi renew: Certificate sandbox/nope not found\nsee cert-csi renew --help\n',
    );
    t.equal(statusWrites(), beforeUnknown, 'nothing written');

    // Someone the cluster does not allow: exit 1 with the API's reason.
    const nodeKubeconfig = await cluster.kubeconfigFile(NODE_TOKEN);
    const forbidden = await runInProcess(runRenew, [
      '--certificate',
      'sandbox/web',
      '--kubeconfig',
      nodeKubeconfig,
    ]);
    t.equal(forbidden.code, 1);
    t.match(
      forbidden.stderr,
      /^cert-csi renew: failed to trigger issuance of Certificate sandbox\/web: .*forbidden/i,
    );

    const status = await runInProcess(runStatus, [
      '--certificate',
      'sandbox/web',
      '--kubeconfig',
      kubeconfig,
    ]);
    t.equal(status.code, 0, status.stderr);
    const lines = status.stdout.split('\n');
    for (const line of [
      'Name: web',
      'Namespace: sandbox',
      '  Ready: True, Reason: Ready, Message: Certificate is up to date and has not expired',
      '  Issuing: True, Reason: ManuallyTriggered, Message: Certificate re-issuance manually triggered',
      '- web.sandbox.svc',
      '  Name: web-tls',
      '  Issuer Annotations: cert-manager.io/issuer-name=ca, cert-manager.io/issuer-kind=Issuer, cert-manager.io/issuer-group=cert-manager.io',
      '  Subject: CN=web.sandbox.svc',
      `  Serial Number: ${leaf.serialNumber}`,
      '  Private Key: present, matches the certificate',
      'Renewal Time: 2026-03-02T00:00:00Z',
      'CertificateRequest (current, revision 1):',
      '  Name: web-1',
      '    Ready: True, Reason: Issued, Message: Certificate fetched',
      'CertificateRequest (next, revision 2):',
      '  No CertificateRequest found for this revision',
      'Last Failure Time: <none>',
    ]) {
      t.ok(lines.includes(line), line);
    }
    const json = await runInProcess(runStatus, [
      '--certificate',
      'sandbox/web',
      '--kubeconfig',
      kubeconfig,
      '--json',
    ]);
    t.equal(json.code, 0);
    const report = JSON.parse(json.stdout) as CertificateStatusReport;
    t.match(report, {
      name: 'web',
      namespace: 'sandbox',
      revision: 1,
      secret: { found: true, privateKey: 'matches', hasCA: true },
      requests: { currentRevision: 1, nextRevision: 2, current: { name: 'web-1' } },
    });
    const missing = await runInProcess(runStatus, [
      '--certificate',
      'sandbox/nope',
      '--kubeconfig',
      kubeconfig,
    ]);
    t.equal(missing.code, 1);
    t.equal(
      missing.stderr,
      'cert-csi status: Certificate sandbox/nope not found\nsee cert-csi status --help\n',
    );
  },
);

t.test('cluster, from a child process: the exact output of renew and status', async (t) => {
  const cluster = await startCluster(t);
  await seedCertificate(cluster.server.store);
  const kubeconfig = await cluster.kubeconfigFile(cluster.server.adminToken);
  const [renew, status, bad] = await Promise.all([
    runCli(['renew', '--certificate', 'sandbox/web', '--kubeconfig', kubeconfig]),
    runCli(['status', '--certificate', 'sandbox/web', '--kubeconfig', kubeconfig]),
    runCli(['renew', '--certificate', 'web', '--kubeconfig', kubeconfig]),
  ]);
  t.equal(renew.code, 0, renew.stderr);
  t.equal(renew.stdout, TRIGGERED);
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, /^Name: web\nNamespace: sandbox\nCreated at: \S+Z\nConditions:\n/);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^cert-csi renew: --certificate: expected NAMESPACE\/NAME, got "web"\n/);
});

t.test('embedded: renew through the plugin, status from its state dir', async (t) => {
  const stateDir = await tempDir(t, 'cert-csi-state-');
  // Only the approver: whatever Certificate controllers exist stay off, so what this test
  // writes is what it reads back.
  const plugin = await startPlugin(t, {
    stateDir,
    controllers: { select: ['certificaterequests-approver'] },
  });
  const before = await seedCertificate(plugin.store);
  const root = plugin.dataRoot.root;

  const renew = await runInProcess(runRenew, ['--certificate', 'sandbox/web', '--data-root', root]);
  t.equal(renew.code, 0, renew.stderr);
  t.equal(renew.stdout, TRIGGERED);
  t.equal(renew.stderr, '');
  t.match(await issuingOf(plugin.store), {
    status: 'True',
    reason: 'ManuallyTriggered',
    message: 'Certificate re-issuance manually triggered',
    observedGeneration: before.metadata.generation,
  });
  t.same(
    (await readdir(plugin.dataRoot.root)).sort(),
    [LOCK_FILE, CONTROL_SOCKET_NAME],
    "nothing written there but the plugin's lock and socket",
  );

  const again = await runInProcess(runRenew, ['--certificate', 'sandbox/web', '--data-root', root]);
  t.equal(again.code, 0);
  t.match(again.stderr, /^note: Certificate sandbox\/web was already being issued/);

  const unknown = await runInProcess(runRenew, ['--certificate', 'other/web', '--data-root', root]);
  t.equal(unknown.code, 1);
  t.equal(unknown.stdout, '');
  t.equal(
    unknown.stderr,
    'cert-csi renew: Certificate other/web not found\nsee cert-csi renew --help\n',
  );

  // Read-only from the state dir while the plugin runs and holds the dir's lock.
  const status = await runInProcess(runStatus, [
    '--certificate',
    'sandbox/web',
    '--state-dir',
    stateDir,
  ]);
  t.equal(status.code, 0, status.stderr);
  const lines = status.stdout.split('\n');
  for (const line of [
    'Name: web',
    '  Issuing: True, Reason: ManuallyTriggered, Message: Certificate re-issuance manually triggered',
    '  Private Key: present, matches the certificate',
    '  Name: web-1',
  ]) {
    t.ok(lines.includes(line), line);
  }
  const json = await runInProcess(runStatus, [
    '--certificate',
    'sandbox/web',
    '--state-dir',
    stateDir,
    '--json',
  ]);
  const report = JSON.parse(json.stdout) as CertificateStatusReport;
  t.same(
    report.conditions.map((c) => [c.type, c.reason]),
    [
      ['Ready', 'Ready'],
      ['Issuing', 'ManuallyTriggered'],
    ],
  );
  const missing = await runInProcess(runStatus, [
    '--certificate',
    'sandbox/nope',
    '--state-dir',
    stateDir,
  ]);
  t.equal(missing.code, 1);
  t.equal(
    missing.stderr,
    'cert-csi status: Certificate sandbox/nope not found\nsee cert-csi status --help\n',
  );

  // With the plugin stopped, status still reads the dir; renew has nobody to ask.
  await plugin.stop();
  const stopped = await runInProcess(runStatus, [
    '--certificate',
    'sandbox/web',
    '--state-dir',
    stateDir,
  ]);
  t.equal(stopped.stdout, status.stdout, 'the same, from the files alone');
  const noAnswer = await runInProcess(runRenew, [
    '--certificate',
    'sandbox/web',
    '--data-root',
    root,
    '--timeout',
    '1s',
  ]);
  t.equal(noAnswer.code, 1);
  t.equal(
    noAnswer.stderr,
    `cert-csi renew: no plugin answers at ${controlSocketOf(plugin.dataRoot)} (no socket there): is cert-csi node running with --data-root ${root}?\nsee cert-csi renew --help\n`,
  );
  t.same(
    await readdir(root),
    [LOCK_FILE],
    'nothing written: the stopped plugin took its socket along',
  );
});

t.test('bad flags exit 2 with what is wrong, and touch nothing', async (t) => {
  const dir = await tempDir(t);
  const root = join(dir, 'volumes');
  await mkdir(root, { recursive: true });
  const stateDir = join(dir, 'state');
  await mkdir(stateDir);
  const kubeconfig = join(dir, 'kubeconfig');
  const renewCases: Array<[string[], RegExp]> = [
    [
      ['--certificate', 'web', '--data-root', root],
      /--certificate: expected NAMESPACE\/NAME, got "web"/,
    ],
    [
      ['--certificate', 'sandbox/', '--data-root', root],
      /expected NAMESPACE\/NAME, got "sandbox\/"/,
    ],
    [['--certificate', 'a/b/c', '--data-root', root], /expected NAMESPACE\/NAME, got "a\/b\/c"/],
    [
      ['--certificate', 'Sandbox/web', '--data-root', root],
      /--certificate: namespace "Sandbox" is invalid/,
    ],
    [
      ['--certificate', 'sandbox/web_1', '--data-root', root],
      /--certificate: name "web_1" is invalid/,
    ],
    [['--certificate', 'a/b'], /--certificate needs --data-root DIR .* or --kubeconfig FILE/],
    [['--certificate', 'a/b', '--data-root', root, '--kubeconfig', kubeconfig], /name two places/],
    [
      ['--certificate', 'a/b', '--all', '--data-root', root],
      /give one of --certificate, --volume-id or --all/,
    ],
    [['--certificate', 'a/b', '--volume-id', 'csi-a', '--data-root', root], /give one of/],
    [
      ['--certificate', 'a/b', '--kubeconfig', kubeconfig, '--timeout', '5s'],
      /--timeout: only used with --data-root/,
    ],
    [
      ['--certificate', 'a/b', '--data-root', root, '--kube-api-qps', '5'],
      /--kube-api-qps: only used with --kubeconfig or --context/,
    ],
    [
      ['--all', '--data-root', root, '--kubeconfig', kubeconfig],
      /--kubeconfig: only used with --certificate/,
    ],
    [['--certificate', 'a/b', '--kubeconfig', kubeconfig], /--kubeconfig .*kubeconfig: /],
    [
      ['--certificate', 'a/b', '--kubeconfig', kubeconfig, '--kube-api-qps', '0'],
      /--kube-api-qps: must be a number > 0/,
    ],
    [
      ['--certificate', 'a/b', '--data-root', join(dir, 'elsewhere')],
      /data root \S+elsewhere does not exist or is not a directory: is cert-csi node running/,
    ],
  ];
  for (const [args, message] of renewCases) {
    const result = await runInProcess(runRenew, args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.stderr, message, args.join(' '));
    t.match(
      result.stderr,
      /^cert-csi renew: [^\n]+\nsee cert-csi renew --help\n$/,
      'one line, then where the help is',
    );
  }
  t.same(await readdir(root), [], 'nothing was written');
  const statusCases: Array<[string[], RegExp]> = [
    [['--certificate', 'web', '--state-dir', stateDir], /--certificate: expected NAMESPACE\/NAME/],
    [['--certificate', 'a/b'], /--certificate needs --state-dir DIR .* or --kubeconfig FILE/],
    [['--certificate', 'a/b', '--data-root', root], /--data-root lists volumes/],
    [
      ['--certificate', 'a/b', '--state-dir', stateDir, '--kubeconfig', kubeconfig],
      /name two places/,
    ],
    [['--certificate', 'a/b', '--state-dir', join(dir, 'nope')], /state dir .*nope does not exist/],
    [
      [
        '--certificate',
        'a/b',
        '--state-dir',
        stateDir,
        '--context',
        'x',
        '--kubeconfig',
        kubeconfig,
      ],
      /name two places/,
    ],
    [
      ['--certificate', 'a/b', '--state-dir', stateDir, '--kube-api-burst', '3'],
      /--kube-api-burst: only used with --kubeconfig or --context/,
    ],
    [['--data-root', root, '--state-dir', stateDir], /--state-dir: only used with --certificate/],
    [
      ['--data-root', root, '--kubeconfig', kubeconfig],
      /--kubeconfig: only used with --certificate/,
    ],
  ];
  for (const [args, message] of statusCases) {
    const result = await runInProcess(runStatus, args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.stderr, message, args.join(' '));
    t.match(
      result.stderr,
      /^cert-csi status: [^\n]+\nsee cert-csi status --help\n$/,
      'one line, then where the help is',
    );
  }
  t.same(await readdir(stateDir), [], 'the state dir is not written');
});

t.test(
  'help: renew and status document --certificate, both places and the exit codes',
  async (t) => {
    const renew = await runInProcess(runRenew, ['--help']);
    t.equal(renew.code, 0);
    for (const text of [
      '--certificate NAMESPACE/NAME',
      'ManuallyTriggered',
      '"Certificate re-issuance manually triggered"',
      'Manually triggered issuance of Certificate NAMESPACE/NAME',
      '--kubeconfig PATH',
      '--context NAME',
      'Exit codes: 0',
      'already issuing',
    ]) {
      t.ok(renew.stdout.includes(text), `renew: ${text}`);
    }
    const status = await runInProcess(runStatus, ['--help']);
    t.equal(status.code, 0);
    for (const text of [
      '--certificate NAMESPACE/NAME',
      '--state-dir DIR',
      'cmctl status certificate',
      'without its lock',
      '--kubeconfig PATH',
      'Exit codes: 0',
    ]) {
      t.ok(status.stdout.includes(text), `status: ${text}`);
    }
  },
);
