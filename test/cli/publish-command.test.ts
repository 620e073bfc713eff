import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runPublish, runUnpublish } from '../../src/cli/publish-command.js';
import { rejectionMessage } from '../support/eventually.js';

t.test('publish and unpublish refuse missing flags and malformed attributes', async (t) => {
  t.match(await rejectionMessage(runPublish([])), /--endpoint and --target are required/);
  t.match(
    await rejectionMessage(runPublish(['--endpoint', 'unix:///x'])),
    /--endpoint and --target are required/,
  );
  t.match(
    await rejectionMessage(
      runPublish(['--endpoint', 'unix:///x', '--target', '/t', '--attr', 'novalue']),
    ),
    /--attr "novalue": expected KEY=VALUE/,
  );
  t.match(
    await rejectionMessage(
      runPublish(['--endpoint', 'unix:///x', '--target', '/t', '--attr', '=v']),
    ),
    /--attr "=v": expected KEY=VALUE/,
  );
  t.match(
    await rejectionMessage(runUnpublish(['--target', '/t'])),
    /--endpoint and --target are required/,
  );
  t.match(
    await rejectionMessage(runPublish(['--endpoint', 'http://x', '--target', '/t'])),
    /endpoint/i,
    'an endpoint that is not unix:// or tcp:// is refused',
  );
});

t.test('a plugin that is not there: exit 1 with the gRPC code on stderr', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-publish-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const endpoint = `unix://${join(dir, 'absent.sock')}`;
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    t.equal(
      await runPublish([
        '--endpoint',
        endpoint,
        '--target',
        join(dir, 't'),
        '--volume-id',
        'v',
        '--attr',
        'issuer-name=x',
      ]),
      1,
    );
    t.equal(
      await runUnpublish(['--endpoint', endpoint, '--target', join(dir, 't'), '--volume-id', 'v']),
      1,
    );
  } finally {
    process.stderr.write = write;
  }
  t.match(written.join(''), /^error: UNAVAILABLE: /m, 'the code by name, then the message');
  t.equal(written.length, 2, 'one line per failed call');
});
