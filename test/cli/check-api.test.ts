import { join } from 'node:path';
import t from 'tap';
import type { ResourceKind } from '../../src/api/meta.js';
import {
  ApiNotReadyError,
  checkClusterApi,
  pollUntilReady,
} from '../../src/cli/check/api-check.js';
import { runCheck } from '../../src/cli/check/check-command.js';
import { StoreError } from '../../src/store/errors.js';
import { CONTROLLER_TOKEN, startCluster } from '../support/cluster-harness.js';
import { runInProcess } from '../support/in-process-command.js';
import { startPlugin } from '../support/plugin-harness.js';
import { tempDir } from '../support/temp-dir.js';

// `cert-csi check api` (cmctl check api): exit 0 and cmctl's line when the API works.

t.test('cluster: ready for a user who may list requests; not for one who may not', async (t) => {
  const cluster = await startCluster(t);
  const admin = await cluster.kubeconfigFile(cluster.server.adminToken);
  const ready = await runInProcess(runCheck, ['api', '--kubeconfig', admin]);
  t.equal(ready.code, 0, ready.stderr);
  t.equal(ready.stdout, 'The cert-manager API is ready\n');
  // The controller's RBAC (deploy/manifests/rbac-controller.yaml) lists requests cluster-wide.
  const controller = await cluster.kubeconfigFile(CONTROLLER_TOKEN);
  const asController = await runInProcess(runCheck, [
    'api',
    '--kubeconfig',
    controller,
    '-n',
    'sandbox',
  ]);
  t.equal(asController.code, 0, asController.stderr);
  // A token the server does not know: refused, one line, after a --wait that has passed.
  const stranger = await cluster.kubeconfigFile('nobody-knows-this-token');
  const refused = await runInProcess(runCheck, ['api', '--kubeconfig', stranger]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /^cert-csi check api: not ready: [^\n]+\nsee cert-csi check --help\n$/);
  t.notMatch(refused.stderr, /nobody-knows-this-token/, 'the token is not shown');
});

t.test('embedded: ready when the plugin answers', async (t) => {
  const plugin = await startPlugin(t, { controllers: { select: [] } });
  const ready = await runInProcess(runCheck, ['api', '--data-root', plugin.dataRoot.root]);
  t.equal(ready.code, 0, ready.stderr);
  t.equal(ready.stdout, 'The cert-manager API is ready\n');
  const empty = await tempDir(t, 'cert-csi-check-');
  const none = await runInProcess(runCheck, ['api', '--data-root', empty]);
  t.equal(none.code, 1);
  t.equal(
    none.stderr,
    `cert-csi check api: not ready: no plugin answers at ${join(empty, '..control.sock')} (no socket there): is cert-csi node running with --data-root ${empty}?\nsee cert-csi check --help\n`,
  );
  // --wait: tried again until the wait has passed (a few milliseconds here), then the same line.
  const waited = await runInProcess(runCheck, [
    'api',
    '--data-root',
    empty,
    '--wait',
    '20ms',
    '--interval',
    '5ms',
  ]);
  t.equal(waited.code, 1);
  t.equal(waited.stderr, none.stderr);
});

t.test('the cluster check: each kind served in v1, then a list', async (t) => {
  const asked: string[] = [];
  const store = (served: (kind: ResourceKind) => string | undefined, listFails = false) => ({
    servedVersion: async (kind: ResourceKind) => {
      asked.push(kind.plural);
      return served(kind);
    },
    list: async () => {
      if (listFails) throw new StoreError('Forbidden', 'certificaterequests is forbidden');
      return { items: [], resourceVersion: '1' };
    },
  });
  await checkClusterApi(
    store(() => 'v1'),
    'default',
  );
  t.same(asked, ['certificates', 'certificaterequests', 'issuers', 'clusterissuers']);
  await t.rejects(
    checkClusterApi(
      store(() => undefined),
      'default',
    ),
    new ApiNotReadyError(
      'certificates.cert-manager.io/v1 is not served: are the CRDs installed (deploy/manifests/crds.yaml)?',
    ),
  );
  await t.rejects(
    checkClusterApi(
      store((k) => (k.plural === 'issuers' ? 'v1alpha2' : 'v1')),
      'default',
    ),
    {
      message:
        'issuers.cert-manager.io/v1 is not served (only v1alpha2): are the CRDs installed (deploy/manifests/crds.yaml)?',
    },
  );
  await t.rejects(
    checkClusterApi(
      store(() => 'v1', true),
      'default',
    ),
    { message: /forbidden/ },
  );
});

t.test('--wait: again every --interval until ready or the wait has passed', async (t) => {
  let clock = 0;
  const slept: number[] = [];
  const polling = (waitMs: number) => ({
    waitMs,
    intervalMs: 5000,
    now: () => clock,
    sleep: async (ms: number) => {
      slept.push(ms);
      clock += ms;
    },
  });
  const failingTimes = (n: number) => {
    let calls = 0;
    return async () => {
      calls++;
      if (calls <= n) throw new Error(`not yet ${calls}`);
    };
  };
  await pollUntilReady(failingTimes(0), polling(0));
  t.same(slept, [], 'ready at once: no wait');
  await t.rejects(
    pollUntilReady(failingTimes(1), polling(0)),
    { message: 'not yet 1' },
    'no --wait: once',
  );
  clock = 0;
  await pollUntilReady(failingTimes(2), polling(60_000));
  t.same(slept, [5000, 5000], 'ready on the third try');
  clock = 0;
  slept.length = 0;
  await t.rejects(pollUntilReady(failingTimes(99), polling(12_000)), { message: 'not yet 4' });
  t.same(slept, [5000, 5000, 2000], 'the last sleep ends at the wait, the last failure thrown');
});

t.test('check: a command line it cannot use', async (t) => {
  const cases: Array<[string[], string]> = [
    [['--kubeconfig', '/k'], 'what to check: cert-csi check api'],
    [['certificate', '--kubeconfig', '/k'], 'what to check: cert-csi check api'],
    [
      ['api'],
      'give --kubeconfig FILE (a cluster) or --data-root DIR (the embedded plugin), one of them',
    ],
    [
      ['api', '--data-root', '/d', '-n', 'x'],
      '--namespace: only used with --kubeconfig or --context',
    ],
    [['api', '--data-root', '/d', '--wait', 'soon'], '--wait: time: invalid duration "soon"'],
    [
      ['api', '--data-root', '/d', '--interval', '0s'],
      '--interval: must be positive and at most 596h, got "0s"',
    ],
    [['api', '--kubeconfig', '/nonexistent/kubeconfig'], ''],
  ];
  for (const [args, line] of cases) {
    const result = await runInProcess(runCheck, args);
    t.equal(result.code, 2, args.join(' '));
    if (line === '') t.match(result.stderr, /^cert-csi check: .+\nsee cert-csi check --help\n$/);
    else
      t.equal(
        result.stderr,
        `cert-csi check: ${line}\nsee cert-csi check --help\n`,
        args.join(' '),
      );
  }
});
