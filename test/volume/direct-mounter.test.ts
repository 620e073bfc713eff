import { mkdir, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  DATA_LINK,
  isGenerationName,
  readAtomically,
  writeAtomically,
} from '../../src/fs/atomic-writer.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { dataDirMode } from '../../src/volume/data-permissions.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

const isRoot = process.getuid?.() === 0;
const ID = 'vol-direct';
const bytes = (s: string) => new TextEncoder().encode(s);

async function setup(t: Test) {
  const dir = await tempDir(t);
  const logger = recordingLogger();
  const mounter = createMounter({ mode: 'direct', logger });
  const root = new DataRoot(join(dir, 'root'));
  await mounter.prepareDataRoot(root.root);
  await root.ensureVolume(ID);
  return { dir, logger, mounter, root, target: join(dir, 'pods', 'p', 'mount') };
}

t.test('prepareDataRoot creates the root 0700 and no mount', async (t) => {
  const { root, mounter } = await setup(t);
  t.equal(mounter.mode, 'direct');
  t.equal((await stat(root.root)).mode & 0o7777, 0o700);
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  t.notMatch(mounts, root.root);
});

t.test('publish mirrors the current files; refresh mirrors each new generation', async (t) => {
  const { root, mounter, target, logger } = await setup(t);
  const data = root.dataDir(ID);
  await mounter.publish(data, target);
  t.same(await readdir(target), [], 'nothing written yet: an empty target');
  await writeAtomically(data, { 'tls.crt': bytes('c1'), 'tls.key': bytes('k1') });
  await mounter.refresh(data, target);
  t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), 'c1');
  t.equal(await readFile(join(target, 'tls.key'), 'utf8'), 'k1');
  t.ok(isGenerationName(await readlink(join(target, DATA_LINK))));
  t.equal((await stat(target)).mode & 0o7777, dataDirMode());
  t.equal(logger.records.filter(([level]) => level === 'debug').length, 1);
  await mounter.refresh(data, target);
  t.equal(logger.records.filter(([level]) => level === 'debug').length, 1, 'unchanged: no write');
  await writeAtomically(data, { 'tls.crt': bytes('c2'), 'tls.key': bytes('k2') });
  await mounter.refresh(data, target);
  t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), 'c2');
  await mounter.publish(data, target);
  t.equal(await readFile(join(target, 'tls.key'), 'utf8'), 'k2', 'publish again is idempotent');
});

t.test('refreshes of one target that overlap leave it serving the newest files', async (t) => {
  // A republish mirrors the target while a renewal does: two writers of one dir, each removing
  // the generations but its own, would leave `..data` pointing at a removed one.
  const { root, mounter, target } = await setup(t);
  const data = root.dataDir(ID);
  await writeAtomically(data, { 'tls.crt': bytes('c0'), 'tls.key': bytes('k0') });
  await mounter.publish(data, target);
  for (let round = 1; round <= 10; round++) {
    await writeAtomically(data, { 'tls.crt': bytes(`c${round}`), 'tls.key': bytes(`k${round}`) });
    const refreshes = Array.from({ length: 4 }, () => mounter.refresh(data, target));
    await Promise.all(refreshes);
    const served = await readAtomically(target);
    t.same(
      served && Object.fromEntries([...served].map(([name, b]) => [name, b.toString()])),
      { 'tls.crt': `c${round}`, 'tls.key': `k${round}` },
      `round ${round}: the target serves the data dir's files`,
    );
  }
});

t.test('the data dir group (fs-group) follows the files to the target', async (t) => {
  const { root, mounter, target } = await setup(t);
  const data = root.dataDir(ID);
  const gid = isRoot ? 3000 : (process.getgid?.() ?? 0);
  await root.ensureVolume(ID, gid);
  await writeAtomically(data, { 'tls.crt': bytes('c') }, { gid });
  await mounter.publish(data, target);
  t.equal((await stat(join(target, 'tls.crt'))).gid, gid);
  t.equal((await stat(target)).gid, gid);
  await mounter.refresh(data, target, gid);
  t.equal((await stat(join(target, 'tls.crt'))).gid, gid);
});

t.test('refresh after unpublish writes nothing', async (t) => {
  const { root, mounter, target } = await setup(t);
  const data = root.dataDir(ID);
  await writeAtomically(data, { 'tls.crt': bytes('c') });
  await mounter.refresh(data, target);
  await t.rejects(stat(target), { code: 'ENOENT' }, 'never published: not created');
  await mounter.publish(data, target);
  await mounter.unpublish(data, target, true);
  await mounter.refresh(data, target);
  await t.rejects(stat(target), { code: 'ENOENT' }, 'unpublished: not recreated');
});

t.test('unpublish removes the mirror and the dir; foreign files keep the dir', async (t) => {
  const { root, mounter, target, logger } = await setup(t);
  const data = root.dataDir(ID);
  await writeAtomically(data, { 'tls.crt': bytes('c') });
  await mounter.unpublish(data, target, true);
  t.pass('a missing target is success');
  await mounter.publish(data, target);
  await mounter.unpublish(data, target, true);
  await t.rejects(stat(target), { code: 'ENOENT' });
  t.ok((await stat(join(target, '..'))).isDirectory(), 'the parent stays');
  await mounter.publish(data, target);
  await writeFile(join(target, 'app.log'), 'not ours');
  await mounter.unpublish(data, target, true);
  t.same(await readdir(target), ['app.log']);
  t.match(logger.records.at(-1), ['warn', { path: target }]);
});

t.test('errors name the path', async (t) => {
  const { dir, mounter, target } = await setup(t);
  await t.rejects(mounter.publish(join(dir, 'no-data'), target), {
    name: 'VolumeError',
    message: /cannot stat data dir .*no-data/,
  });
  await writeFile(join(dir, 'file'), '');
  await t.rejects(mounter.prepareDataRoot(join(dir, 'file', 'root')), {
    message: /cannot create data root/,
  });
  await t.rejects(mounter.unpublish(join(dir, 'no-data'), join(dir, 'file', 'target'), true), {
    message: /cannot stat target path .*ENOTDIR/,
  });
  await mkdir(join(dir, 'plain'));
  await t.rejects(mounter.refresh(join(dir, 'file'), join(dir, 'plain')), {
    message: /cannot read files from/,
  });
});

t.test('a target that is not ours to clean or a file is left alone', async (t) => {
  const { dir, root, mounter, target } = await setup(t);
  const data = root.dataDir(ID);
  await writeAtomically(data, { 'tls.crt': bytes('c') });
  await mounter.publish(data, target);
  await mounter.unpublish(data, target, false);
  t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), 'c', 'not owned: files stay');
  const file = join(dir, 'a-file');
  await writeFile(file, 'x');
  await mounter.refresh(data, file);
  await mounter.unpublish(data, file, true);
  t.equal(await readFile(file, 'utf8'), 'x', 'a file target is neither written nor removed');
});
