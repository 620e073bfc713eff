import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { DataRoot } from '../../src/volume/data-root.js';
import { ANSWER_LINE_MAX_BYTES } from '../../src/volume-manager/control/control-answers.js';
import {
  askCertificateRenew,
  askRenew,
  askStatus,
  ControlError,
} from '../../src/volume-manager/control/control-client.js';
import { controlSocketOf } from '../../src/volume-manager/control/control-protocol.js';
import { tempDir } from '../support/temp-dir.js';

// `cert-csi renew` and `status`'s side against plugins that misbehave: each a socket server of
// the test's making at the data root's control socket.

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t, 'cert-csi-client-'), 'volumes'));
  await root.ensure();
  return root;
}

/** A fake plugin: onConnection gets each connection (the request is left unread). */
async function fakePlugin(
  t: Test,
  root: DataRoot,
  onConnection: (socket: Socket) => void,
  options: { pauseOnConnect?: boolean } = {},
): Promise<void> {
  const sockets = new Set<Socket>();
  const server = createServer({ pauseOnConnect: options.pauseOnConnect ?? false }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(controlSocketOf(root), resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
}

/** A fake plugin that answers every connection with these lines, then closes. */
const answering = (t: Test, root: DataRoot, ...lines: string[]) =>
  fakePlugin(t, root, (socket) => socket.end(lines.map((l) => `${l}\n`).join('')));

async function failureOf(promise: Promise<unknown>): Promise<[string, string]> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ControlError) return [err.failure, err.detail];
    throw err;
  }
  throw new Error('expected a ControlError');
}

const ACCEPTED = '{"type":"accepted"}';
const DONE = '{"type":"done"}';

t.test('no answer before the deadline: whether the plugin took the request tells', async (t) => {
  const silent = await dataRoot(t);
  await fakePlugin(t, silent, () => undefined);
  t.same(await failureOf(askStatus(silent, { timeoutMs: 200 })), [
    'no-answer',
    'no answer within 200 ms',
  ]);
  const slow = await dataRoot(t);
  await fakePlugin(t, slow, (socket) => socket.write(`${ACCEPTED}\n`));
  t.same(await failureOf(askRenew(slow, { all: true }, { timeoutMs: 200 })), [
    'late',
    'no answer within 200 ms',
  ]);
});

t.test('an answer that cannot be read is an error, not a wait', async (t) => {
  const cases: Array<[string, string[], RegExp]> = [
    ['not JSON', [ACCEPTED, '{"type":'], /^not JSON: /],
    ['an unknown type', ['{"type":"maybe"}'], /^type "maybe": not an answer$/],
    [
      'a line of another request',
      [ACCEPTED, '{"type":"triggered","namespace":"a","name":"b","alreadyIssuing":false}', DONE],
      /^a triggered line is no answer to this request$/,
    ],
  ];
  for (const [what, lines, detail] of cases) {
    const root = await dataRoot(t);
    await answering(t, root, ...lines);
    const [failure, message] = await failureOf(
      askRenew(root, { all: true }, { timeoutMs: 60_000 }),
    );
    t.equal(failure, 'unreadable', what);
    t.match(message, detail, what);
  }
  const certificate = await dataRoot(t);
  await answering(t, certificate, ACCEPTED, DONE);
  t.same(
    await failureOf(
      askCertificateRenew(certificate, { namespace: 'a', name: 'b' }, { timeoutMs: 60_000 }),
    ),
    ['unreadable', 'it names no Certificate'],
  );
  const twice = await dataRoot(t);
  const triggered = '{"type":"triggered","namespace":"a","name":"b","alreadyIssuing":false}';
  await answering(t, twice, ACCEPTED, triggered, triggered, DONE);
  t.same(
    await failureOf(
      askCertificateRenew(twice, { namespace: 'a', name: 'b' }, { timeoutMs: 60_000 }),
    ),
    ['unreadable', 'a triggered line is no answer to this request'],
  );
  const status = await dataRoot(t);
  await answering(t, status, ACCEPTED, '{"type":"renewed","volumeId":"a","notAfter":"x"}', DONE);
  t.same(await failureOf(askStatus(status, { timeoutMs: 60_000 })), [
    'unreadable',
    'a renewed line is no answer to this request',
  ]);
  // A volume whose renewal is asked for belongs to a status answer, not to a renewal's.
  const renewal = await dataRoot(t);
  await answering(t, renewal, ACCEPTED, '{"type":"renewal-asked","volumeId":"csi-a"}', DONE);
  t.same(await failureOf(askRenew(renewal, { all: true }, { timeoutMs: 60_000 })), [
    'unreadable',
    'a renewal-asked line is no answer to this request',
  ]);
});

t.test('an answer larger than the client reads is dropped at its cap', async (t) => {
  const long = await dataRoot(t);
  await fakePlugin(t, long, (socket) =>
    socket.end(`{"type":"error","error":"${'x'.repeat(ANSWER_LINE_MAX_BYTES)}"}\n`),
  );
  t.same(await failureOf(askStatus(long, { timeoutMs: 60_000 })), [
    'unreadable',
    'a line is longer than 1 MiB, the most read for one',
  ]);
  // 65 lines of almost 1 MiB each: every line is fine, all of them are too much.
  const flood = await dataRoot(t);
  const line = `{"type":"accepted"${' '.repeat(ANSWER_LINE_MAX_BYTES - 20)}}\n`;
  await fakePlugin(t, flood, (socket) => {
    for (let i = 0; i < 65; i++) socket.write(line);
    socket.end(`${DONE}\n`);
  });
  t.same(await failureOf(askStatus(flood, { timeoutMs: 60_000 })), [
    'unreadable',
    'it is larger than 64 MiB, the most read',
  ]);
});

t.test('the end of the answer is "done": what follows it is not read', async (t) => {
  const root = await dataRoot(t);
  await answering(
    t,
    root,
    ACCEPTED,
    '{"type":"unsaved","volumeId":"csi-a","saveError":"ENOSPC","lastError":{"message":"m","time":"t"}}',
    '{"type":"renewal-asked","volumeId":"csi-b"}',
    ACCEPTED,
    DONE,
    '{"type":"maybe"}',
    '{"type":"renewal-asked","volumeId":"csi-c"}',
  );
  t.same(await askStatus(root, { timeoutMs: 60_000 }), {
    unsaved: [{ volumeId: 'csi-a', saveError: 'ENOSPC', lastError: { message: 'm', time: 't' } }],
    renewalsAsked: ['csi-b'],
  });
});

t.test('a connection that ends or breaks before "done" is a lost answer', async (t) => {
  const ended = await dataRoot(t);
  await answering(t, ended, ACCEPTED, '{"type":"renewed","volumeId":"a","notAfter":"x"}');
  t.same(await failureOf(askRenew(ended, { all: true }, { timeoutMs: 60_000 })), [
    'lost',
    'the plugin closed the connection before its answer was complete',
  ]);
  // Closed with the request unread: the client's next read fails (ECONNRESET).
  const reset = await dataRoot(t);
  await fakePlugin(
    t,
    reset,
    (socket) => {
      setTimeout(() => socket.destroy(), 200);
    },
    { pauseOnConnect: true },
  );
  const [failure, detail] = await failureOf(askRenew(reset, { all: true }, { timeoutMs: 60_000 }));
  t.equal(failure, 'lost');
  t.match(detail, /ECONNRESET|closed the connection/);
});
