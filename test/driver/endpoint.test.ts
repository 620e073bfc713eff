import { link, lstat, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { freeUnixEndpoint, grpcAddress, parseEndpoint } from '../../src/driver/endpoint.js';
import { rejectionMessage } from '../support/eventually.js';
import { run } from '../support/issuer-fixtures.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

t.test('endpoints: unix paths, tcp addresses, and a clear error for anything else', async (t) => {
  t.same(parseEndpoint('unix:///run/cert-csi/csi.sock'), {
    kind: 'unix',
    path: '/run/cert-csi/csi.sock',
  });
  t.same(
    parseEndpoint('UNIX:///x.sock'),
    { kind: 'unix', path: '/x.sock' },
    'scheme is case-insensitive',
  );
  const relative = parseEndpoint('unix://plugin/csi.sock');
  t.equal(
    relative.kind === 'unix' && relative.path,
    `${process.cwd()}/plugin/csi.sock`,
    'relative to cwd',
  );
  t.same(parseEndpoint('tcp://127.0.0.1:10000'), { kind: 'tcp', address: '127.0.0.1:10000' });
  t.same(parseEndpoint('tcp://[::1]:10000'), { kind: 'tcp', address: '[::1]:10000' });
  t.equal(grpcAddress({ kind: 'unix', path: '/a.sock' }), 'unix:///a.sock');
  t.equal(grpcAddress({ kind: 'tcp', address: 'localhost:1' }), 'localhost:1');
  t.throws(
    () => parseEndpoint('/run/csi.sock'),
    /invalid endpoint "\/run\/csi\.sock": expected unix:\/\/PATH or tcp:\/\/HOST:PORT/,
  );
  t.throws(() => parseEndpoint('http://x'), /invalid endpoint/);
  t.throws(
    () => parseEndpoint('tcp://nohost'),
    /invalid endpoint "tcp:\/\/nohost": expected tcp:\/\/HOST:PORT/,
  );
});

t.test('freeUnixEndpoint removes only a socket nobody answers on', async (t) => {
  const dir = await tempDir(t);
  const logger = recordingLogger();

  const fresh = join(dir, 'run', 'csi.sock');
  await freeUnixEndpoint(fresh, logger);
  t.ok((await lstat(join(dir, 'run'))).isDirectory(), 'a missing path gets its parent dir');

  // A live server: refused, and it keeps serving.
  const live = join(dir, 'live.sock');
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(live, resolve));
  t.match(
    await rejectionMessage(freeUnixEndpoint(live, logger)),
    `endpoint ${live} is served by a running process`,
  );
  t.ok((await lstat(live)).isSocket(), 'the live socket is kept');

  // A stale socket: a second name for a socket whose server is gone answers ECONNREFUSED.
  const stale = join(dir, 'stale.sock');
  const gone = createServer();
  const goneAt = join(dir, 'gone.sock');
  await new Promise<void>((resolve) => gone.listen(goneAt, resolve));
  await link(goneAt, stale);
  await new Promise((resolve) => gone.close(resolve));
  await freeUnixEndpoint(stale, logger);
  await t.rejects(lstat(stale), { code: 'ENOENT' }, 'the stale socket is removed');
  t.match(logger.records.at(-1), [
    'info',
    { path: stale },
    'removed the stale socket of a previous run',
  ]);

  // Anything that is not a socket is refused and left as it is.
  const file = join(dir, 'file');
  await writeFile(file, 'data\n');
  t.match(
    await rejectionMessage(freeUnixEndpoint(file, logger)),
    `endpoint ${file} exists and is a regular file, not a socket`,
  );
  t.equal(await readFile(file, 'utf8'), 'data\n');
  t.match(await rejectionMessage(freeUnixEndpoint(dir, logger)), 'is a directory, not a socket');
  const linkPath = join(dir, 'link.sock');
  await symlink(live, linkPath);
  t.match(await rejectionMessage(freeUnixEndpoint(linkPath, logger)), 'is a symbolic link');
  const fifo = join(dir, 'fifo');
  await run('mkfifo', [fifo]);
  t.match(await rejectionMessage(freeUnixEndpoint(fifo, logger)), 'is a special file');
  t.match(
    await rejectionMessage(freeUnixEndpoint(join(file, 'under-a-file.sock'), logger)),
    /cannot inspect endpoint .*ENOTDIR/,
  );
  await new Promise((resolve) => server.close(resolve));
});
