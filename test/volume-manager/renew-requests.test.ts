import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import { lstat, mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Logger } from '../../src/api/logger.js';
import { writeFileAtomic } from '../../src/fs/atomic-file.js';
import * as regularFile from '../../src/fs/regular-file.js';
import { DataRoot } from '../../src/volume/data-root.js';
import {
  formatRenewResult,
  parseCertificateResult,
  parseRenewProgress,
  parseRenewRequest,
  parseRenewResult,
  RENEW_REQUEST_MAX_BYTES,
  renewDirOf,
} from '../../src/volume-manager/control/renew-protocol.js';
import {
  type CertificateRenewHandler,
  NO_CERTIFICATE_STORE_ERROR,
  type RenewHandler,
  type RenewOutcome,
  type RenewTarget,
  STALE_RESULT_MS,
  watchRenewRequests,
} from '../../src/volume-manager/control/renew-requests.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { importedUrl, moduleFileUrl } from '../support/project-files.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';
import { waitForFile } from './renew-fixtures.js';

const NOT_AFTER = '2030-01-01T00:00:00.000Z';
const NEXT = '2029-11-01T00:00:00.000Z';

async function dataRoot(t: Test): Promise<DataRoot> {
  return new DataRoot(join(await tempDir(t), 'volumes'));
}

/** A handler that records its targets and renews every volume it is given. */
function renewingHandler(): {
  targets: RenewTarget[];
  handle: (target: RenewTarget) => Promise<RenewOutcome>;
} {
  const targets: RenewTarget[] = [];
  return {
    targets,
    handle: async (target) => {
      targets.push(target);
      const ids = 'all' in target ? ['csi-a', 'csi-b'] : [target.volumeId];
      return {
        renewed: ids.map((volumeId) => ({ volumeId, notAfter: NOT_AFTER, nextIssuanceTime: NEXT })),
        failed: [],
      };
    },
  };
}

async function watchWith(
  t: Test,
  root: DataRoot,
  handle: RenewHandler,
  logger: Logger = recordingLogger(),
  renewCertificate?: CertificateRenewHandler,
): Promise<{ close(): void }> {
  const watcher = await watchRenewRequests(root, handle, logger, renewCertificate);
  t.teardown(() => watcher.close());
  return watcher;
}

async function request(root: DataRoot, id: string, body: object | string): Promise<void> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  await writeFileAtomic(join(renewDirOf(root), `${id}.request`), text);
}

// Waits (briefly) for something the watcher does in the background, such as a log record.
async function eventually(check: () => boolean, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

const resultOf = async (root: DataRoot, id: string) =>
  parseRenewResult(await waitForFile(join(renewDirOf(root), `${id}.result`)));

t.test('a request made before the plugin started is answered at start', async (t) => {
  const root = await dataRoot(t);
  await mkdir(renewDirOf(root), { recursive: true });
  await request(root, 'early', { volumeId: 'csi-a', requestedAt: new Date().toISOString() });
  const { targets, handle } = renewingHandler();
  await watchWith(t, root, handle);
  t.same(await resultOf(root, 'early'), {
    ok: true,
    renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER, nextIssuanceTime: NEXT }],
    failed: [],
  });
  t.same(targets, [{ volumeId: 'csi-a' }]);
  t.notOk(
    (await readdir(renewDirOf(root))).includes('early.request'),
    'the request file is consumed',
  );
});

t.test('a request made while watching is answered within a second', async (t) => {
  const root = await dataRoot(t);
  const { targets, handle } = renewingHandler();
  await watchWith(t, root, handle);
  const info = await stat(renewDirOf(root));
  t.equal(info.mode & 0o777, 0o700, 'the request dir is 0700');
  const started = performance.now();
  await request(root, 'live', { volumeId: 'csi-b', requestedAt: new Date().toISOString() });
  const result = await resultOf(root, 'live');
  const elapsed = performance.now() - started;
  t.ok(elapsed < 1000, `answered in ${elapsed.toFixed(0)} ms`);
  t.equal(result.ok, true);
  t.same(targets, [{ volumeId: 'csi-b' }], 'the handler ran once despite several fs events');
});

t.test('"all" reaches the handler as such', async (t) => {
  const root = await dataRoot(t);
  const { targets, handle } = renewingHandler();
  await watchWith(t, root, handle);
  await request(root, 'everything', { all: true, requestedAt: new Date().toISOString() });
  const result = await resultOf(root, 'everything');
  t.same(targets, [{ all: true }]);
  t.same(
    result.ok ? result.renewed.map((r) => r.volumeId) : [],
    ['csi-a', 'csi-b'],
    'one entry per renewed volume',
  );
});

t.test('an unparsable request is answered with an error, the handler is not called', async (t) => {
  const root = await dataRoot(t);
  const { targets, handle } = renewingHandler();
  await watchWith(t, root, handle);
  await request(root, 'garbage', '{"volumeId": ');
  const bad = await resultOf(root, 'garbage');
  t.equal(bad.ok, false);
  t.match(bad, { error: /JSON/ });
  await request(root, 'unsafe', { volumeId: '../etc' });
  t.match(await resultOf(root, 'unsafe'), { ok: false, error: /invalid volume id/ });
  t.same(targets, []);
});

t.test('a handler error becomes {"ok": false, "error"}', async (t) => {
  const root = await dataRoot(t);
  const logger = recordingLogger();
  await watchWith(
    t,
    root,
    async () => {
      throw new Error('unknown volume id csi-missing');
    },
    logger,
  );
  await request(root, 'missing', { volumeId: 'csi-missing' });
  t.same(await resultOf(root, 'missing'), { ok: false, error: 'unknown volume id csi-missing' });
  t.ok(
    logger.records.some(
      ([level, , msg]) => level === 'warn' && msg === 'manual renewal request failed',
    ),
  );
});

t.test('results keep only ids, times and error messages', async (t) => {
  const root = await dataRoot(t);
  await watchWith(t, root, async () => {
    const leaky = {
      volumeId: 'csi-a',
      notAfter: NOT_AFTER,
      privateKey: '-----BEGIN PRIVATE KEY-----',
    };
    const failed = { volumeId: 'csi-b', error: 'denied', key: '-----BEGIN PRIVATE KEY-----' };
    return { renewed: [leaky], failed: [failed] };
  });
  await request(root, 'leak', { all: true });
  const text = await waitForFile(join(renewDirOf(root), 'leak.result'));
  t.notMatch(text, /PRIVATE KEY/);
  t.same(JSON.parse(text), {
    ok: true,
    renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER }],
    failed: [{ volumeId: 'csi-b', error: 'denied' }],
  });
});

t.test('concurrent requests are each answered once', async (t) => {
  const root = await dataRoot(t);
  const { targets, handle } = renewingHandler();
  await watchWith(t, root, handle);
  const ids = ['r1', 'r2', 'r3', 'r4', 'r5'];
  await Promise.all(ids.map((id, i) => request(root, id, { volumeId: `csi-${i}` })));
  for (const id of ids) t.equal((await resultOf(root, id)).ok, true, `${id} answered`);
  t.same(targets.map((x) => ('volumeId' in x ? x.volumeId : 'all')).sort(), [
    'csi-0',
    'csi-1',
    'csi-2',
    'csi-3',
    'csi-4',
  ]);
});

t.test(
  'start removes results and progress older than 10 minutes and leaves fresh ones',
  async (t) => {
    const root = await dataRoot(t);
    const dir = renewDirOf(root);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'old.result'), '{"ok":true,"renewed":[],"failed":[]}');
    await writeFile(join(dir, 'old.progress'), '{"ok":true,"renewed":[],"failed":[]}');
    await writeFile(join(dir, 'fresh.result'), '{"ok":true,"renewed":[],"failed":[]}');
    await writeFile(join(dir, 'notes.txt'), 'not ours');
    const past = new Date(Date.now() - STALE_RESULT_MS - 60_000);
    await utimes(join(dir, 'old.result'), past, past);
    await utimes(join(dir, 'old.progress'), past, past);
    await watchWith(t, root, renewingHandler().handle);
    t.same((await readdir(dir)).sort(), ['fresh.result', 'notes.txt']);
  },
);

t.test(
  'progress: each update is written while the handler works, and removed at the end',
  async (t) => {
    const root = await dataRoot(t);
    const dir = renewDirOf(root);
    const seen: string[] = [];
    await watchWith(t, root, async (_target, progress) => {
      const outcome: RenewOutcome = { renewed: [], failed: [] };
      outcome.renewed.push({ volumeId: 'csi-a', notAfter: NOT_AFTER });
      progress(outcome);
      // Folded into the write after the one in flight.
      outcome.failed.push({ volumeId: 'csi-b', error: 'denied' });
      progress(outcome);
      seen.push(await waitForFile(join(dir, 'p1.progress')));
      await eventually(() => false, 200);
      seen.push(await waitForFile(join(dir, 'p1.progress')));
      outcome.renewed.push({ volumeId: 'csi-c', notAfter: NOT_AFTER });
      return outcome;
    });
    await request(root, 'p1', { all: true });
    const result = await resultOf(root, 'p1');
    t.same(result.ok && result.renewed.map((r) => r.volumeId), ['csi-a', 'csi-c']);
    t.same(
      parseRenewResult(seen[1] ?? ''),
      {
        ok: true,
        renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER }],
        failed: [{ volumeId: 'csi-b', error: 'denied' }],
      },
      'the newest progress is on disk while the handler still works',
    );
    t.ok(
      await eventually(() => !fs.existsSync(join(dir, 'p1.progress'))),
      'the progress file is removed once the result is written',
    );
  },
);

t.test(
  'progress that cannot be written or removed is logged; the result still comes',
  async (t) => {
    const root = await dataRoot(t);
    const dir = renewDirOf(root);
    const logger = recordingLogger();
    await watchWith(
      t,
      root,
      async (_target, progress) => {
        const outcome: RenewOutcome = {
          renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER }],
          failed: [],
        };
        progress(outcome);
        return outcome;
      },
      logger,
    );
    // A directory where the progress file goes: neither a rename onto it nor an unlink works.
    await mkdir(join(dir, 'blocked.progress'));
    await request(root, 'blocked', { all: true });
    t.equal((await resultOf(root, 'blocked')).ok, true);
    t.ok(
      await eventually(() =>
        ['cannot write renewal progress', 'cannot remove renewal progress'].every((m) =>
          logger.records.some(([level, , msg]) => level === 'warn' && msg === m),
        ),
      ),
    );
  },
);

t.test('after close, requests are left for the next start', async (t) => {
  const root = await dataRoot(t);
  const { targets, handle } = renewingHandler();
  const watcher = await watchWith(t, root, handle);
  watcher.close();
  await request(root, 'later', { volumeId: 'csi-a' });
  await new Promise((r) => setTimeout(r, 300));
  t.same(targets, []);
  t.ok((await readdir(renewDirOf(root))).includes('later.request'));
});

t.test('files that are not requests are left alone; failures are logged', async (t) => {
  const root = await dataRoot(t);
  const dir = renewDirOf(root);
  const logger = recordingLogger();
  await mkdir(join(dir, 'a-dir.request'), { recursive: true });
  const { targets, handle } = renewingHandler();
  await watchWith(
    t,
    root,
    async (target) => {
      // The dir vanishes under the plugin: the result cannot be written.
      if ('volumeId' in target && target.volumeId === 'csi-gone') {
        await fs.promises.rename(dir, `${dir}-moved`);
      }
      return handle(target);
    },
    logger,
  );
  t.ok(
    await eventually(() =>
      logger.records.some(
        ([level, obj, msg]) =>
          level === 'warn' &&
          msg === 'renewal request refused' &&
          /a-dir\.request" is not a regular file but a directory/.test(
            (obj as { err: string }).err,
          ),
      ),
    ),
    'a request that is no file is refused, and logged',
  );
  t.ok(
    await eventually(() =>
      logger.records.some(([, , msg]) => msg === 'cannot remove renewal request'),
    ),
    'a directory is not removed, and that is logged',
  );
  await writeFile(join(dir, '.request'), '{}');
  await request(root, 'gone', { volumeId: 'csi-gone' });
  t.ok(
    await eventually(() =>
      logger.records.some(([, , msg]) => msg === 'cannot write renewal result'),
    ),
  );
  t.same(targets, [{ volumeId: 'csi-gone' }], 'a bare ".request" is no request');
  await fs.promises.rm(`${dir}-moved`, { recursive: true, force: true });
});

t.test('a watch event without a name rescans; watcher errors are logged', async (t) => {
  const watchers: EventEmitter[] = [];
  let listener: ((event: string, name: string | null) => void) | undefined;
  const fakeWatch = (
    _dir: string,
    _options: object,
    callback: (event: string, name: string | null) => void,
  ) => {
    listener = callback;
    const emitter = Object.assign(new EventEmitter(), { close: () => undefined });
    watchers.push(emitter);
    return emitter;
  };
  let failReaddir = false;
  const { watchRenewRequests: watchMocked } = await t.mockImport<
    typeof import('../../src/volume-manager/control/renew-requests.js')
  >(moduleFileUrl('src/volume-manager/control/renew-requests.ts'), {
    'node:fs': { ...fs, watch: fakeWatch },
    'node:fs/promises': {
      ...fs.promises,
      readdir: async (...args: Parameters<typeof fs.promises.readdir>) => {
        if (failReaddir) throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
        return fs.promises.readdir(...args);
      },
      lstat: async (path: string) => {
        if (path.endsWith('eio.result')) throw Object.assign(new Error('EIO'), { code: 'EIO' });
        if (path.endsWith('vanished.result')) {
          throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
        }
        return fs.promises.lstat(path);
      },
    },
    [importedUrl('src/fs/regular-file.ts')]: {
      ...regularFile,
      readRegularFile: async (path: string, options: regularFile.RegularFileOptions) => {
        if (path.endsWith('eio.request')) throw Object.assign(new Error('EIO'), { code: 'EIO' });
        return regularFile.readRegularFile(path, options);
      },
    },
  });
  const root = await dataRoot(t);
  const dir = renewDirOf(root);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'eio.result'), '{}');
  await writeFile(join(dir, 'vanished.result'), '{}');
  const logger = recordingLogger();
  const { targets, handle } = renewingHandler();
  const watcher = await watchMocked(root, handle, logger);
  t.teardown(() => watcher.close());
  t.ok(
    logger.records.some(([, , msg]) => msg === 'cannot remove stale renewal result'),
    'a stale result that cannot be checked is logged, not fatal',
  );
  await request(root, 'eio', { volumeId: 'csi-a' });
  listener?.('rename', 'eio.request');
  t.ok(
    await eventually(() =>
      logger.records.some(([, , msg]) => msg === 'cannot read renewal request'),
    ),
    'a request that cannot be read is logged',
  );
  await fs.promises.unlink(join(dir, 'eio.request'));
  await request(root, 'nameless', { volumeId: 'csi-a' });
  listener?.('rename', null);
  t.equal((await resultOf(root, 'nameless')).ok, true, 'found by the rescan');
  t.same(targets, [{ volumeId: 'csi-a' }]);
  failReaddir = true;
  listener?.('rename', null);
  t.ok(
    await eventually(() =>
      logger.records.some(([, , msg]) => msg === 'cannot list renewal requests'),
    ),
  );
  watchers[0]?.emit('error', new Error('watch failed'));
  t.ok(logger.records.some(([, , msg]) => msg === 'renewal request watcher failed'));
});

t.test('a ..renew that is no directory is refused at start, nothing done through it', async (t) => {
  const root = await dataRoot(t);
  await root.ensure();
  const elsewhere = await tempDir(t);
  await fs.promises.chmod(elsewhere, 0o755);
  await fs.promises.symlink(elsewhere, renewDirOf(root));
  const { handle } = renewingHandler();
  await t.rejects(watchRenewRequests(root, handle, recordingLogger()), {
    message: `renewal request dir ${renewDirOf(root)} is not a directory but a link: remove the link`,
  });
  t.equal((await stat(elsewhere)).mode & 0o777, 0o755, 'the linked dir keeps its mode');
  // A FIFO at the name: refused at once, not waited on.
  const other = await dataRoot(t);
  await other.ensure();
  const make = await oddFileMaker(t);
  await make(renewDirOf(other), 'fifo');
  await t.rejects(watchRenewRequests(other, handle, recordingLogger()), { code: 'EEXIST' });
});

// What each odd entry is refused as, in the error its result carries.
const REFUSED_AS = {
  fifo: 'a FIFO',
  'link-to-fifo': 'a symbolic link',
  socket: 'a socket',
  directory: 'a directory',
  'link-to-file': 'a symbolic link',
} as const;

t.test(
  'odd request entries, there before the start or made while watching, are answered with an error at once',
  async (t) => {
    const root = await dataRoot(t);
    const dir = renewDirOf(root);
    await mkdir(dir, { recursive: true });
    const make = await oddFileMaker(t);
    // Three FIFOs of each kind: more blocking opens than libuv has threads (four by default).
    const early = ODD_KINDS.flatMap((kind) =>
      [1, 2, 3].map((n) => ({ kind, id: `early-${kind}-${n}` })),
    );
    for (const { kind, id } of early) {
      // A link's target holds a valid request: only following the link would take it.
      await make(join(dir, `${id}.request`), kind, '{"all": true}');
    }
    const logger = recordingLogger();
    const handler = renewingHandler();
    await watchWith(t, root, handler.handle, logger);
    const late = ODD_KINDS.map((kind) => ({ kind, id: `late-${kind}` }));
    const targets: string[] = [];
    for (const { kind, id } of late) {
      const target = await make(join(dir, `${id}.request`), kind, '{"all": true}');
      if (target) targets.push(target);
    }
    await writeFile(
      join(dir, 'large.request'),
      `{"all": true${' '.repeat(RENEW_REQUEST_MAX_BYTES)}}`,
    );
    // Served as ever, among them.
    await request(root, 'valid', { volumeId: 'csi-a' });
    t.equal((await resultOf(root, 'valid')).ok, true, 'a valid request is still answered');
    for (const { kind, id } of [...early, ...late]) {
      const path = join(dir, `${id}.request`);
      t.same(
        await resultOf(root, id),
        {
          ok: false,
          error: `file ${JSON.stringify(path)} is not a regular file but ${REFUSED_AS[kind]}: only regular files are read`,
        },
        `${id}: answered with why`,
      );
    }
    t.same(await resultOf(root, 'large'), {
      ok: false,
      error: `file ${JSON.stringify(join(dir, 'large.request'))} is larger than 4 KiB, the most read for it: not read`,
    });
    t.same(handler.targets, [{ volumeId: 'csi-a' }], 'no odd entry reached the handler');
    for (const target of targets) t.ok(await lstat(target), `${target}: a link's target stays`);
    const left = (await readdir(dir)).filter((name) => name.endsWith('.request')).sort();
    t.same(
      left,
      [
        'early-directory-1.request',
        'early-directory-2.request',
        'early-directory-3.request',
        'late-directory.request',
      ],
      'every other entry is taken away (unlink: a link goes, never its target)',
    );
    const refused = logger.records.filter(([, , msg]) => msg === 'renewal request refused');
    t.equal(refused.length, early.length + late.length + 1, 'one warning per entry, naming it');
  },
);

t.test('request and result files parse strictly', async (t) => {
  t.same(parseRenewRequest('{"all":true,"requestedAt":"x"}'), { all: true, requestedAt: 'x' });
  t.same(parseRenewRequest('{"volumeId":"csi-a"}'), { volumeId: 'csi-a' });
  t.throws(() => parseRenewRequest('[]'), /not a JSON object/);
  t.throws(() => parseRenewRequest('{"all":false}'), /all must be true/);
  t.throws(() => parseRenewRequest('{"all":true,"volumeId":"a"}'), /both/);
  t.throws(() => parseRenewRequest('{}'), /needs volumeId/);
  t.throws(() => parseRenewRequest('{"volumeId":"a","requestedAt":1}'), /requestedAt/);
  t.same(parseRenewResult('{"ok":false,"error":"x"}'), { ok: false, error: 'x' });
  t.throws(() => parseRenewResult('null'), /not a JSON object/);
  t.throws(() => parseRenewResult('{"ok":false}'), /error must be a string/);
  t.throws(() => parseRenewResult('{"ok":1}'), /ok must be/);
  t.throws(
    () => parseRenewResult('{"ok":true,"renewed":{},"failed":[]}'),
    /renewed must be a list/,
  );
  t.throws(
    () => parseRenewResult('{"ok":true,"renewed":[{"volumeId":1}],"failed":[]}'),
    /volumeId must be a string/,
  );
});

t.test('a progress file lists the volumes done so far; an unreadable one lists none', async (t) => {
  const done = { renewed: [{ volumeId: 'csi-a', notAfter: NOT_AFTER }], failed: [] };
  t.same(parseRenewProgress(JSON.stringify({ ok: true, ...done })), done);
  t.same(parseRenewProgress('{"ok": tr'), { renewed: [], failed: [] });
  t.same(parseRenewProgress('{"ok": false, "error": "x"}'), { renewed: [], failed: [] });
});

t.test(
  'a Certificate request goes to the certificate handler, answered in one piece',
  async (t) => {
    const root = await dataRoot(t);
    const { targets, handle } = renewingHandler();
    const asked: Array<{ namespace: string; name: string }> = [];
    await watchWith(t, root, handle, recordingLogger(), async (ref) => {
      asked.push(ref);
      if (ref.name === 'missing') throw new Error('Certificate sandbox/missing not found');
      return { alreadyIssuing: ref.name === 'busy' };
    });
    const certificateResultOf = async (id: string) =>
      parseCertificateResult(await waitForFile(join(renewDirOf(root), `${id}.result`)));
    await request(root, 'web', { certificate: { namespace: 'sandbox', name: 'web' } });
    t.same(await certificateResultOf('web'), {
      ok: true,
      triggered: { namespace: 'sandbox', name: 'web', alreadyIssuing: false },
    });
    await request(root, 'busy', { certificate: { namespace: 'sandbox', name: 'busy' } });
    t.same(await certificateResultOf('busy'), {
      ok: true,
      triggered: { namespace: 'sandbox', name: 'busy', alreadyIssuing: true },
    });
    await request(root, 'missing', { certificate: { namespace: 'sandbox', name: 'missing' } });
    t.same(await resultOf(root, 'missing'), {
      ok: false,
      error: 'Certificate sandbox/missing not found',
    });
    await request(root, 'bad', { certificate: { namespace: 'Sandbox', name: 'web' } });
    t.match(await resultOf(root, 'bad'), { ok: false, error: /namespace "Sandbox" is invalid/ });
    t.same(
      asked.map((r) => r.name),
      ['web', 'busy', 'missing'],
      'an invalid name never reaches it',
    );
    t.same(targets, [], 'the volume handler is not involved');
    t.notOk(
      (await readdir(renewDirOf(root))).some((n) => n.endsWith('.progress')),
      'no progress file',
    );
  },
);

t.test(
  'without a certificate handler (kubernetes mode) a Certificate request is refused',
  async (t) => {
    const root = await dataRoot(t);
    const { handle } = renewingHandler();
    await watchWith(t, root, handle);
    await request(root, 'web', { certificate: { namespace: 'sandbox', name: 'web' } });
    t.same(await resultOf(root, 'web'), { ok: false, error: NO_CERTIFICATE_STORE_ERROR });
    t.match(NO_CERTIFICATE_STORE_ERROR, /--mode kubernetes.*--kubeconfig FILE/);
  },
);

t.test('Certificate requests and results parse strictly', async (t) => {
  t.same(parseRenewRequest('{"certificate":{"namespace":"a","name":"b"},"requestedAt":"x"}'), {
    certificate: { namespace: 'a', name: 'b' },
    requestedAt: 'x',
  });
  const bad: Array<[string, RegExp]> = [
    ['{"certificate":"a/b"}', /certificate must be an object/],
    ['{"certificate":{"namespace":"a"}}', /needs a namespace and a name/],
    ['{"certificate":{"namespace":"a","name":"../b"}}', /certificate: name "..\/b" is invalid/],
    ['{"certificate":{"namespace":"a","name":"b"},"all":true}', /a certificate and volumes/],
    ['{"certificate":{"namespace":"a","name":"b"},"volumeId":"c"}', /a certificate and volumes/],
  ];
  for (const [text, message] of bad) t.throws(() => parseRenewRequest(text), message, text);
  const triggered = { namespace: 'a', name: 'b', alreadyIssuing: false };
  t.same(parseCertificateResult(formatRenewResult({ ok: true, triggered })), {
    ok: true,
    triggered,
  });
  t.same(
    JSON.parse(
      formatRenewResult({
        ok: true,
        triggered: { ...triggered, secret: 'x' } as typeof triggered,
      }),
    ),
    { ok: true, triggered },
    'only the known fields are written',
  );
  t.same(parseCertificateResult('{"ok":false,"error":"x"}'), { ok: false, error: 'x' });
  const badResults: Array<[string, RegExp]> = [
    ['[]', /not a JSON object/],
    ['{"ok":false}', /error must be a string/],
    ['{"ok":"yes"}', /ok must be/],
    ['{"ok":true}', /triggered must be an object/],
    ['{"ok":true,"triggered":{"namespace":"a"}}', /needs a namespace and a name/],
    ['{"ok":true,"triggered":{"namespace":"a","name":"b"}}', /alreadyIssuing must be/],
    ['{"ok":true,"renewed":[],"failed":[]}', /triggered must be an object/],
  ];
  for (const [text, message] of badResults) {
    t.throws(() => parseCertificateResult(text), message, text);
  }
});
