// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { until } from '../support/eventually.js';
import { rejectsWith } from '../support/grpc-assert.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

// 127.0.0.1 stands in for the pod's IP (embedded mode: csi.storage.k8s.io/pod.ips).
t.test('reload-url: one POST per rewrite; a slow or failing endpoint delays nothing', async (t) => {
  const posts: string[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    posts.push(`${req.method} ${req.url}`);
    if (req.url === '/slow') held.push(res);
    else if (req.url === '/fail') res.writeHead(500).end();
    else if (req.url === '/moved') res.writeHead(307, { location: '/-/reload' }).end();
    else res.writeHead(200).end('reloaded');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const res of held) res.destroy();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  const p = await startPlugin(t, {
    reloadHttp: { timeoutMs: 30_000, attempts: 2, backoffMs: 1 },
  });
  const volume = (path: string) =>
    embeddedCA({
      'csi.cert-manager.io/key-algorithm': 'ECDSA',
      'csi.cert-manager.io/reload-url': `http://\${POD_IP}:${port}${path}`,
    });
  const pod = { pod: { 'csi.storage.k8s.io/pod.ips': '127.0.0.1' } };
  await p.publish('csi-app', volume('/-/reload'), pod);
  await p.publish('csi-slow', volume('/slow'), pod);
  await p.publish('csi-fail', volume('/fail'), pod);
  await p.publish('csi-moved', volume('/moved'), pod);
  t.same(posts, [], 'a first issuance tells nobody: the application is not running yet');

  // The slow endpoint holds its request open (30 s timeout): its renewal and the others end anyway.
  t.equal((await p.manager.renewNow({ volumeId: 'csi-slow' })).renewed.length, 1);
  await until(() => held.length === 1, { what: 'the slow POST' });
  for (let i = 0; i < 2; i++) {
    t.equal((await p.manager.renewNow({ volumeId: 'csi-app' })).renewed.length, 1, 'renewed');
  }
  await until(() => posts.filter((x) => x === 'POST /-/reload').length === 2, {
    what: 'two POSTs while the slow one is still held',
  });
  t.equal(held.length, 1, 'the slow POST is still unanswered');

  t.equal((await p.manager.renewNow({ volumeId: 'csi-fail' })).renewed.length, 1);
  t.equal((await p.manager.renewNow({ volumeId: 'csi-moved' })).renewed.length, 1);
  const warnings = await until(
    () => {
      const found = p.events.all().filter((e) => e.reason === 'CertificateReloadFailed');
      return found.length === 2 && found;
    },
    { what: 'two Warning Events' },
  );
  t.same(
    warnings.map((e) => [e.type, e.name, e.message]).sort(),
    [
      [
        'Warning',
        'app-0',
        'volume csi-fail: http reload not sent: answered HTTP 500 (after 2 attempts)',
      ],
      [
        'Warning',
        'app-0',
        'volume csi-moved: http reload not sent: answered HTTP 307 (after 2 attempts)',
      ],
    ],
    'a failing endpoint and a redirect: a Warning each, after the bounded attempts',
  );
  t.equal(posts.filter((x) => x === 'POST /fail').length, 2, 'two attempts, no more');
  t.equal(posts.filter((x) => x === 'POST /moved').length, 2, 'the redirect is never followed');
  t.equal(posts.filter((x) => x === 'POST /-/reload').length, 2, 'one POST per rewrite');
  t.equal(
    p.events.all().filter((e) => e.reason === 'CertificateReloadRequested' && e.type === 'Normal')
      .length,
    2,
    'a Normal Event per POST that reached the application',
  );
});

t.test('stopping the plugin cancels the POST in flight and every retry', async (t) => {
  const posts: string[] = [];
  const closed: string[] = [];
  const server = createServer((req, res) => {
    posts.push(`${req.method} ${req.url}`);
    // /hang never answers; /fail fails, so a retry is waiting when the plugin stops.
    if (req.url === '/fail') res.writeHead(503).end();
    req.socket.once('close', () => closed.push(req.url ?? ''));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  // Long timeout and backoff: without the cancel the hang would be held 60 s and the retry
  // would come 300 ms after the failure.
  const p = await startPlugin(t, {
    reloadHttp: { timeoutMs: 60_000, attempts: 3, backoffMs: 300 },
  });
  const pod = { pod: { 'csi.storage.k8s.io/pod.ips': '127.0.0.1' } };
  for (const path of ['/hang', '/fail']) {
    await p.publish(
      `csi${path.replace('/', '-')}`,
      embeddedCA({
        'csi.cert-manager.io/key-algorithm': 'ECDSA',
        'csi.cert-manager.io/reload-url': `http://\${POD_IP}:${port}${path}`,
      }),
      pod,
    );
  }
  t.equal((await p.manager.renewNow({ volumeId: 'csi-hang' })).renewed.length, 1);
  t.equal((await p.manager.renewNow({ volumeId: 'csi-fail' })).renewed.length, 1);
  await until(() => posts.includes('POST /hang') && posts.includes('POST /fail'), {
    what: 'the first attempt of both POSTs',
  });
  await p.manager.stop();
  await until(() => closed.includes('/hang'), { what: 'the hanging POST cut by stop' });
  const seen = posts.length;
  // Twice the whole backoff (300 + 600 ms): a retry that survived stop would have come.
  await new Promise((resolve) => setTimeout(resolve, 1_800));
  t.equal(posts.length, seen, `no POST after stop (${posts.join(', ')})`);
  t.same(
    p.events.all().filter((e) => e.reason === 'CertificateReloadFailed'),
    [],
    'a notification cut by the stop is no failure of the application: no Warning',
  );
  t.equal(
    (await p.manager.renewNow({ volumeId: 'csi-fail' }).catch(() => ({ renewed: [] }))).renewed
      .length,
    0,
    'and a stopped manager renews nothing',
  );
});

t.test(
  'a URL to anywhere but the pod, or signals the node does not serve, refuse the publish',
  async (t) => {
    const p = await startPlugin(t);
    await rejectsWith(
      t,
      p.publish(
        'csi-elsewhere',
        embeddedCA({ 'csi.cert-manager.io/reload-url': 'http://10.0.0.9/r' }),
      ),
      status.INVALID_ARGUMENT,
      /reload-url: Invalid value: "http:\/\/10.0.0.9\/r": must be http:\/\/\$\{POD_IP\}/,
    );
    await rejectsWith(
      t,
      p.publish('csi-no-pid-file', embeddedCA({ 'csi.cert-manager.io/reload-signal': 'HUP' })),
      status.INVALID_ARGUMENT,
      /reload-signal needs reload-pid-file in embedded mode/,
    );
    t.same(await p.requests(), [], 'no CertificateRequest for a refused volume');
  },
);
