import * as fs from 'node:fs';
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { DataRoot } from '../../src/volume/data-root.js';
import {
  LEGACY_RENEW_DIR_NAME,
  LEGACY_STATUS_SOCKET_NAME,
  removeLegacyControlFiles,
} from '../../src/volume-manager/control/legacy-control-files.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { moduleFileUrl } from '../support/project-files.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

// What versions before the control socket left in the data root: `..renew` (request, result
// and progress files) and `..status.sock`.

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t, 'cert-csi-legacy-'), 'volumes'));
  await root.ensure();
  return root;
}

const messages = (logger: ReturnType<typeof recordingLogger>) =>
  logger.records.map(([level, , msg]) => `${level} ${msg}`);

t.test('the renew dir and status socket of an older version are removed', async (t) => {
  const root = await dataRoot(t);
  const dir = join(root.root, LEGACY_RENEW_DIR_NAME);
  await mkdir(dir, { mode: 0o700 });
  await writeFile(join(dir, 'a.request'), '{"all":true}');
  await writeFile(join(dir, 'b.request'), '{"volumeId":"csi-a"}');
  await writeFile(join(dir, 'c.result'), '{"ok":true,"renewed":[],"failed":[]}');
  await writeFile(join(dir, 'c.progress'), '{}');
  await writeFile(join(dir, '.d.result.tmp-0a1b'), '{}');
  const make = await oddFileMaker(t);
  const targets: string[] = [];
  for (const kind of ODD_KINDS.filter((k) => k !== 'directory')) {
    const target = await make(join(dir, `odd-${kind}.request`), kind, 'kept');
    if (target) targets.push(target);
  }
  await make(join(root.root, LEGACY_STATUS_SOCKET_NAME), 'socket');
  await root.ensureVolume('csi-a');
  const logger = recordingLogger();
  await removeLegacyControlFiles(root, logger);
  t.same(await readdir(root.root), ['csi-a'], 'both gone; the volume stays');
  for (const target of targets) t.ok(await lstat(target), `${target}: a link's target stays`);
  t.same(messages(logger), [
    'info removed the status socket of an older version',
    'info removed the renew request dir of an older version',
  ]);
  t.match(logger.records[1]?.[1], { droppedRequests: 2 + ODD_KINDS.length - 1 });
  await removeLegacyControlFiles(root, logger);
  t.equal(logger.records.length, 2, 'nothing to do the next time, and nothing said');
});

t.test('what an older version did not make is left as it is', async (t) => {
  const root = await dataRoot(t);
  const make = await oddFileMaker(t);
  // A directory in the renew dir: older versions made none.
  const dir = join(root.root, LEGACY_RENEW_DIR_NAME);
  await mkdir(join(dir, 'sub'), { recursive: true });
  await writeFile(join(dir, 'a.request'), '{}');
  await writeFile(join(root.root, LEGACY_STATUS_SOCKET_NAME), 'mine');
  const logger = recordingLogger();
  await removeLegacyControlFiles(root, logger);
  t.same(await readdir(dir), ['sub'], 'the files go, the directory stays');
  t.equal(await readFile(join(root.root, LEGACY_STATUS_SOCKET_NAME), 'utf8'), 'mine');
  t.same(messages(logger), [
    'warn not the status socket of an older version: left as it is',
    'warn cannot remove the renew request dir of an older version; nothing uses it',
  ]);
  t.match(logger.records[0]?.[1], { kind: 'a regular file' });
  t.match(logger.records[1]?.[1], { err: /ENOTEMPTY/ });

  // A link or a FIFO at the dir's name: never followed, never opened.
  for (const kind of ['link-to-fifo', 'fifo', 'link-to-file'] as const) {
    const other = await dataRoot(t);
    const path = join(other.root, LEGACY_RENEW_DIR_NAME);
    await make(path, kind);
    const before = await lstat(path);
    const quiet = recordingLogger();
    await removeLegacyControlFiles(other, quiet);
    t.equal((await lstat(path)).ino, before.ino, `${kind}: left`);
    t.same(messages(quiet), ['warn not the renew request dir of an older version: left as it is']);
  }
  // A link to a directory elsewhere: what is there stays.
  const elsewhere = await tempDir(t);
  await writeFile(join(elsewhere, 'x.request'), '{}');
  const linked = await dataRoot(t);
  fs.symlinkSync(elsewhere, join(linked.root, LEGACY_RENEW_DIR_NAME));
  await removeLegacyControlFiles(linked, recordingLogger());
  t.same(await readdir(elsewhere), ['x.request']);
});

t.test('a status socket that cannot be removed is logged, not fatal', async (t) => {
  const { removeLegacyControlFiles: removeMocked } = await t.mockImport<
    typeof import('../../src/volume-manager/control/legacy-control-files.js')
  >(moduleFileUrl('src/volume-manager/control/legacy-control-files.ts'), {
    'node:fs/promises': {
      ...fs.promises,
      unlink: async () => {
        throw Object.assign(new Error('EBUSY: resource busy'), { code: 'EBUSY' });
      },
    },
  });
  const root = await dataRoot(t);
  const make = await oddFileMaker(t);
  await make(join(root.root, LEGACY_STATUS_SOCKET_NAME), 'socket');
  const logger = recordingLogger();
  await removeMocked(root, logger);
  t.same(messages(logger), ['warn cannot remove the status socket of an older version']);
  t.ok((await lstat(join(root.root, LEGACY_STATUS_SOCKET_NAME))).isSocket());
});
