import { symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import { DataRoot } from '../../src/volume/data-root.js';
import {
  readUnsavedFailures,
  serveUnsavedFailures,
  statusSocketOf,
  UNSAVED_FAILURES_MAX_BYTES,
} from '../../src/volume-manager/control/status-socket.js';
import { oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t), 'volumes'));
  await root.ensure();
  return root;
}

/** A fake plugin answering every connection with text (or never, when text is undefined). */
async function answering(t: Test, root: DataRoot, text: string | undefined): Promise<void> {
  const server = createServer((socket) => {
    if (text !== undefined) socket.end(text);
  });
  await new Promise<void>((resolve) => server.listen(statusSocketOf(root), resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

const failure = {
  volumeId: 'csi-a',
  saveError: 'ENOSPC',
  lastError: { message: 'no space', time: '2026-01-01T00:00:00.000Z' },
};

t.test('the plugin serves its unsaved failures; a restart replaces its old socket', async (t) => {
  const root = await dataRoot(t);
  const first = await serveUnsavedFailures(root, () => [failure], silentLogger);
  await first.close();
  await answering(t, root, undefined).catch(() => undefined);
  const served = await serveUnsavedFailures(root, () => [failure], silentLogger);
  t.teardown(() => served.close());
  t.same(await readUnsavedFailures(root), [failure]);
});

t.test('no plugin, a silent one or a malformed answer: nothing from memory', async (t) => {
  t.same(await readUnsavedFailures(await dataRoot(t)), [], 'no socket');
  const silent = await dataRoot(t);
  await answering(t, silent, undefined);
  t.same(await readUnsavedFailures(silent, 200), [], 'no answer before the deadline');
  for (const text of [
    'not json',
    '{"a":1}',
    `[null, 1, {"volumeId":"x"}, ${JSON.stringify(failure)}]`,
  ]) {
    const root = await dataRoot(t);
    await answering(t, root, text);
    t.same(
      await readUnsavedFailures(root),
      text.includes('csi-a') ? [failure] : [],
      `answer ${text.slice(0, 20)}`,
    );
  }
});

t.test('a file that is not a socket is left alone and nothing is served', async (t) => {
  const root = await dataRoot(t);
  await writeFile(statusSocketOf(root), 'mine');
  const served = await serveUnsavedFailures(root, () => [failure], silentLogger);
  await served.close();
  t.same(await readUnsavedFailures(root), [], 'nothing answers');
});

t.test('only a socket at the name is asked, and its answer is bounded', async (t) => {
  // A plugin's socket elsewhere, linked to from the data root: not asked.
  const elsewhere = await dataRoot(t);
  await answering(t, elsewhere, JSON.stringify([failure]));
  const linked = await dataRoot(t);
  await symlink(statusSocketOf(elsewhere), statusSocketOf(linked));
  t.same(await readUnsavedFailures(elsewhere), [failure], 'the socket itself answers');
  t.same(await readUnsavedFailures(linked), [], 'the link to it is not followed');
  // A FIFO at the name: nothing waits on it.
  const fifo = await dataRoot(t);
  const make = await oddFileMaker(t);
  await make(statusSocketOf(fifo), 'fifo');
  t.same(await readUnsavedFailures(fifo, 60_000), [], 'a FIFO answers nothing, at once');
  // Well-formed, but more than the status command holds.
  const flood = await dataRoot(t);
  const padded = JSON.stringify([failure]).padEnd(UNSAVED_FAILURES_MAX_BYTES + 1, ' ');
  await answering(t, flood, padded);
  t.same(await readUnsavedFailures(flood, 60_000), [], 'an answer over the cap is dropped');
  const full = await dataRoot(t);
  await answering(t, full, JSON.stringify([failure]).padEnd(UNSAVED_FAILURES_MAX_BYTES, ' '));
  t.same(await readUnsavedFailures(full, 60_000), [failure], 'an answer at the cap is read');
});
