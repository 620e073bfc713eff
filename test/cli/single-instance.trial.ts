import { once } from 'node:events';
import { lstat, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CsiClient } from '../../src/driver/csi-client.js';
import { startNode } from '../support/cli-process.js';
import { rejectionMessage } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';

// Issue 9, class 6: two plugins never share a data root, a state dir or a socket. Every start is
// the real `cert-csi node` command in its own process, so the locks are what separate processes
// see (flock belongs to the process; it must be gone the moment the holder is killed).

function nodeArgs(dir: string, name: string, socket = join(dir, `${name}.sock`)): string[] {
  return [
    '--endpoint',
    `unix://${socket}`,
    '--data-root',
    join(dir, `${name}-volumes`),
    '--state-dir',
    join(dir, `${name}-state`),
    '--mount-mode',
    'direct',
    '--node-id',
    'single-instance',
  ];
}

/** Probe through the socket: the plugin there is alive and serving. */
async function probe(t: Test, socket: string): Promise<Record<string, unknown>> {
  const client = new CsiClient({ kind: 'unix', path: socket });
  t.teardown(() => client.close());
  return client.identityCall('Probe');
}

t.test('a second plugin on the same data root is refused with the holder pid', async (t) => {
  const dir = await tempDir(t, 'cert-csi-single-');
  const first = await startNode(nodeArgs(dir, 'a'));
  t.teardown(() => first.stop());
  // Same data root and state dir, its own socket: the lock alone stops it.
  const args = nodeArgs(dir, 'a', join(dir, 'b.sock'));
  const refused = await rejectionMessage(startNode(args));
  t.match(refused, /exited with 1 before starting/);
  t.match(
    refused,
    `data root ${join(dir, 'a-volumes')} is in use by another cert-csi process (pid ${first.child.pid};`,
  );
  await t.rejects(lstat(join(dir, 'b.sock')), { code: 'ENOENT' }, 'it never listened');
  t.same(await probe(t, join(dir, 'a.sock')), { ready: { value: true } }, 'the first still serves');

  // Another data root but the first one's state dir: the embedded store has one writer.
  const sharedState = [...nodeArgs(dir, 'c'), '--state-dir', join(dir, 'a-state')];
  const stateRefused = await rejectionMessage(startNode(sharedState));
  t.match(
    stateRefused,
    `state dir ${join(dir, 'a-state')} is in use by another cert-csi process (pid ${first.child.pid};`,
  );
  t.same(await probe(t, join(dir, 'a.sock')), { ready: { value: true } });
});

t.test('a second plugin on a live endpoint is refused; the first keeps its socket', async (t) => {
  const dir = await tempDir(t, 'cert-csi-single-');
  const socket = join(dir, 'a.sock');
  const first = await startNode(nodeArgs(dir, 'a'));
  t.teardown(() => first.stop());
  const refused = await rejectionMessage(startNode(nodeArgs(dir, 'b', socket)));
  t.match(refused, `endpoint ${socket} is served by a running process`);
  t.same(await probe(t, socket), { ready: { value: true } }, 'the first still answers on it');
});

t.test('an endpoint that is a regular file is refused and left intact', async (t) => {
  const dir = await tempDir(t, 'cert-csi-single-');
  const file = join(dir, 'notes.txt');
  await writeFile(file, 'not a socket\n');
  const refused = await rejectionMessage(startNode(nodeArgs(dir, 'a', file)));
  t.match(refused, `endpoint ${file} exists and is a regular file, not a socket`);
  t.equal(await readFile(file, 'utf8'), 'not a socket\n', 'the file is untouched');
});

t.test('kill -9: the restart removes the stale socket and starts at once', async (t) => {
  const dir = await tempDir(t, 'cert-csi-single-');
  const socket = join(dir, 'a.sock');
  for (let round = 0; round < 2; round++) {
    const node = await startNode(nodeArgs(dir, 'a'));
    t.same(await probe(t, socket), { ready: { value: true } }, `round ${round} serves`);
    const exited = once(node.child, 'exit');
    node.child.kill('SIGKILL');
    await exited;
    t.ok((await lstat(socket)).isSocket(), 'the killed plugin left its socket behind');
  }
  const last = await startNode(nodeArgs(dir, 'a'));
  t.teardown(() => last.stop());
  t.match(last.output(), /removed the stale socket of a previous run/);
  t.same(await probe(t, socket), { ready: { value: true } });
});
