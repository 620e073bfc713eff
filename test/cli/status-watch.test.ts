import { chmod, readlink, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { runStatus } from '../../src/cli/status/status-command.js';
import { watchStatus } from '../../src/cli/status/status-watch.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { readMetadata, writeMetadata } from '../../src/volume/metadata.js';
import { until, within } from '../support/eventually.js';
import { runInProcess } from '../support/in-process-command.js';
import { oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';
import { makeVolume } from '../volume-manager/renew-fixtures.js';

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t, 'cert-csi-watch-'), 'volumes'));
  await root.ensure();
  return root;
}

/** `status --watch` running in this process; stop() ends it as SIGINT would. */
function startWatch(args: string[]) {
  let stdout = '';
  let stderr = '';
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const code = runStatus(
    [...args, '--watch'],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    () => stopped,
  );
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    /** The last snapshot printed (text form: after its time line). */
    last: () => stdout.split(/\n(?=\d{4}-\d\d-\d\dT)/).at(-1) ?? '',
    async stop(): Promise<number> {
      stop();
      return code;
    },
  };
}

t.test('status --watch prints again as volumes come, change and go', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-first');
  const watch = startWatch(['--data-root', root.root]);
  await until(() => watch.stdout().includes('csi-first'), { what: 'the first table' });
  t.match(watch.stdout(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\nVOLUME +POD/, 'time, then table');

  await makeVolume(root, 'csi-second');
  await until(() => watch.last().includes('csi-second'), { what: 'the new volume row' });
  t.match(watch.last(), /csi-first[\s\S]*csi-second/, 'both rows, in one table');

  const meta = await readMetadata(root, 'csi-second');
  await writeMetadata(root, {
    ...meta,
    failures: 1,
    lastError: { message: 'issuer not ready', time: new Date().toISOString() },
  });
  await until(() => watch.last().includes('issuer not ready'), { what: 'the failure' });

  await rm(root.volumeDir('csi-second'), { recursive: true });
  await until(() => !watch.last().includes('csi-second'), { what: 'the row removed' });
  t.match(watch.last(), /csi-first/);
  const printed = watch.stdout().match(/^\d{4}-\d\d-\d\dT/gm)?.length ?? 0;
  t.ok(printed >= 4 && printed < 20, `a snapshot per change, not per event (${printed})`);

  t.equal(await watch.stop(), 0, 'ends with 0 when interrupted');
  t.equal(watch.stderr(), '');
});

t.test('status --watch names a skipped file once, and again only when they change', async (t) => {
  const root = await dataRoot(t);
  const make = await oddFileMaker(t);
  // A volume whose certificate file is a FIFO: status never opens it in a way that blocks.
  const withFifoCertificate = async (id: string): Promise<string> => {
    await makeVolume(root, id, {}, { 'tls.crt': 'x' });
    const generation = await readlink(join(root.dataDir(id), '..data'));
    const path = join(root.dataDir(id), generation, 'tls.crt');
    await chmod(dirname(path), 0o700);
    await rm(path);
    await make(path, 'fifo');
    return path;
  };
  const a = await withFifoCertificate('csi-first');
  const watch = startWatch(['--data-root', root.root]);
  await until(() => watch.stdout().includes('csi-first'), { what: 'the first table' });
  const warning = (path: string) =>
    `cert-csi status: warning: certificate files not read: cannot read files from ${dirname(dirname(path))}: file ${JSON.stringify(path)} is not a regular file but a FIFO: only regular files are read\n`;
  t.equal(watch.stderr(), warning(a), 'named with the first table');

  await makeVolume(root, 'csi-second');
  await until(() => watch.last().includes('csi-second'), { what: 'the next table' });
  t.equal(watch.stderr(), warning(a), 'not repeated with the next table');

  // A table may be read between the volume's files and its FIFO: it names nothing new.
  const b = await withFifoCertificate('csi-third');
  await until(() => watch.stderr().includes(warning(b)), { what: 'a table after the change' });
  t.equal(
    watch.stderr(),
    warning(a) + warning(a) + warning(b),
    'the skipped files again once they changed',
  );
  t.equal(await watch.stop(), 0);
});

t.test('status --watch --json prints one JSON array per line', async (t) => {
  const root = await dataRoot(t);
  const watch = startWatch(['--data-root', root.root, '--json']);
  await until(() => watch.stdout().includes('\n'), { what: 'the empty snapshot' });
  await makeVolume(root, 'csi-json');
  await until(() => watch.stdout().includes('csi-json'), { what: 'the new volume' });
  t.equal(await watch.stop(), 0);
  const lines = watch.stdout().trimEnd().split('\n');
  t.same(JSON.parse(lines[0] ?? ''), [], 'first: no volumes');
  const latest = JSON.parse(lines.at(-1) ?? '') as Array<{ volumeId: string }>;
  t.same(
    latest.map((s) => s.volumeId),
    ['csi-json'],
  );
});

t.test('--watch needs the volumes form', async (t) => {
  const result = await runInProcess(runStatus, [
    '--certificate',
    'ns/name',
    '--state-dir',
    '/nowhere',
    '--watch',
  ]);
  t.equal(result.code, 2);
  t.match(result.stderr, /^cert-csi status: --watch: only used with --data-root/);
});

t.test('watchStatus: file events wake it, the fallback catches the rest', async (t) => {
  const root = await dataRoot(t);
  let rendered = 'one';
  let renders = 0;
  const printed: string[] = [];
  const failures: string[] = [];
  const stop = new AbortController();
  const watching = watchStatus({
    root: root.root,
    render: async () => {
      renders++;
      if (rendered === 'broken') throw new Error('cannot read');
      return rendered;
    },
    print: (snapshot) => printed.push(snapshot),
    fail: (message) => failures.push(message),
    signal: stop.signal,
    // Far beyond the test's deadlines: only a file event can wake it.
    fallbackMs: 600_000,
    settleMs: 10,
  });
  await until(() => printed.length === 1, { what: 'the first snapshot' });
  rendered = 'two';
  await makeVolume(root, 'csi-event');
  await until(() => printed.at(-1) === 'two', { what: 'a refresh on the event' });
  const before = renders;
  await makeVolume(root, 'csi-same');
  await until(() => renders > before, { what: 'another refresh' });
  t.same(printed, ['one', 'two'], 'an unchanged snapshot is not printed again');
  rendered = 'broken';
  await rm(root.volumeDir('csi-same'), { recursive: true });
  await until(() => failures.length > 0, { what: 'the failure reported' });
  t.same(failures, ['cannot read']);
  stop.abort();
  await watching;

  // Without any event, the fallback reads again.
  const quiet = new AbortController();
  let ticks = 0;
  const polling = watchStatus({
    root: join(root.root, 'not-there-yet'),
    render: async () => `tick ${++ticks}`,
    print: () => {},
    fail: () => {},
    signal: quiet.signal,
    fallbackMs: 20,
  });
  await until(() => ticks >= 3, { what: 'fallback refreshes' });
  quiet.abort();
  await polling;
  t.pass('a missing root is read again at the fallback interval');
});

t.test('watchStatus: a change while reading is read right after', async (t) => {
  const root = await dataRoot(t);
  let renders = 0;
  const stop = new AbortController();
  const watching = watchStatus({
    root: root.root,
    render: async () => {
      renders++;
      if (renders === 1) {
        // Watched before this first read: the new volume wakes the next one.
        await makeVolume(root, 'csi-during');
        await delay(300);
      }
      return `read ${renders}`;
    },
    print: () => {},
    fail: () => {},
    signal: stop.signal,
    fallbackMs: 600_000,
    settleMs: 10,
  });
  await until(() => renders >= 2, { what: 'the read after the change' });
  stop.abort();
  await watching;
  t.pass('not lost while the first read ran');
});

t.test('watchStatus: an interrupt during a read ends the watch at once', async (t) => {
  const root = await dataRoot(t);
  const stop = new AbortController();
  let renders = 0;
  const watching = watchStatus({
    root: root.root,
    render: async () => {
      renders++;
      stop.abort();
      return 'snapshot';
    },
    print: () => {},
    fail: () => {},
    signal: stop.signal,
    fallbackMs: 600_000,
  });
  t.equal(await within(10_000, watching), undefined, 'ended without waiting for a change');
  t.equal(renders, 1);
});

t.test('watchStatus: a data root that cannot be watched is reported', async (t) => {
  const dir = await tempDir(t, 'cert-csi-watch-');
  const root = join(dir, 'loop');
  await symlink('loop', root);
  const failures: string[] = [];
  const stop = new AbortController();
  const watching = watchStatus({
    root,
    render: async () => 'snapshot',
    print: () => {},
    fail: (message) => failures.push(message),
    signal: stop.signal,
    fallbackMs: 5000,
  });
  await until(() => failures.length > 0, { what: 'the report' });
  stop.abort();
  await watching;
  t.match(failures, [/^cannot watch .*loop: ELOOP: .*; read again every 5 s$/]);
});
