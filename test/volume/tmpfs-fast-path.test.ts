// The node-local file work of one publish, on tmpfs (the data root in bind mode, /dev/shm
// here) and on the repo's disk: same files, but on tmpfs without fsync or thread pool.
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import t from 'tap';
import {
  DATA_LINK,
  isGenerationName,
  readAtomically,
  removeAtomicFiles,
  writeAtomically,
} from '../../src/fs/atomic-writer.js';
import { isOnTmpfs } from '../../src/fs/volatile-fs.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { readMetadata, writeMetadata } from '../../src/volume/metadata.js';
import {
  readPendingKey,
  removePendingKey,
  writePendingKey,
} from '../../src/volume/volume-secrets.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';
import { countFsRequests } from './fixtures/fs-request-counter.js';
import { spyOnFsync } from './fixtures/fsync-spy.js';

const SHM = '/dev/shm';
const ID = `csi-${'7e'.repeat(32)}`;
const GID = process.getuid?.() === 0 ? 2000 : (process.getgid?.() ?? 0);
const bytes = (s: string) => new TextEncoder().encode(s);

// Everything under dir with generation names made comparable.
async function snapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  const same = (name: string) =>
    name
      .split('/')
      .map((part) => (isGenerationName(part) ? '..GENERATION' : part))
      .join('/');
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path);
    const head = `${same(relative(dir, path))} ${(info.mode & 0o7777).toString(8)} ${info.gid}`;
    if (info.isSymbolicLink()) out.push(`${head} -> ${same(await readlink(path))}`);
    else if (info.isDirectory()) {
      out.push(`${head} dir`);
      for (const entry of await readdir(path)) await walk(join(path, entry));
    } else {
      const text = (await readFile(path, 'utf8'))
        .replaceAll(dir, '<base>')
        .replace(/"createdAt":"[^"]+"/, '');
      out.push(`${head} ${text}`);
    }
  };
  for (const entry of await readdir(dir)) await walk(join(dir, entry));
  return out.sort();
}

// What the volume layer does for one direct-mode publish (volume-manager's order).
async function publishFiles(base: string): Promise<void> {
  const root = new DataRoot(join(base, 'root'));
  const mounter = createMounter({ mode: 'direct', logger: recordingLogger() });
  const meta = {
    volumeId: ID,
    targetPath: join(base, 'target'),
    volumeContext: { 'csi.cert-manager.io/issuer-name': 'ca' },
  };
  await root.ensureVolume(ID, GID);
  await writeMetadata(root, meta);
  await writePendingKey(root, ID, 'KEY PEM');
  await writeMetadata(root, {
    ...meta,
    pendingRequest: { name: 'r', namespace: 'ns', createdAt: new Date().toISOString() },
  });
  await writeAtomically(
    root.dataDir(ID),
    { 'tls.crt': bytes('cert'), 'tls.key': bytes('key'), 'ca.crt': bytes('ca') },
    { gid: GID },
  );
  await writeMetadata(root, { ...meta, notAfter: '2030-01-01T00:00:00Z' });
  await removePendingKey(root, ID);
  await mounter.publish(root.dataDir(ID), meta.targetPath);
  await mounter.refresh(root.dataDir(ID), meta.targetPath, GID);
}

t.test('a publish on tmpfs: no fsync, no thread pool, the same files as on disk', async (t) => {
  const shm = await tempDir(t, 'cert-csi-fast-', SHM);
  if (!isOnTmpfs(shm)) {
    t.pass('needs /dev/shm on tmpfs', { skip: true });
    return;
  }
  const disk = t.testdir();
  const syncs = await spyOnFsync(t);
  // The data root is created on start, before any publish.
  await new DataRoot(join(shm, 'root')).ensure();
  const requests = countFsRequests(t);
  await publishFiles(shm);
  t.equal(requests.count, 0, 'all synchronous calls');
  t.equal(syncs.count, 0, 'no fsync on tmpfs');

  await new DataRoot(join(disk, 'root')).ensure();
  await publishFiles(disk);
  const afterDisk = syncs.count;
  t.ok(requests.count > 50, `on disk: thread-pool calls (${requests.count})`);
  t.ok(afterDisk >= 15, `every step fsynced on disk (${afterDisk})`);
  const onTmpfs = await snapshot(shm);
  t.same(onTmpfs, await snapshot(disk), 'same names, modes, groups and contents');
  t.ok(
    onTmpfs.some((line) => line.startsWith(`target/tls.key 777 `)),
    'mirrored to the target',
  );

  const root = new DataRoot(join(shm, 'root'));
  t.equal((await readMetadata(root, ID)).notAfter, '2030-01-01T00:00:00Z');
  t.equal(await readPendingKey(root, ID), undefined);
  const files = await readAtomically(join(shm, 'target'));
  t.same([...(files?.keys() ?? [])], ['ca.crt', 'tls.crt', 'tls.key']);
  t.ok(isGenerationName(await readlink(join(shm, 'target', DATA_LINK))));
  await removeAtomicFiles(join(shm, 'target'));
  t.same(await readdir(join(shm, 'target')), []);
  t.equal(await root.removeVolume(ID), true);
  t.equal(syncs.count, afterDisk, 'reads and removals on tmpfs: no fsync either');
});
