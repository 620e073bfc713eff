import { once } from 'node:events';
import { request } from 'node:https';
import { type AddressInfo, createServer } from 'node:net';
import t from 'tap';
import { runCommand, USAGE } from '../../src/cli/commands.js';
import type { Webhook } from '../../src/cli/webhook/webhook.js';
import { runWebhook } from '../../src/cli/webhook/webhook-command.js';
import { WEBHOOK_HELP, WEBHOOK_OPTIONS } from '../../src/cli/webhook/webhook-flags.js';
import { rejectionMessage, until } from '../support/eventually.js';
import { startWebhookCluster, WEBHOOK_TOKEN } from '../support/webhook-cluster.js';
import { httpsRequest } from '../support/webhook-tls.js';

// A kubeconfig that does not exist: a flag refused before it is read says so, not "no such file".
const NO_KUBECONFIG = ['--kubeconfig', '/nonexistent/kubeconfig', '--namespace', 'cert-csi'];

t.test('help documents every flag with its default, and the command is listed', async (t) => {
  for (const flag of Object.keys(WEBHOOK_OPTIONS)) t.match(WEBHOOK_HELP, `--${flag}`, flag);
  for (const shown of [
    '(default 10250; 0 picks a free one)',
    '(default: $POD_NAMESPACE)',
    '(default cert-csi-webhook)',
    '(default cert-csi-webhook-ca)',
    'and retried (default 5s)',
    '(default 5s)',
  ]) {
    t.match(WEBHOOK_HELP, shown);
  }
  t.match(USAGE, /^ {2}webhook {5}serve cert-manager's admission webhook/m);
  const written: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  let code: number;
  try {
    code = await runCommand(['webhook', '--help']);
  } finally {
    process.stdout.write = write;
  }
  t.equal(code, 0);
  t.same(written, [WEBHOOK_HELP]);
});

t.test('bad flag values are refused, naming the flag, before the kubeconfig is read', async (t) => {
  const long = 'x'.repeat(300);
  const cases: Array<[string[], string]> = [
    [
      ['--secure-port', 'https'],
      '--secure-port: must be a port number from 0 to 65535, got "https"',
    ],
    [
      ['--secure-port', '65536'],
      '--secure-port: must be a port number from 0 to 65535, got "65536"',
    ],
    [['--secure-port=-1'], '--secure-port: must be a port number from 0 to 65535, got "-1"'],
    [
      ['--namespace', 'Cert_CSI'],
      `--namespace: "Cert_CSI" is not valid: a lowercase RFC 1123 label must consist`,
    ],
    [
      ['--service-name', '1webhook'],
      '--service-name: "1webhook" is not valid: a DNS-1035 label must consist',
    ],
    [
      ['--service-name', long],
      `--service-name: "${'x'.repeat(100)}"…(300 characters) is not valid`,
    ],
    [
      ['--ca-secret-name', 'CA'],
      '--ca-secret-name: "CA" is not valid: a lowercase RFC 1123 subdomain',
    ],
    [
      ['--validating-webhook-configuration', 'a b'],
      '--validating-webhook-configuration: "a b" is not valid',
    ],
    [
      ['--mutating-webhook-configuration=-x'],
      '--mutating-webhook-configuration: "-x" is not valid',
    ],
    [['--log-level', 'loud'], '--log-level: unknown level "loud"'],
    [['--kube-api-qps', '0'], '--kube-api-qps: must be a number > 0, got "0"'],
    [
      ['--kube-api-timeout', '0s'],
      '--kube-api-timeout: must be positive and at most 596h, got "0s"',
    ],
    [['--shutdown-delay', 'soon'], '--shutdown-delay: '],
    [['--shutdown-delay=-1s'], '--shutdown-delay: must be zero or more, got "-1s"'],
  ];
  for (const [args, message] of cases) {
    t.match(
      await rejectionMessage(runWebhook([...NO_KUBECONFIG, ...args])),
      message,
      args.join(' '),
    );
  }
  const saved = process.env.POD_NAMESPACE;
  delete process.env.POD_NAMESPACE;
  t.teardown(() => {
    if (saved !== undefined) process.env.POD_NAMESPACE = saved;
  });
  t.equal(
    await rejectionMessage(runWebhook(['--kubeconfig', '/nonexistent/kubeconfig'])),
    '--namespace: not given and POD_NAMESPACE is not set: the webhook must know the namespace of its Service and CA Secret',
  );
  process.env.POD_NAMESPACE = 'Not_A_Label';
  t.match(
    await rejectionMessage(runWebhook(['--kubeconfig', '/nonexistent/kubeconfig'])),
    '--namespace: "Not_A_Label" is not valid',
    'POD_NAMESPACE is checked like the flag',
  );
  t.match(
    await rejectionMessage(runWebhook(NO_KUBECONFIG)),
    '/nonexistent/kubeconfig',
    'valid flags: then the kubeconfig is read',
  );
});

t.test('`cert-csi webhook` serves until SIGTERM, then closes and exits 0', async (t) => {
  const w = await startWebhookCluster(t);
  const kubeconfig = await w.cluster.kubeconfigFile(WEBHOOK_TOKEN);
  let terminate: () => void = () => {};
  const terminated = new Promise<void>((resolve) => {
    terminate = resolve;
  });
  let running: Webhook | undefined;
  const exit = runWebhook(
    [
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      'cert-csi',
      '--secure-port',
      '0',
      '--shutdown-delay',
      '0s',
      '--log-level',
      'silent',
    ],
    () => terminated,
    (webhook) => {
      running = webhook;
    },
  );
  const webhook = await until(() => running, { what: 'the webhook to start' });
  await until(() => webhook.ready(), { what: 'the webhook to be ready' });
  const bundle = webhook.bundlePem() ?? '';
  const live = await httpsRequest(webhook.port, bundle, { method: 'GET', path: '/readyz' });
  t.equal(live.status, 200, 'ready over TLS, verified as the API server does');
  terminate();
  t.equal(await exit, 0);
  const refused = await new Promise<string>((resolve) => {
    const req = request({ host: '127.0.0.1', port: webhook.port, rejectUnauthorized: false });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    req.on('response', () => resolve('answered'));
    req.end();
  });
  t.equal(refused, 'ECONNREFUSED', 'the listener is closed');
});

t.test(
  'without configurations to keep it is ready at once; $KUBECONFIG and --context are used',
  async (t) => {
    const w = await startWebhookCluster(t);
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = await w.cluster.kubeconfigFile(WEBHOOK_TOKEN);
    t.teardown(() => {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    });
    let terminate: () => void = () => {};
    const terminated = new Promise<void>((resolve) => {
      terminate = resolve;
    });
    let running: Webhook | undefined;
    const exit = runWebhook(
      [
        '--context',
        'fake',
        '--namespace',
        'cert-csi',
        '--secure-port=0',
        '--validating-webhook-configuration=',
        '--mutating-webhook-configuration=',
        '--shutdown-delay=0s',
        '--log-level=silent',
      ],
      () => terminated,
      (webhook) => {
        running = webhook;
      },
    );
    const webhook = await until(() => running, { what: 'the webhook to start' });
    t.ok(webhook.ready(), 'ready: no caBundle to wait for');
    terminate();
    t.equal(await exit, 0);
    const writes = w.cluster.server.requests.filter(
      (r) =>
        r.resource?.endsWith('webhookconfigurations') &&
        r.user !== undefined &&
        r.verb !== 'create',
    );
    t.same(
      writes.map((r) => `${r.verb} ${r.resource}`),
      [],
      'the configurations were left alone',
    );
  },
);

t.test('a port in use fails the start, naming it', async (t) => {
  const w = await startWebhookCluster(t);
  const blocker = createServer();
  blocker.listen(0);
  await once(blocker, 'listening');
  t.teardown(() => blocker.close());
  const port = (blocker.address() as AddressInfo).port;
  const message = await rejectionMessage(
    runWebhook([
      '--kubeconfig',
      await w.cluster.kubeconfigFile(WEBHOOK_TOKEN),
      '--namespace',
      'cert-csi',
      `--secure-port=${port}`,
      '--log-level=silent',
    ]),
  );
  t.match(message, 'EADDRINUSE');
  t.match(message, String(port));
});
