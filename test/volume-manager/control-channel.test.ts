import { lstat, readdir, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import t, { type Test } from 'tap';
import type { Logger } from '../../src/api/logger.js';
import { DataRoot } from '../../src/volume/data-root.js';
import {
  askCertificateRenew,
  askRenew,
  askRequestDecision,
  askStatus,
  ControlError,
} from '../../src/volume-manager/control/control-client.js';
import {
  type ControlHandlers,
  NO_CERTIFICATE_STORE_ERROR,
  NO_REQUEST_STORE_ERROR,
} from '../../src/volume-manager/control/control-connection.js';
import {
  CONTROL_SOCKET_NAME,
  controlSocketOf,
  REQUEST_MAX_BYTES,
  type RenewOutcome,
  type RenewTarget,
} from '../../src/volume-manager/control/control-protocol.js';
import {
  type ControlLimits,
  type ControlServer,
  DEFAULT_CONTROL_LIMITS,
  serveControl,
} from '../../src/volume-manager/control/control-server.js';
import { SOCKET_PATH_MAX_BYTES } from '../../src/volume-manager/control/socket-address.js';
import { until } from '../support/eventually.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

// The plugin's side (serveControl) and the CLI's (askRenew, askStatus...) over a real socket in
// a real data root; handlers stand in for the volume manager.

const NOT_AFTER = '2030-01-01T00:00:00.000Z';
const NEXT = '2029-11-01T00:00:00.000Z';
const CALL = { timeoutMs: 30_000 };

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t, 'cert-csi-control-'), 'volumes'));
  await root.ensure();
  return root;
}

/** A handler that records its targets and renews every volume it is given. */
function renewingHandler(): { targets: RenewTarget[]; renew: ControlHandlers['renew'] } {
  const targets: RenewTarget[] = [];
  return {
    targets,
    renew: async (target) => {
      targets.push(target);
      const ids = 'all' in target ? ['csi-a', 'csi-b'] : [target.volumeId];
      return {
        renewed: ids.map((volumeId) => ({ volumeId, notAfter: NOT_AFTER, nextIssuanceTime: NEXT })),
        failed: [],
      };
    },
  };
}

/** Timers holding the process open now: a connection's deadlines among them. */
const pendingTimers = () =>
  process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

async function serve(
  t: Test,
  root: DataRoot,
  handlers: Partial<ControlHandlers> = {},
  options: { logger?: Logger; limits?: Partial<ControlLimits> } = {},
): Promise<ControlServer> {
  const server = await serveControl(
    root,
    {
      renew: renewingHandler().renew,
      unsavedFailures: () => [],
      renewalsAsked: () => [],
      ...handlers,
    },
    options.logger ?? recordingLogger(),
    { ...DEFAULT_CONTROL_LIMITS, ...options.limits },
  );
  t.teardown(() => server.close());
  return server;
}

/**
 * A client of our own making: connects, writes each part, half-closes when told, and resolves
 * with all the server wrote once the connection is closed.
 */
function raw(
  root: DataRoot,
  parts: Array<string | Buffer>,
  options: { end?: boolean } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect(controlSocketOf(root), () => {
      for (const part of parts) socket.write(part);
      if (options.end) socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

async function controlError(promise: Promise<unknown>): Promise<ControlError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ControlError) return err;
    throw err;
  }
  throw new Error('expected a ControlError');
}

t.test(
  'renew one volume or all: the handler gets the target, the client the outcome',
  async (t) => {
    const root = await dataRoot(t);
    const { targets, renew } = renewingHandler();
    await serve(t, root, { renew });
    const info = await lstat(controlSocketOf(root));
    t.ok(info.isSocket(), `${CONTROL_SOCKET_NAME} is a socket in the data root`);
    t.equal(info.mode & 0o777, 0o600, 'mode 0600');
    const started = performance.now();
    const one = await askRenew(root, { volumeId: 'csi-b' }, CALL);
    const elapsed = performance.now() - started;
    t.ok(elapsed < 1000, `answered in ${elapsed.toFixed(0)} ms`);
    t.same(one, {
      renewed: [{ volumeId: 'csi-b', notAfter: NOT_AFTER, nextIssuanceTime: NEXT }],
      failed: [],
    });
    const all = await askRenew(root, { all: true }, CALL);
    t.same(
      all.renewed.map((r) => r.volumeId),
      ['csi-a', 'csi-b'],
    );
    t.same(
      targets,
      [{ volumeId: 'csi-b' }, { all: true }],
      'each request reached the handler once',
    );
    t.same(await readdir(root.root), [CONTROL_SOCKET_NAME], 'nothing but the socket is written');
  },
);

t.test('renew --all: each volume reaches the client while the others still renew', async (t) => {
  const root = await dataRoot(t);
  const seen: string[] = [];
  let release = () => {};
  const lastMayFinish = new Promise<void>((resolve) => {
    release = resolve;
  });
  let seenBeforeTheEnd: string[] = [];
  await serve(t, root, {
    renew: async (_target, progress) => {
      const outcome: RenewOutcome = { renewed: [], failed: [] };
      outcome.renewed.push({ volumeId: 'csi-fast', notAfter: NOT_AFTER });
      progress(outcome);
      outcome.failed.push({ volumeId: 'csi-broken', error: 'issuer not ready' });
      progress(outcome);
      await until(() => seen.length === 2, {
        what: 'the first two at the client',
        timeoutMs: 20_000,
      });
      seenBeforeTheEnd = [...seen];
      await lastMayFinish;
      outcome.renewed.push({ volumeId: 'csi-slow', notAfter: NOT_AFTER });
      return outcome;
    },
  });
  const asked = askRenew(
    root,
    { all: true },
    {
      ...CALL,
      onProgress: (done) => {
        seen.push(...done.renewed.map((r) => r.volumeId), ...done.failed.map((f) => f.volumeId));
        if (seen.length === 2) release();
      },
    },
  );
  const outcome = await asked;
  t.same(seenBeforeTheEnd, ['csi-fast', 'csi-broken'], 'streamed while the last one renewed');
  t.same(seen, ['csi-fast', 'csi-broken', 'csi-slow'], 'each volume once');
  t.same(outcome, {
    renewed: [
      { volumeId: 'csi-fast', notAfter: NOT_AFTER },
      { volumeId: 'csi-slow', notAfter: NOT_AFTER },
    ],
    failed: [{ volumeId: 'csi-broken', error: 'issuer not ready' }],
  });
});

t.test('a handler error is the answer, and is logged', async (t) => {
  const root = await dataRoot(t);
  const logger = recordingLogger();
  await serve(
    t,
    root,
    {
      renew: async () => {
        throw new Error('unknown volume id csi-missing');
      },
    },
    { logger },
  );
  const err = await controlError(askRenew(root, { volumeId: 'csi-missing' }, CALL));
  t.equal(err.failure, 'refused');
  t.equal(err.detail, 'unknown volume id csi-missing');
  t.ok(
    logger.records.some(
      ([level, , msg]) => level === 'warn' && msg === 'manual renewal request failed',
    ),
  );
});

t.test('answers keep only ids, times and error messages', async (t) => {
  const root = await dataRoot(t);
  await serve(t, root, {
    renew: async () => {
      const leaky = {
        volumeId: 'csi-a',
        notAfter: NOT_AFTER,
        privateKey: '-----BEGIN PRIVATE KEY-----',
      };
      const failed = { volumeId: 'csi-b', error: 'denied', key: '-----BEGIN PRIVATE KEY-----' };
      return { renewed: [leaky], failed: [failed] };
    },
  });
  const text = await raw(root, ['{"op":"renew","all":true}\n']);
  t.notMatch(text, /PRIVATE KEY/);
  t.same(
    text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l)),
    [
      { type: 'accepted' },
      { type: 'renewed', volumeId: 'csi-a', notAfter: NOT_AFTER },
      { type: 'failed', volumeId: 'csi-b', error: 'denied' },
      { type: 'done' },
    ],
  );
});

t.test('concurrent requests are each answered once', async (t) => {
  const root = await dataRoot(t);
  const { targets, renew } = renewingHandler();
  await serve(t, root, { renew });
  const ids = ['csi-0', 'csi-1', 'csi-2', 'csi-3', 'csi-4'];
  const outcomes = await Promise.all(ids.map((volumeId) => askRenew(root, { volumeId }, CALL)));
  t.same(
    outcomes.map((o) => o.renewed.map((r) => r.volumeId)),
    ids.map((id) => [id]),
  );
  t.same(targets.map((x) => ('volumeId' in x ? x.volumeId : 'all')).sort(), ids);
});

t.test('a Certificate request goes to the certificate handler, and only a valid one', async (t) => {
  const root = await dataRoot(t);
  const { targets, renew } = renewingHandler();
  const asked: string[] = [];
  await serve(t, root, {
    renew,
    renewCertificate: async (ref) => {
      asked.push(ref.name);
      if (ref.name === 'missing') throw new Error('Certificate sandbox/missing not found');
      return { alreadyIssuing: ref.name === 'busy' };
    },
  });
  t.same(await askCertificateRenew(root, { namespace: 'sandbox', name: 'web' }, CALL), {
    namespace: 'sandbox',
    name: 'web',
    alreadyIssuing: false,
  });
  t.same(await askCertificateRenew(root, { namespace: 'sandbox', name: 'busy' }, CALL), {
    namespace: 'sandbox',
    name: 'busy',
    alreadyIssuing: true,
  });
  const missing = await controlError(
    askCertificateRenew(root, { namespace: 'sandbox', name: 'missing' }, CALL),
  );
  t.same([missing.failure, missing.detail], ['refused', 'Certificate sandbox/missing not found']);
  const bad = await controlError(
    askCertificateRenew(root, { namespace: 'Sandbox', name: 'web' }, CALL),
  );
  t.equal(bad.failure, 'refused');
  t.match(bad.detail, /^malformed request: certificate: namespace "Sandbox" is invalid/);
  t.same(asked, ['web', 'busy', 'missing'], 'an invalid name never reaches it');
  t.same(targets, [], 'the volume handler is not involved');
});

t.test(
  'without a certificate handler (kubernetes mode) a Certificate request is refused',
  async (t) => {
    const root = await dataRoot(t);
    await serve(t, root);
    const err = await controlError(
      askCertificateRenew(root, { namespace: 'sandbox', name: 'web' }, CALL),
    );
    t.same([err.failure, err.detail], ['refused', NO_CERTIFICATE_STORE_ERROR]);
    t.match(NO_CERTIFICATE_STORE_ERROR, /--mode kubernetes.*--kubeconfig FILE/);
    const decision = await controlError(
      askRequestDecision(
        root,
        { namespace: 'sandbox', name: 'r', decision: 'Approved', reason: 'r', message: 'm' },
        CALL,
      ),
    );
    t.same([decision.failure, decision.detail], ['refused', NO_REQUEST_STORE_ERROR]);
    t.match(NO_REQUEST_STORE_ERROR, /--mode kubernetes.*--kubeconfig FILE/);
  },
);

const failure = {
  volumeId: 'csi-a',
  saveError: 'ENOSPC',
  lastError: { message: 'no space', time: '2026-01-01T00:00:00.000Z' },
};

t.test(
  'status: the failures held in memory; a socket a killed plugin left is replaced',
  async (t) => {
    const root = await dataRoot(t);
    const make = await oddFileMaker(t);
    // What a kill -9 leaves: a socket file nobody listens on.
    await make(controlSocketOf(root), 'socket');
    const stale = await controlError(askStatus(root, CALL));
    t.same(
      [stale.failure, stale.detail],
      ['no-plugin', 'nothing listens on the socket (left by a plugin that stopped)'],
    );
    const logger = recordingLogger();
    await serve(t, root, { unsavedFailures: () => [failure] }, { logger });
    t.ok(
      logger.records.some(([, , msg]) => msg === 'removed the control socket of a previous run'),
    );
    t.same(await askStatus(root, CALL), { unsaved: [failure], renewalsAsked: [] });
    const none = await dataRoot(t);
    await serve(t, none);
    t.same(await askStatus(none, CALL), { unsaved: [], renewalsAsked: [] }, 'none held');
  },
);

t.test('status: the volumes whose renewal on request is not finished, as asked now', async (t) => {
  const root = await dataRoot(t);
  let asked = ['csi-a', 'csi-b'];
  await serve(t, root, { unsavedFailures: () => [failure], renewalsAsked: () => asked });
  t.same(await askStatus(root, CALL), { unsaved: [failure], renewalsAsked: ['csi-a', 'csi-b'] });
  asked = [];
  t.same(
    await askStatus(root, CALL),
    { unsaved: [failure], renewalsAsked: [] },
    'each answer says what is asked at that moment',
  );
});

t.test('something else at the socket name: the plugin refuses to start, leaves it', async (t) => {
  const make = await oddFileMaker(t);
  const kinds = [...ODD_KINDS.filter((k) => k !== 'socket'), 'file'] as const;
  for (const kind of kinds) {
    const root = await dataRoot(t);
    const path = controlSocketOf(root);
    if (kind === 'file') await writeFile(path, 'mine');
    else await make(path, kind);
    const before = await lstat(path);
    await t.rejects(
      serveControl(
        root,
        { ...renewingHandler(), unsavedFailures: () => [], renewalsAsked: () => [] },
        recordingLogger(),
      ),
      {
        message: new RegExp(
          `^${path.replace(/\./g, '\\.')} is an? [a-zA-Z ]+, not a socket: cert-csi renew and status are served there; remove it \\(it is left as it is\\)$`,
        ),
      },
      kind,
    );
    const after = await lstat(path);
    t.same([after.ino, after.mode], [before.ino, before.mode], `${kind}: left as it is`);
    // The client does not wait on it either.
    const err = await controlError(askStatus(root, { timeoutMs: 60_000 }));
    t.equal(err.failure, 'no-plugin', kind);
    t.match(err.detail, /^an? [a-zA-Z ]+ is there, not a socket$/, kind);
  }
});

t.test('a data root that does not exist or is no directory: nothing served', async (t) => {
  const dir = await tempDir(t);
  const absent = new DataRoot(join(dir, 'absent'));
  await t.rejects(
    serveControl(
      absent,
      { ...renewingHandler(), unsavedFailures: () => [], renewalsAsked: () => [] },
      recordingLogger(),
    ),
    {
      message: new RegExp(
        `^cannot serve cert-csi renew and status on ${controlSocketOf(absent)}: listen `,
      ),
    },
  );
  const file = new DataRoot(join(dir, 'file'));
  await writeFile(file.root, '');
  await t.rejects(
    serveControl(
      file,
      { ...renewingHandler(), unsavedFailures: () => [], renewalsAsked: () => [] },
      recordingLogger(),
    ),
    {
      code: 'ENOTDIR',
    },
  );
  const err = await controlError(askStatus(file, CALL));
  t.equal(err.failure, 'no-plugin');
  t.match(err.detail, /ENOTDIR/);
  const noSocket = await controlError(askStatus(absent, CALL));
  t.same([noSocket.failure, noSocket.detail], ['no-plugin', 'no socket there']);
});

t.test('a malformed request gets one error line, and the connection is closed', async (t) => {
  const root = await dataRoot(t);
  const logger = recordingLogger();
  const { targets, renew } = renewingHandler();
  await serve(t, root, { renew }, { logger, limits: { requestDeadlineMs: 300 } });
  const cases: Array<[string, Array<string | Buffer>, { end?: boolean }, string | RegExp]> = [
    ['not JSON', ['garbage\n'], {}, /^malformed request: not JSON: /],
    [
      'a path for a volume id',
      ['{"op":"renew","volumeId":"../etc"}\n'],
      {},
      /^malformed request: invalid volume id "\.\.\/etc"/,
    ],
    [
      'an unknown op',
      ['{"op":"delete"}\n'],
      {},
      'malformed request: op "delete": expected "renew", "renew-certificate", "decide-request" or "status"',
    ],
    [
      'over 4 KiB without a newline',
      [Buffer.alloc(REQUEST_MAX_BYTES + 1, 0x20)],
      {},
      'malformed request: a line is longer than 4 KiB, the most read for one',
    ],
    [
      'over 4 KiB in small pieces',
      Array(REQUEST_MAX_BYTES + 1).fill(' '),
      {},
      'malformed request: a line is longer than 4 KiB, the most read for one',
    ],
    [
      'no newline before the end',
      ['{"op":"status"}'],
      { end: true },
      'malformed request: the request line has no newline',
    ],
    ['nothing before the end', [], { end: true }, 'malformed request: no request line'],
    ['nothing at all', [], {}, 'malformed request: no request line within 300 ms'],
  ];
  for (const [what, parts, options, message] of cases) {
    const text = await raw(root, parts, options);
    const lines = text.split('\n');
    t.equal(lines.length, 2, `${what}: one line`);
    const answer = JSON.parse(lines[0] ?? '') as { type: string; error: string };
    t.equal(answer.type, 'error', what);
    if (typeof message === 'string') t.equal(answer.error, message, what);
    else t.match(answer.error, message, what);
  }
  t.same(targets, [], 'none reached the handler');
  t.equal(
    logger.records.filter(([level, , msg]) => level === 'warn' && msg === 'control request refused')
      .length,
    cases.length,
    'each logged',
  );
});

t.test('one request per connection: more input is read and dropped', async (t) => {
  const root = await dataRoot(t);
  const { targets, renew } = renewingHandler();
  await serve(t, root, { renew });
  const text = await raw(root, [
    '{"op":"renew","volumeId":"csi-a"}\n{"op":"renew","all":true}\n',
    'more',
  ]);
  t.same(
    text
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type),
    ['accepted', 'renewed', 'done'],
    'answered',
  );
  t.same(targets, [{ volumeId: 'csi-a' }], 'the second line is no request');

  // Input sent once the request was taken (after its `accepted`) is dropped as it comes, never
  // held: more than a request line may be is no error, and a second line is no request.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const later: RenewTarget[] = [];
  const other = await dataRoot(t);
  await serve(t, other, {
    renew: async (target, progress) => {
      later.push(target);
      await held;
      const outcome = { renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER }], failed: [] };
      progress(outcome);
      return outcome;
    },
  });
  const answered = await new Promise<string>((resolve, reject) => {
    let text = '';
    const socket = connect(controlSocketOf(other), () =>
      socket.write('{"op":"renew","volumeId":"csi-a"}\n'),
    );
    socket.once('data', () => {
      socket.write('x'.repeat(4 * REQUEST_MAX_BYTES));
      // Released only once the server had its turn to read what was written: a write is in
      // the server's receive queue when its callback runs, and read in the loop's next poll,
      // which comes before the second setImmediate (an order of the event loop, not a delay).
      socket.write('\n{"op":"renew","all":true}\n', () =>
        setImmediate(() => setImmediate(release)),
      );
    });
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
  t.same(
    answered
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type),
    ['accepted', 'renewed', 'done'],
    'answered as if nothing more came',
  );
  t.same(later, [{ volumeId: 'csi-a' }], 'what came after the request is no request');
});

t.test('a connection beyond the cap is told busy; the others are served', async (t) => {
  const root = await dataRoot(t);
  const server = await serve(
    t,
    root,
    {},
    { limits: { maxConnections: 2, requestDeadlineMs: 60_000 } },
  );
  const idle = [connect(controlSocketOf(root)), connect(controlSocketOf(root))];
  t.teardown(() => {
    for (const s of idle) s.destroy();
  });
  await until(() => server.connections === 2, { what: 'two connections' });
  const busy = await controlError(askStatus(root, CALL));
  t.same([busy.failure, busy.detail], ['refused', 'busy: 2 requests are being served; try again']);
  idle[0]?.destroy();
  await until(() => server.connections === 1, { what: 'one connection released' });
  t.same(await askStatus(root, CALL), { unsaved: [], renewalsAsked: [] }, 'served again');
});

t.test('a client gone mid-renewal: the work goes on, its connection is released', async (t) => {
  const root = await dataRoot(t);
  const logger = recordingLogger();
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let taken = 0;
  let finished = 0;
  const server = await serve(
    t,
    root,
    {
      renew: async (_target, progress) => {
        taken++;
        await held;
        const outcome = { renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER }], failed: [] };
        progress(outcome);
        finished++;
        return outcome;
      },
      renewCertificate: async () => {
        taken++;
        await held;
        finished++;
        return { alreadyIssuing: false };
      },
    },
    { logger },
  );
  for (const request of [
    '{"op":"renew","all":true}\n',
    '{"op":"renew-certificate","namespace":"a","name":"b"}\n',
  ]) {
    const socket = connect(controlSocketOf(root), () => socket.write(request));
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.destroy();
  }
  await until(() => taken === 2, { what: 'both taken' });
  release();
  await until(() => finished === 2 && server.connections === 0, {
    what: 'the work done, the connections released',
  });
  t.same(await readdir(root.root), [CONTROL_SOCKET_NAME], 'nothing left behind');
  t.same(
    logger.records.filter(([level]) => level === 'error'),
    [],
    'no error',
  );
  t.same(
    await askRenew(root, { volumeId: 'csi-a' }, CALL),
    { renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER }], failed: [] },
    'the next one is served',
  );
});

t.test('a client that closes its side while its answer is coming abandons it', async (t) => {
  const root = await dataRoot(t);
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let finished = false;
  const server = await serve(t, root, {
    renew: async () => {
      await held;
      finished = true;
      return { renewed: [], failed: [] };
    },
  });
  const timersBefore = pendingTimers();
  const text = await raw(root, ['{"op":"renew","all":true}\n'], { end: true });
  t.notOk(finished, 'the connection closed without waiting for the work');
  t.notMatch(text, /done/);
  await until(() => server.connections === 0, { what: 'the connection released' });
  release();
  await until(() => finished, { what: 'the work to end' });
  await setImmediatePromise();
  t.equal(pendingTimers(), timersBefore, 'no deadline of the gone connection is left running');
});

t.test(
  'a client that does not read: cut off once the answer is complete and its deadline passed',
  async (t) => {
    const root = await dataRoot(t);
    const error = 'e'.repeat(8 * 1024);
    const server = await serve(
      t,
      root,
      {
        renew: async (_target, progress) => {
          const outcome: RenewOutcome = { renewed: [], failed: [] };
          for (let i = 0; i < 500; i++) {
            outcome.failed.push({ volumeId: `csi-${i}`, error });
            progress(outcome);
          }
          return outcome;
        },
      },
      { limits: { flushDeadlineMs: 300, progressHighWaterBytes: 16 * 1024 } },
    );
    const socket = connect(controlSocketOf(root), () =>
      socket.write('{"op":"renew","all":true}\n'),
    );
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    await until(() => server.connections === 1, { what: 'the connection' });
    await until(() => server.connections === 0, {
      what: 'the connection cut off',
      timeoutMs: 30_000,
    });
    socket.resume();
    await closed;
    t.pass('the server let go of a client that took 4 MiB of nothing');
  },
);

t.test('close: open connections end, the socket goes, a client then hears no plugin', async (t) => {
  const root = await dataRoot(t);
  let taken = false;
  const server = await serve(t, root, {
    renew: async () => {
      taken = true;
      return new Promise<RenewOutcome>(() => undefined);
    },
  });
  const pending = controlError(askRenew(root, { all: true }, CALL));
  await until(() => taken, { what: 'the request taken' });
  await server.close();
  const lost = await pending;
  t.same(
    [lost.failure, lost.detail],
    ['lost', 'the plugin closed the connection before its answer was complete'],
  );
  t.same(await readdir(root.root), [], 'the socket file is gone');
  const after = await controlError(askStatus(root, CALL));
  t.same([after.failure, after.detail], ['no-plugin', 'no socket there']);
});

t.test('only a socket at the name is asked: a link to a plugin elsewhere is not', async (t) => {
  const elsewhere = await dataRoot(t);
  await serve(t, elsewhere, { unsavedFailures: () => [failure] });
  const linked = await dataRoot(t);
  await symlink(controlSocketOf(elsewhere), controlSocketOf(linked));
  t.same(
    await askStatus(elsewhere, CALL),
    { unsaved: [failure], renewalsAsked: [] },
    'the socket itself answers',
  );
  const err = await controlError(askStatus(linked, CALL));
  t.same([err.failure, err.detail], ['no-plugin', 'a symbolic link is there, not a socket']);
});

t.test('a data root too long for a socket address is served through its descriptor', async (t) => {
  const base = await tempDir(t, 'cert-csi-long-');
  const root = new DataRoot(join(base, 'd'.repeat(60), 'e'.repeat(60), 'volumes'));
  await root.ensure();
  t.ok(Buffer.byteLength(controlSocketOf(root)) > SOCKET_PATH_MAX_BYTES, 'longer than sun_path');
  const server = await serve(t, root, { unsavedFailures: () => [failure] });
  t.ok((await lstat(controlSocketOf(root))).isSocket(), 'the socket is in the data root');
  t.same(await askStatus(root, CALL), { unsaved: [failure], renewalsAsked: [] });
  t.same(await askRenew(root, { volumeId: 'csi-a' }, CALL), {
    renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER, nextIssuanceTime: NEXT }],
    failed: [],
  });
  await server.close();
  t.same(await readdir(root.root), [], 'and gone at close');
  t.same(await readdir(base), ['d'.repeat(60)], 'nothing written outside it');
  t.same(await readdir(join(base, 'd'.repeat(60))), ['e'.repeat(60)]);
});
