import { once } from 'node:events';
import { connect } from 'node:net';
import type { TLSSocket } from 'node:tls';
import t, { type Test } from 'tap';
import {
  type AdmissionDecision,
  AdmissionWebhookServer,
} from '../../../src/admission/webhook/admission-server.js';
import type { AdmissionServerLimits } from '../../../src/admission/webhook/server-limits.js';
import { DEFAULT_SERVER_LIMITS } from '../../../src/admission/webhook/server-limits.js';
import { until } from '../../support/eventually.js';
import { importedUrl, moduleFileUrl } from '../../support/project-files.js';
import { recordingLogger } from '../../support/recording-logger.js';
import { VALID_CERTIFICATE_REVIEW } from '../../support/webhook-child.js';
import {
  attackerConnection,
  bodyChunk,
  chunkedPostHead,
  httpsRequest,
  servingCertificate,
} from '../../support/webhook-tls.js';

// The bounds of AdmissionWebhookServer, each on a server of its own with limits small enough
// to reach in a test. The attacks at the default limits, against a server in a child process
// with a small heap, are in webhook-attack-*.test.ts.

const { issued, serving } = await servingCertificate();
t.teardown(() => serving.stop());

type Answer = (body: unknown) => AdmissionDecision;

async function startServer(
  t: Test,
  limits: Partial<AdmissionServerLimits>,
  answer: Answer = () => ({ allowed: true }),
) {
  const logger = recordingLogger();
  const server = await AdmissionWebhookServer.start({
    handlers: { validate: async (r) => answer(r), mutate: async (r) => answer(r) },
    certificate: issued,
    logger,
    port: 0,
    host: '127.0.0.1',
    limits,
    drainMs: 100,
  });
  t.teardown(() => server.close());
  const post = (body: string) =>
    httpsRequest(server.port, issued.caPem, { path: '/validate', body });
  return { server, logger, post };
}

/** Everything the server writes on socket until it closes it, and when it closed. */
function untilClosed(socket: TLSSocket): Promise<{ text: string; closedAt: number }> {
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return once(socket, 'close').then(() => ({ text, closedAt: performance.now() }));
}

/** VALID_CERTIFICATE_REVIEW with an annotation of padding bytes, to make it large. */
function paddedReview(padding: number): string {
  const review = JSON.parse(VALID_CERTIFICATE_REVIEW);
  review.request.object.metadata.annotations = { padding: 'p'.repeat(padding) };
  return JSON.stringify(review);
}

t.test('the defaults: a stalled connection is closed within 30 s of opening', async (t) => {
  const d = DEFAULT_SERVER_LIMITS;
  t.ok(d.headersTimeoutMs <= d.requestTimeoutMs, 'Node requires headers ≤ request timeout');
  t.ok(
    d.handshakeTimeoutMs + d.requestTimeoutMs + d.timeoutCheckIntervalMs <= 30_000,
    'handshake, then the whole request, then at most one check interval',
  );
  t.ok(d.requestTimeoutMs <= 10_000, 'no longer than the API server waits (timeoutSeconds 10)');
  t.ok(d.maxBodyBytes >= 3 * 1024 * 1024, 'every review kube-apiserver can send fits');
});

t.test('a body streamed past the size limit is refused with 413 as it arrives', async (t) => {
  const { server, logger } = await startServer(t, { maxBodyBytes: 50_000 });
  const socket = await attackerConnection(server.port);
  const closed = untilClosed(socket);
  socket.write(chunkedPostHead('/validate'));
  // One byte too many, in one chunk: the server reads all of it before it answers.
  socket.write(bodyChunk(' '.repeat(50_001)));
  const { text } = await closed;
  t.match(text, /^HTTP\/1\.1 413 /);
  t.match(text, /connection: close/i);
  t.match(text, /the review is larger than 50000 bytes/);
  t.match(logger.records, [['warn', { code: 413 }, 'admission review refused']]);
});

t.test('bodies past their allowance share a budget: a full one refuses with 503', async (t) => {
  const { server, post } = await startServer(t, {
    bodyAllowanceBytes: 4_096,
    sharedBodyBytes: 20_000,
  });
  // A first large body, held incomplete: 16 000 bytes of it count against the budget.
  const holder = await attackerConnection(server.port);
  const holderClosed = untilClosed(holder);
  holder.write(chunkedPostHead('/validate'));
  holder.write(bodyChunk(`{"pad":"${'p'.repeat(20_000)}`));
  await until(async () => {
    const res = await post(paddedReview(8_000));
    return res.status === 503 ? res : undefined;
  }).then((res) => {
    t.match(res.text, 'the webhook holds as many large reviews as it can at once: retry');
    t.equal(res.headers['retry-after'], '1');
    t.equal(res.headers.connection, 'close');
  });
  const small = await post(VALID_CERTIFICATE_REVIEW);
  t.equal(small.status, 200, 'a review within its allowance is served all the same');
  holder.destroy();
  await holderClosed;
  // Given back: large bodies are served again, one after the other (each gives its share back).
  for (let i = 0; i < 3; i++) {
    const res = await until(async () => {
      const answer = await post(paddedReview(15_000));
      return answer.status === 200 ? answer : undefined;
    });
    t.equal(JSON.parse(res.text).response.allowed, true, `large review ${i} served`);
  }
});

t.test(
  'a body nested too deep, or too wide, is refused unparsed from its first bytes',
  async (t) => {
    const { server, post, logger } = await startServer(t, {
      json: { maxDepth: 4, maxContainers: 8, maxEntries: 5 },
    });
    const cases: Array<[string, string, string]> = [
      ['deep', '{"a":[[[[1]]]]}', 'the body nests deeper than 4 levels: refused unparsed'],
      [
        'many containers',
        '[[{},{}],[{},{}],[{}]]',
        'the body holds more than 8 objects and arrays: refused unparsed',
      ],
      [
        'a wide object',
        '{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}',
        'the body has an object or array of more than 5 entries: refused unparsed',
      ],
    ];
    for (const [what, body, message] of cases) {
      const res = await post(body);
      t.equal(res.status, 400, what);
      t.equal(res.headers.connection, 'close', what);
      t.equal(res.text, `${message}\n`, what);
    }
    t.match(logger.records, [['warn', { code: 400 }, 'admission review refused']]);
    // Sent in chunks and never finished: refused after the first, the connection closed.
    const socket = await attackerConnection(server.port);
    const closed = untilClosed(socket);
    socket.write(chunkedPostHead('/validate'));
    socket.write(bodyChunk('[[[[['));
    const { text } = await closed;
    t.match(text, /^HTTP\/1\.1 400 [\s\S]*nests deeper than 4 levels/);
  },
);

t.test('stalled connections are closed at each stage; reviews are served meanwhile', async (t) => {
  const { server, post, logger } = await startServer(t, {
    handshakeTimeoutMs: 400,
    headersTimeoutMs: 400,
    requestTimeoutMs: 800,
    keepAliveTimeoutMs: 400,
    timeoutCheckIntervalMs: 100,
  });
  const opened = performance.now();
  const tcp = connect(server.port, '127.0.0.1');
  tcp.on('error', () => {});
  const tcpClosed = once(tcp, 'close').then(() => performance.now());
  const idle = await attackerConnection(server.port);
  const partialHeaders = await attackerConnection(server.port);
  partialHeaders.write('POST /validate HTTP/1.1\r\nHost: webhook\r\n');
  const partialBody = await attackerConnection(server.port);
  partialBody.write(
    'POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":',
  );
  const trickle = await attackerConnection(server.port);
  trickle.write(chunkedPostHead('/validate'));
  const drip = setInterval(() => trickle.write(bodyChunk('[1,')), 50);
  t.teardown(() => clearInterval(drip));
  const stalled = [idle, partialHeaders, partialBody, trickle].map(untilClosed);
  t.equal((await post(VALID_CERTIFICATE_REVIEW)).status, 200, 'a review meanwhile');
  const results = await Promise.all(stalled);
  const closedAfter = [await tcpClosed, ...results.map((r) => r.closedAt)].map((at) => at - opened);
  for (const [i, ms] of closedAfter.entries()) {
    // The limits add up to 1.3 s; the slack is for a busy machine.
    t.ok(ms < 10_000, `stalled connection ${i} closed after ${Math.round(ms)} ms`);
  }
  t.match(results[2]?.text, /^HTTP\/1\.1 408 /, 'a body not received in time: 408');
  t.match(results[3]?.text, /^HTTP\/1\.1 408 /, 'nor one dripping in');
  t.equal(
    logger.records.filter(([, , msg]) => msg === 'admission review').length,
    1,
    'none of them reached a handler: only the review meanwhile did',
  );
});

t.test('a client that goes away mid-body is logged; nothing else happens', async (t) => {
  const { server, logger, post } = await startServer(t, {});
  const socket = await attackerConnection(server.port);
  // 100 Continue says the server took the request and waits for its body.
  socket.write(
    chunkedPostHead('/validate').replace('\r\n\r\n', '\r\nExpect: 100-continue\r\n\r\n'),
  );
  await once(socket, 'data');
  socket.write(bodyChunk('{"apiVersion":'));
  socket.destroy();
  await until(() =>
    logger.records.find(
      ([, fields]) =>
        (fields as { error?: string }).error === 'the request ended before its body did',
    ),
  );
  t.equal((await post(VALID_CERTIFICATE_REVIEW)).status, 200);
});

t.test('connections past the limit are closed at once, and logged', async (t) => {
  const { server, logger, post } = await startServer(t, { maxConnections: 3 });
  const held = await Promise.all([1, 2, 3].map(() => attackerConnection(server.port)));
  await t.rejects(attackerConnection(server.port), 'the fourth is closed before its handshake');
  await t.rejects(attackerConnection(server.port), 'and the fifth');
  const drops = logger.records.filter(
    ([, , msg]) => msg === 'connection limit reached: new connections are closed',
  );
  t.match(drops, [['warn', { maxConnections: 3, dropped: 1 }]], 'logged once, not per drop');
  held[0]?.destroy();
  const res = await until(() => post(VALID_CERTIFICATE_REVIEW).catch(() => undefined));
  t.equal(res.status, 200, 'a slot freed serves again');
});

t.test('answers are bounded; one that cannot be written is a 500, not a crash', async (t) => {
  let answer: Answer = () => ({
    allowed: false,
    code: 406,
    reason: 'NotAcceptable',
    message: `spec: ${'é'.repeat(50_000)}`,
  });
  const { post, logger } = await startServer(t, {}, (r) => answer(r));
  const res = await post(VALID_CERTIFICATE_REVIEW);
  const message: string = JSON.parse(res.text).response.status.message;
  t.ok(Buffer.byteLength(message) <= 16 * 1024, `${Buffer.byteLength(message)} bytes`);
  t.match(message, /^spec: é+…\(\d+ more bytes left out\)$/);
  // BigInt has no JSON form: the patch cannot be written.
  answer = () => ({ allowed: true, patch: [{ op: 'add', path: '/x', value: 1n }] });
  const failed = await post(VALID_CERTIFICATE_REVIEW);
  t.equal(failed.status, 500);
  t.equal(failed.text, 'internal error: the webhook failed to answer; its log has the cause\n');
  t.match(logger.records.at(-1), ['error', { errorType: 'TypeError' }, 'admission request failed']);
  answer = () => ({ allowed: true });
  t.equal((await post(VALID_CERTIFICATE_REVIEW)).status, 200, 'and the server lives on');
});

t.test('a large review is parsed in a turn of its own and answered as any other', async (t) => {
  const { post } = await startServer(t, {});
  const reviews = await Promise.all(
    [200_000, 300_000, 100].map((size) => post(paddedReview(size))),
  );
  t.same(
    reviews.map((r) => [r.status, JSON.parse(r.text).response.allowed]),
    [
      [200, true],
      [200, true],
      [200, true],
    ],
  );
  const notJson = await post(`{"padding":"${'p'.repeat(100_000)}",`);
  t.equal(notJson.text, 'malformed AdmissionReview: the body is not valid JSON\n');
});

t.test('a fault while a review is read is a 500 without its cause, and logged', async (t) => {
  const review = await import('../../../src/api/admission-review.js');
  const { AdmissionWebhookServer: Mocked } = await t.mockImport<
    typeof import('../../../src/admission/webhook/admission-server.js')
  >(moduleFileUrl('src/admission/webhook/admission-server.ts'), {
    [importedUrl('src/api/admission-review.ts')]: {
      ...review,
      readAdmissionReview: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'uid')");
      },
    },
  });
  const logger = recordingLogger();
  const server = await Mocked.start({
    handlers: {
      validate: async () => ({ allowed: true }),
      mutate: async () => ({ allowed: true }),
    },
    certificate: issued,
    logger,
    port: 0,
    host: '127.0.0.1',
  });
  t.teardown(() => server.close());
  const res = await httpsRequest(server.port, issued.caPem, {
    path: '/validate',
    body: VALID_CERTIFICATE_REVIEW,
  });
  t.equal(res.status, 500);
  t.equal(res.text, 'internal error: the webhook failed to answer; its log has the cause\n');
  t.match(logger.records, [
    [
      'error',
      { errorType: 'TypeError', error: "Cannot read properties of undefined (reading 'uid')" },
      'admission request failed',
    ],
  ]);
});

t.test('a failure after the answer went out cuts nothing else: the server lives on', async (t) => {
  const logger = recordingLogger();
  // A log destination that fails (a full pipe, say) while the review is logged, after its answer.
  const failing = {
    ...logger,
    info: (o: object, m?: string) => {
      if (m === 'admission review') throw new Error('log pipe is full');
      logger.info(o, m);
    },
  };
  const server = await AdmissionWebhookServer.start({
    handlers: {
      validate: async () => ({ allowed: true }),
      mutate: async () => ({ allowed: true }),
    },
    certificate: issued,
    logger: failing,
    port: 0,
    host: '127.0.0.1',
  });
  t.teardown(() => server.close());
  const post = () =>
    httpsRequest(server.port, issued.caPem, { path: '/validate', body: VALID_CERTIFICATE_REVIEW });
  const res = await post();
  t.equal(res.status, 200, 'the answer was out before the failure');
  t.match(logger.records, [['error', { error: 'log pipe is full' }, 'admission request failed']]);
  t.equal((await post()).status, 200);
});
