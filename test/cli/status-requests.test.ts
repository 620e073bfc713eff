import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import { systemClock } from '../../src/base/clock.js';
import {
  ageText,
  formatRequestsTable,
} from '../../src/cli/requests-status/requests-status-text.js';
import { runStatus } from '../../src/cli/status/status-command.js';
import {
  type RequestAwaitingApproval,
  requestsAwaitingApproval,
} from '../../src/issuer/certificaterequests/awaiting-approval.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { StateDirectory } from '../../src/store/state-directory/state-directory.js';
import {
  certificateRequest,
  withConditions,
  withCreationTimestamp,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { startCluster } from '../support/cluster-harness.js';
import { runInProcess } from '../support/in-process-command.js';
import { tempDir } from '../support/temp-dir.js';

const condition = (type: string, status: Condition['status']): Condition => ({
  type,
  status,
  reason: 'test',
  message: 'test',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

const NOW = new Date('2026-03-01T12:00:00Z');
const requests = [
  certificateRequest(
    'approved',
    withNamespace('sandbox'),
    withIssuerRef({ name: 'ca' }),
    withConditions([condition('Approved', 'True')]),
  ),
  certificateRequest(
    'denied',
    withNamespace('sandbox'),
    withIssuerRef({ name: 'ca' }),
    withConditions([condition('Denied', 'True')]),
  ),
  certificateRequest(
    'new',
    withNamespace('sandbox'),
    withCreationTimestamp('2026-03-01T11:59:15Z'),
    withSpec({
      issuerRef: { name: 'ca' },
      username: 'system:serviceaccount:cert-csi:cert-csi-node',
    }),
    withConditions([condition('Ready', 'False')]),
  ),
  certificateRequest(
    'older',
    withNamespace('apps'),
    withCreationTimestamp('2026-03-01T09:30:00Z'),
    withSpec({ issuerRef: { name: 'ca', kind: 'ClusterIssuer' }, username: 'alice' }),
  ),
  certificateRequest('undated', withNamespace('apps'), withIssuerRef({ name: 'ca' })),
  certificateRequest('undated-too', withNamespace('apps'), withIssuerRef({ name: 'ca' })),
];

/** Creates the requests as an API client would: the object, then its status. */
async function seed(store: Pick<ResourceStore, 'create' | 'updateStatus'>): Promise<void> {
  for (const r of requests) {
    const created = await store.create<CertificateRequest>(CertificateRequestKind, r);
    if (r.status)
      await store.updateStatus(CertificateRequestKind, { ...created, status: r.status });
  }
}

t.test('waiting means neither Approved nor Denied; oldest first', async (t) => {
  const rows = requestsAwaitingApproval(requests, NOW);
  t.same(rows, [
    {
      namespace: 'apps',
      name: 'older',
      issuer: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      requester: 'alice',
      createdAt: '2026-03-01T09:30:00.000Z',
      ageSeconds: 9000,
    },
    {
      namespace: 'sandbox',
      name: 'new',
      issuer: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      requester: 'system:serviceaccount:cert-csi:cert-csi-node',
      createdAt: '2026-03-01T11:59:15.000Z',
      ageSeconds: 45,
    },
    {
      namespace: 'apps',
      name: 'undated',
      issuer: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      requester: '',
    },
    {
      namespace: 'apps',
      name: 'undated-too',
      issuer: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      requester: '',
    },
  ]);
  const clusterWide = certificateRequest('odd', withIssuerRef({ name: 'ca' }));
  t.equal(
    requestsAwaitingApproval([clusterWide], NOW)[0]?.namespace,
    '',
    'an object without a namespace lists with an empty one',
  );
  const table = formatRequestsTable(rows, 'test');
  t.match(table, /\napps +undated +Issuer\/ca +- +-\n/, 'no requester, no age: "-"');
  const long = formatRequestsTable(
    [{ ...(rows[0] as RequestAwaitingApproval), name: 'n'.repeat(253) }],
    'test',
  );
  const external = formatRequestsTable(
    [
      {
        ...(rows[0] as RequestAwaitingApproval),
        issuer: { name: 'pca', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' },
      },
    ],
    'test',
  );
  t.match(external, / AWSPCAIssuer\.awspca\.cert-manager\.io\/pca /, 'another group is named');
  t.match(long, new RegExp(`apps +${'n'.repeat(79)}… `), 'a long name is shortened');
});

t.test('ages read as kubectl prints them', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [119, '119s'],
    [120, '2m'],
    [185, '3m5s'],
    [600, '10m'],
    [179 * 60, '179m'],
    [3 * 3600, '3h'],
    [7 * 3600 + 59 * 60, '7h59m'],
    [47 * 3600, '47h'],
    [2 * 86400, '2d'],
    [7 * 86400 + 3600, '7d1h'],
    [700 * 86400, '700d'],
    [3 * 365 * 86400 + 86400, '3y1d'],
    [9 * 365 * 86400, '9y'],
  ];
  for (const [seconds, text] of cases) t.equal(ageText(seconds), text, `${seconds}s`);
});

t.test('--requests from the embedded plugin state dir: table, --json, --namespace', async (t) => {
  const dir = await tempDir(t, 'cert-csi-requests-');
  // Written as the embedded plugin writes them, an hour ago by the store's clock.
  const hourAgo = Date.now() - 3600_000;
  const store = await MemoryStore.open({
    persistence: new StateDirectory(dir),
    clock: { ...systemClock, now: () => hourAgo },
  });
  t.teardown(() => store.close());
  await seed(store);
  const table = await runInProcess(runStatus, ['--requests', '--state-dir', dir]);
  t.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^NAMESPACE +NAME +ISSUER +REQUESTER +AGE$/);
  t.same(
    lines.slice(1).map((l) => l.split(/ {2,}/)),
    [
      ['apps', 'older', 'ClusterIssuer/ca', 'alice', '60m'],
      ['apps', 'undated', 'Issuer/ca', '-', '60m'],
      ['apps', 'undated-too', 'Issuer/ca', '-', '60m'],
      ['sandbox', 'new', 'Issuer/ca', 'system:serviceaccount:cert-csi:cert-csi-node', '60m'],
    ],
  );
  const json = await runInProcess(runStatus, [
    '--requests',
    '--state-dir',
    dir,
    '--json',
    '-n',
    'sandbox',
  ]);
  t.equal(json.code, 0, json.stderr);
  const rows = JSON.parse(json.stdout) as RequestAwaitingApproval[];
  t.same(
    rows.map((r) => `${r.namespace}/${r.name}`),
    ['sandbox/new'],
  );
  const none = await runInProcess(runStatus, ['--requests', '--state-dir', dir, '-n', 'quiet']);
  t.equal(none.stdout, 'no CertificateRequests awaiting approval in namespace quiet\n');
});

t.test('--requests from a cluster (the fake API server)', async (t) => {
  const cluster = await startCluster(t);
  await seed(cluster.server.store);
  const kubeconfig = await cluster.kubeconfigFile(cluster.server.adminToken);
  const json = await runInProcess(runStatus, ['--requests', '--kubeconfig', kubeconfig, '--json']);
  t.equal(json.code, 0, json.stderr);
  const rows = JSON.parse(json.stdout) as RequestAwaitingApproval[];
  t.same(rows.map((r) => [r.namespace, r.name, r.requester]).sort(), [
    ['apps', 'older', 'alice'],
    ['apps', 'undated', ''],
    ['apps', 'undated-too', ''],
    ['sandbox', 'new', 'system:serviceaccount:cert-csi:cert-csi-node'],
  ]);
  t.ok(
    rows.every((r) => r.ageSeconds !== undefined && r.ageSeconds < 600),
    'aged from creation',
  );
  const table = await runInProcess(runStatus, [
    '--requests',
    '--kubeconfig',
    kubeconfig,
    '-n',
    'apps',
  ]);
  t.equal(table.code, 0, table.stderr);
  t.match(
    table.stdout,
    /^NAMESPACE +NAME +ISSUER +REQUESTER +AGE\napps +older +ClusterIssuer\/ca +alice +\d+s\napps +undated/,
  );
  t.notMatch(table.stdout, /sandbox/);
});

t.test('--requests: a cluster that refuses or cannot be reached', async (t) => {
  const cluster = await startCluster(t);
  const stranger = await cluster.kubeconfigFile('a-token-nobody-issued');
  const refused = await runInProcess(runStatus, ['--requests', '--kubeconfig', stranger]);
  t.equal(refused.code, 1);
  t.match(
    refused.stderr,
    /^cert-csi status: cannot list CertificateRequests: list certificaterequests\.cert-manager\.io: HTTP 401\nsee cert-csi status --help\n$/,
  );
  t.notMatch(refused.stderr, /a-token-nobody-issued/, 'the token is not shown');
  const missing = await runInProcess(runStatus, [
    '--requests',
    '--kubeconfig',
    `${cluster.dir}/no-such-kubeconfig`,
  ]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /no-such-kubeconfig/);
});

t.test('--requests: bad flags exit 2 naming what is wrong', async (t) => {
  const dir = await tempDir(t, 'cert-csi-requests-');
  const cases: Array<[string[], RegExp]> = [
    [
      ['--requests', '--certificate', 'a/b', '--state-dir', dir],
      /--certificate and --requests are two views/,
    ],
    [
      ['--requests'],
      /--requests needs --state-dir DIR \(the CertificateRequests of the embedded plugin\) or --kubeconfig FILE/,
    ],
    [
      ['--requests', '--state-dir', dir, '--data-root', dir],
      /--data-root lists volumes: with --requests give --state-dir/,
    ],
    [['--requests', '--state-dir', dir, '-n', 'Not_A_Namespace'], /--namespace: Not_A_Namespace: /],
    [
      ['--certificate', 'a/b', '--state-dir', dir, '-n', 'a'],
      /--namespace: only used with --requests/,
    ],
    [['--data-root', dir, '-n', 'a'], /--namespace: only used with --requests/],
    [['--requests', '--state-dir', dir, '--watch'], /--watch: only used with --data-root/],
  ];
  for (const [args, message] of cases) {
    const result = await runInProcess(runStatus, args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.stderr, message);
  }
});
