import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import {
  readUnsavedFailures,
  serveUnsavedFailures,
  statusSocketOf,
} from '../../src/renewal/status-socket.js';
import { DataRoot } from '../../src/volume/data-root.js';
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
